"""``doctor``'s checks of the room's own files: its folders, CONTROL.md, the ledger, dead
claims, rejected files waiting for a person, the lenses the room and its queue name, the
tombstones. Each reuses the code the cycle runs (``preflight``,
``claims``, ``cycle.recover``, ``ledger.verify``), so doctor and a cycle never disagree."""

from __future__ import annotations

import os

from control_room import interrupt
from control_room.dispatch.doctor.finding import (
    FAIL,
    FIX,
    OK,
    WARN,
    Check,
    Context,
    Finding,
    rel,
    short,
    split_fix,
    unchecked,
)
from control_room.dispatch.round import claims
from control_room.dispatch.run import cycle, preflight
from control_room.errors import ControlRoomError
from control_room.knowledge import graveyard
from control_room.ledger import verify
from control_room.ledger.write import restore_header
from control_room.room import lenses as lens_files
from control_room.room import scaffold, swarm
from control_room.room.tasks import DEFAULT_ROLE
from control_room.words import count

# the files init writes that commands read (CONTROL.md and LEDGER.md have checks of their own)
NO_SLOT = -1  # doctor holds no slot: no claim's slot is "ours" (``claims.why_dead``)
_READ = ("control-room/ROUTES.md", "control-room/CURRENT_CONTEXT.md", "control-room/DIGEST.md")


def _listed(names: list[str], most: int = 5) -> str:
    more = f" and {len(names) - most} more" if len(names) > most else ""
    return ", ".join(names[:most]) + more


def layout(ctx: Context) -> list[Finding]:
    """Every folder init makes (``scaffold.plan``) is there, and those a cycle writes in
    (``preflight.needed_dirs``) are writable; the files commands read are there."""
    room = ctx.room
    needed = set(preflight.needed_dirs(room, repo=bool(ctx.settings and ctx.settings.repo)))
    plan = scaffold.plan()
    folders = [room.root / item.rel for item in plan if item.is_dir]
    out: list[Finding] = []
    missing = [f for f in folders if not os.path.lexists(f)]
    in_the_way = [f for f in folders if os.path.lexists(f) and not f.is_dir()]
    locked = [f for f in folders if f in needed and f.is_dir() and preflight.folder_fault(f)]
    if missing:
        names = [rel(room, f) + "/" for f in missing]
        cycles = any(f in needed for f in missing)
        out.append(
            Finding(
                "layout",
                FAIL if cycles else WARN,
                f"{_listed(names)} {'is' if len(names) == 1 else 'are'} missing",
                f"{FIX} recreates {'it' if len(names) == 1 else 'them'} (as `control-room init` does)",
                fixable=True,
            )
        )
    for f in in_the_way:
        out.append(
            Finding(
                "layout",
                FAIL,
                f"{rel(room, f)} is a file where the room needs a folder",
                f"move it away, then {FIX} recreates the folder",
            )
        )
    for f in locked:
        out.append(
            Finding(
                "layout", FAIL, f"{rel(room, f)}/ is not writable", "give this user write permission on it"
            )
        )
    files = [*_READ, f"agents/{DEFAULT_ROLE}.md"]
    gone = [name for name in files if not (room.root / name).is_file()]
    if gone:
        out.append(
            Finding(
                "layout",
                WARN,
                f"{_listed(gone)} {'is' if len(gone) == 1 else 'are'} missing",
                "`control-room init` writes missing files again (it never replaces one)",
            )
        )
    if not out:
        what = f"all {len(folders)} folders of a room are there; the cycle's are writable"
        out.append(Finding("layout", OK, what))
    return out


def make_folders(ctx: Context) -> list[str]:
    """Recreate the missing folders of ``scaffold.plan``, as init does (nothing else)."""
    made = []
    for item in scaffold.plan():
        path = ctx.room.root / item.rel
        if item.is_dir and not os.path.lexists(path):
            path.mkdir(parents=True, exist_ok=True)
            made.append(item.rel + "/")
    return [f"recreated {_listed(made, 20)}"] if made else []


