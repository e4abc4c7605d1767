"""``control-room doctor``'s vocabulary: a check, what it found, what it may repair.

A check is a small function from a ``Context`` (the room, its settings if CONTROL.md parses) to
its findings, one line each: ``OK``, ``WARN`` or ``FAIL``, with the fix in the line. A check may
have a repair, run by ``doctor --fix`` when one of its findings says it is ``fixable``: only what
is safe, each repair one ledger line (``doctor.py``). The checks themselves are in
``doctor_room.py`` (the room's files) and ``doctor_tools.py`` (adapters, git, the disk); the
registry, ``CHECKS``, in ``doctor.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from control_room.room.layout import Room
from control_room.room.settings import Settings

OK, WARN, FAIL = "OK", "WARN", "FAIL"
FIX = "control-room doctor --fix"  # the fix of what ``--fix`` repairs, at the start of its words


@dataclass
class Finding:
    check: str  # the check's name (``layout``), or for an adapter ``adapter NAME``
    status: str  # OK, WARN or FAIL
    detail: str  # what was found, paths relative to the room
    fix: str = ""  # what to do; "" when nothing is to be done
    fixable: bool = False  # ``doctor --fix`` repairs it
    fixed: bool = False  # ``doctor --fix`` repaired this check before it ran again

    def line(self) -> str:
        text = f"{self.status:<4} {self.check}  {self.detail}"
        return f"{text}; {self.fix}" if self.fix else text

    def as_json(self) -> dict[str, object]:
        return {
            "check": self.check,
            "status": self.status,
            "detail": self.detail,
            "fix": self.fix,
            "fixed": self.fixed,
        }


@dataclass
class Context:
    room: Room
    settings: Settings | None  # None when CONTROL.md is missing or invalid
    settings_error: str | None = None  # why it is, then
    hello: bool = False  # `--check`: a one-turn hello through each adapter
    timeout_s: float = 60.0  # of each hello


Run = Callable[[Context], list[Finding]]
Repair = Callable[[Context], list[str]]  # what it did, one line per ledger line


@dataclass(frozen=True)
class Check:
    name: str
    run: Run
    repair: Repair | None = None


def rel(room: Room, path: Path) -> str:
    """``path`` as the room's people see it: relative to the room when inside it."""
    try:
        return path.relative_to(room.root).as_posix()
    except ValueError:
        return str(path)


def short(room: Room, text: str) -> str:
    """A message of the library with the room's own paths made relative to it."""
    return text.replace(f"{room.root}/", "").removeprefix("room invalid: ")


def split_fix(text: str) -> tuple[str, str]:
    """A library message ``what; fix`` cut into its detail and its fix (at the last ``; ``)."""
    what, sep, fix = text.rpartition("; ")
    return (what, fix) if sep else (text, "")


def unchecked(name: str) -> Finding:
    """What a check that needs the settings says while CONTROL.md does not parse."""
    return Finding(name, WARN, "not checked: CONTROL.md does not parse (see the settings check)")
