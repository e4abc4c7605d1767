"""``control-room doctor [--fix] [--check]``: is this room fit to run, and if not, what to do
(SPEC §9-10). One line per finding, ``OK``, ``WARN`` or ``FAIL``, with the fix in the line.

``CHECKS`` is the registry: each entry a name, a function from a ``Context`` to its findings,
and, for what is safe to repair, a repair. A new check is one function (``doctor_base``'s
types) and one entry here. ``--fix`` runs the repair of each check that found something
``fixable`` (only: missing folders, the ledger's header, dead claims, dead worktrees), writes
one ``doctor-fix`` ledger line per repair, and runs those checks again; nothing else is touched.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from control_room import errors, ledger
from control_room.dispatch.doctor import reviewers, room_files, shared_room, tools
from control_room.dispatch.doctor.finding import FAIL, OK, Check, Context, Finding
from control_room.ledger import events
from control_room.room import settings as settings_file
from control_room.room.layout import Room

CHECKS: tuple[Check, ...] = (*room_files.CHECKS, *tools.CHECKS, *reviewers.CHECKS, *shared_room.CHECKS)


@dataclass
class Diagnosis:
    findings: list[Finding]
    repairs: list[str] = field(default_factory=list)  # "<check>: what was done", in order

    @property
    def failed(self) -> bool:
        return any(f.status == FAIL for f in self.findings)


def context(room: Room, *, hello: bool = False, timeout_s: float = 60.0) -> Context:
    """The room and its settings; a CONTROL.md that does not parse is the settings check's FAIL."""
    try:
        return Context(room, settings_file.load(room), None, hello, timeout_s)
    except errors.InvalidError as exc:
        return Context(room, None, str(exc), hello, timeout_s)


def examine(ctx: Context, checks: tuple[Check, ...] = CHECKS) -> list[tuple[Check, list[Finding]]]:
    """Every check's findings. A check that cannot run (a file it reads is broken or in the
    way) is one FAIL of its own, so the checks after it still run: another of them may name
    the cause (``agents`` a file where a folder belongs fails the adapters and the layout)."""
    return [(c, _run(c, ctx)) for c in checks]


def _run(check: Check, ctx: Context) -> list[Finding]:
    try:
        return check.run(ctx)
    except errors.ControlRoomError as exc:
        return [Finding(check.name, FAIL, f"could not check: {exc}")]
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        return [Finding(check.name, FAIL, f"could not check: {where}{exc.strerror or exc}")]


def diagnose(
    room: Room,
    *,
    fix: bool = False,
    hello: bool = False,
    timeout_s: float = 60.0,
    say: Callable[[str], None] | None = None,
) -> Diagnosis:
    """Run every check; with ``fix``, repair what is safe and run the repaired checks again (a
    hello, with ``hello``, is said once). ``say`` hears each repair as it is done."""
    ctx = context(room, hello=hello, timeout_s=timeout_s)
    found = examine(ctx)
    if not fix:
        return Diagnosis([f for _, fs in found for f in fs])
    repairs: list[str] = []
    repaired: set[str] = set()
    # the ledger's header first: every other repair writes a line below it
    for c, fs in sorted(found, key=lambda cf: cf[0].name != "ledger"):
        if c.repair is None or not any(f.fixable and f.status != OK for f in fs):
            continue
        for line in _repair(room, ctx, c):
            repairs.append(line)
            if say is not None:
                say(line)
        repaired.add(c.name)
    if not repaired:
        return Diagnosis([f for _, fs in found for f in fs], repairs)
    ctx = context(room, hello=False, timeout_s=timeout_s)
    again = []
    for c, fs in found:
        if c.name in repaired:
            fs = c.run(ctx)
            for f in fs:
                f.fixed = True
        again += fs
    return Diagnosis(again, repairs)


def _repair(room: Room, ctx: Context, c: Check) -> list[str]:
    """Run one check's repair; one ``doctor-fix`` line per thing done (or the one it failed on)."""
    assert c.repair is not None
    try:
        done, outcome = c.repair(ctx), "fixed"
    except (errors.ControlRoomError, OSError) as exc:
        where = f"{exc.filename}: " if isinstance(exc, OSError) and exc.filename else ""
        what = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        done, outcome = [f"could not repair: {where}{what}"], "failed"
    said = []
    for line in done:
        text = f"{c.name}: {line}"
        try:
            ledger.append(room.ledger, events.DOCTOR_FIX, outcome=outcome, detail=text)
        except (errors.ControlRoomError, OSError) as exc:
            text += f" (its ledger line could not be written: {exc})"
        said.append(text)
    return said