def settings(ctx: Context) -> list[Finding]:
    """CONTROL.md parses, its values have the right types, and its work dir exists (the adapters
    it names are the adapters check's)."""
    room = ctx.room
    if ctx.settings is None:
        what, fix = split_fix(short(room, ctx.settings_error or "CONTROL.md cannot be read"))
        if "restore it" not in fix:
            what, fix = short(room, ctx.settings_error or ""), "fix it in control-room/CONTROL.md"
        return [Finding("settings", FAIL, what, fix)]
    if not ctx.settings.repo:
        wd = preflight.workdir(room, ctx.settings)
        if not wd.is_dir():
            return [
                Finding(
                    "settings",
                    FAIL,
                    f"CONTROL.md: workdir {wd} does not exist",
                    "create it or fix workdir in control-room/CONTROL.md",
                )
            ]
    return [Finding("settings", OK, "control-room/CONTROL.md parses and its values are valid")]


def ledger(ctx: Context) -> list[Finding]:
    """LEDGER.md is there with its header and writable (``preflight.ledger_fault``), and its
    hash chain holds (``ledger.verify.check``, the incremental check ``status`` makes)."""
    room = ctx.room
    name = rel(room, room.ledger)
    fault = preflight.ledger_fault(room.ledger)
    if fault == "missing":
        fix = "restore it (git checkout), or `control-room init` starts a new one"
        return [Finding("ledger", FAIL, f"{name} is missing", fix)]
    if fault in ("empty", "without its header"):
        what = f"{name} is empty" if fault == "empty" else f"{name} has no table header"
        return [Finding("ledger", FAIL, what, f"{FIX} restores it", fixable=True)]
    if fault is not None and fault.startswith("unreadable"):
        return [Finding("ledger", FAIL, f"{name} is {fault}", "fix its permissions")]
    if fault == "a link":  # never written through: an agent's run may have linked it out of the room
        fix = "put the room's own ledger in its place"
        return [Finding("ledger", FAIL, f"{name} is a link (to {os.readlink(room.ledger)})", fix)]
    out = []
    if fault == "not writable":
        fix = "give this user write permission on it"
        out.append(Finding("ledger", FAIL, f"{name} is not writable", fix))
    chain = verify.check(room.ledger, room.cache / "ledger-chain")
    if chain.bad:
        first = chain.first[0]
        out.append(
            Finding(
                "ledger",
                FAIL,
                f"{name} has {count(chain.bad, 'bad line')} (line {first.line}: {first.kind}, {first.why})",
                "`control-room ledger verify` lists them; restore the ledger from git",
            )
        )
    elif chain.torn_tail:
        out.append(
            Finding(
                "ledger",
                WARN,
                f"the last line of {name} has no newline (being written, or torn)",
                "`control-room ledger verify` says which",
            )
        )
    if not out:
        out.append(Finding("ledger", OK, f"{name} has its header; its hash chain holds"))
    return out


def restore(ctx: Context) -> list[str]:
    """Put the ledger's table header back, every line kept (what ``init`` does)."""
    rows = restore_header(ctx.room.ledger)
    if rows is None:
        return []
    name = rel(ctx.room, ctx.room.ledger)
    return [f"put the table header back into {name}, above its {count(rows, 'line')}"]


def _dead(ctx: Context) -> list[tuple[str, str]]:
    assert ctx.settings is not None
    found = []
    for tid in claims.running_ids(ctx.room):
        why = claims.why_dead(ctx.room, claims.read_claim(ctx.room, tid), ctx.settings.grace_s, mine=NO_SLOT)
        if why is not None:
            found.append((tid, why))
    return found


def dead_claims(ctx: Context) -> list[Finding]:
    """Tasks in swarm/running/ whose cycle is gone: what the next cycle's ``recover`` takes."""
    if ctx.settings is None:
        return [unchecked("claims")]
    dead = _dead(ctx)
    if dead:
        return [
            Finding(
                "claims",
                WARN,
                f"{count(len(dead), 'dead claim')} in swarm/running/: "
                + "; ".join(f"{tid} ({why})" for tid, why in dead),
                f"{FIX} recovers {'it' if len(dead) == 1 else 'them'} as the next cycle would",
                fixable=True,
            )
        ]
    running = len(claims.running_ids(ctx.room))
    return [Finding("claims", OK, f"no dead claims ({count(running, 'task')} running)")]


def recover(ctx: Context) -> list[str]:
    """What a cycle does before it picks (``cycle.recover``), under the claim lock."""
    assert ctx.settings is not None
    with interrupt.deferred(), claims.claim_lock(ctx.room):
        return cycle.recover(ctx.room, ctx.settings, mine=NO_SLOT)


def rejected(ctx: Context) -> list[Finding]:
    """Files in swarm/rejected/ wait for a person."""
    n = ctx.room.counts()["rejected"]
    if n:
        return [
            Finding(
                "rejected",
                WARN,
                f"{count(n, 'rejected file')} waiting in swarm/rejected/",
                "`control-room task list --state rejected` says why; "
                "then `task retry ID` or `task cancel ID`",
            )
        ]
    return [Finding("rejected", OK, "no rejected files waiting")]


def lenses(ctx: Context) -> list[Finding]:
    """Every lens CONTROL.md ``review`` names reads (what ``preflight`` checks before a cycle
    claims), and so does every lens a queued task's ``review`` names, or a queued review or
    arbiter task's ``lens`` (a cycle would reject it)."""
    room = ctx.room
    out = []
    if ctx.settings is not None:
        fault = preflight.lens_fault(room, ctx.settings)
        if fault is not None:
            what, fix = split_fix(short(room, fault))
            out.append(Finding("lenses", FAIL, what, fix))
    tasks = 0
    for path in sorted(room.state_dir("queue").glob("*.json")):
        task, problems = swarm.read_task(path)
        wanted = [*task.get("review", []), *([str(task["lens"])] if task.get("lens") else [])]
        if problems or not wanted:
            continue
        tasks += 1
        for name in wanted:
            try:
                lens_files.read(room, name)
            except ControlRoomError as exc:
                key = "review" if name in task.get("review", []) else "lens"
                what = f"{rel(room, path)}: {key}: {short(room, str(exc))}"
                fix = "name a lens that exists in its review (or `task cancel` it), or add the lens's file"
                out.append(Finding("lenses", FAIL, what, fix))
    if not out:
        named = len(preflight.review_lenses(ctx.settings)) if ctx.settings is not None else 0
        what = (
            f"every lens named reads ({count(named, 'lens', 'lenses')} in CONTROL.md review; "
            f"{count(tasks, 'queued task')} naming some)"
            if named or tasks
            else "no lens is named (CONTROL.md review is empty; no queued task names one)"
        )
        out.append(Finding("lenses", OK, what))
    return out


def tombstones(ctx: Context) -> list[Finding]:
    """Every tombstone in graveyard/ reads back (its front matter parses): one that does not is
    read by no ``route reopen``, ``route kill`` or ``task add`` on its route."""
    room = ctx.room
    found = graveyard.tombstones(room)
    out = [
        Finding(
            "graveyard",
            FAIL,
            short(room, str(t["problem"])),
            "fix its front matter (valid YAML between the --- lines) or move it away",
        )
        for t in found
        if t.get("state") == "unreadable"
    ]
    if not out:
        what = f"{count(len(found), 'tombstone')} in graveyard/, each reads back"
        what = what if found else "no tombstones in graveyard/"
        out.append(Finding("graveyard", OK, what))
    return out


CHECKS = (
    Check("layout", layout, make_folders),
    Check("settings", settings),
    Check("ledger", ledger, restore),
    Check("claims", dead_claims, recover),
    Check("rejected", rejected),
    Check("lenses", lenses),
    Check("graveyard", tombstones),
)
