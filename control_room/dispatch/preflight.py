"""Before a cycle claims anything: can this room run a cycle at all? (SPEC §15)

A fault of the room (CONTROL.md, permissions, the disk, the work dir, an adapter CONTROL.md
names) must never cost a task a round, and a task must never be rejected for it. So the cycle
checks what it needs first, and on a fault claims nothing: one line naming the file and the
fix, the ``ROOM_INVALID`` exit code, the queue as it was.

Each check is a stat or an ``access`` call (no file is read but the ledger, up to its header):
together well under a millisecond.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from control_room.errors import ControlRoomError, RoomInvalidError
from control_room.ledger.read import has_header
from control_room.room.layout import MERGE_STATES, SWARM_DIRS, Room
from control_room.room.settings import Settings


def workdir(room: Room, settings: Settings) -> Path:
    """Where agents and validators run: CONTROL.md ``workdir``, relative to the room."""
    return (room.root / str(settings.workdir or ".")).resolve()


def check(room: Room, settings: Settings) -> None:
    """Raise ``RoomInvalidError`` naming the first thing that stops this room from running a
    cycle, and how to fix it."""
    why = _first_fault(room, settings)
    if why is not None:
        raise RoomInvalidError(f"room invalid: {why}; nothing was claimed")


def _first_fault(room: Room, settings: Settings) -> str | None:
    from control_room import adapters  # the registry: a dict lookup, plugins only for other names
    from control_room.adapters.base import Setup  # loaded with the registry, just above

    if not adapters.known(settings.default_adapter):
        return (
            f"{room.control}: default_adapter {settings.default_adapter!r} is not an adapter "
            f"(known: {', '.join(adapters.names())}); fix it in CONTROL.md"
        )
    for name, entry in settings.adapters.items():
        if not adapters.known(name):
            return (
                f"{room.control}: adapters names {name!r}, which is not an adapter "
                f"(known: {', '.join(adapters.names())}); fix it in CONTROL.md"
            )
        try:
            setup = Setup(**{k: v for k, v in (entry or {}).items() if v is not None})
            problem = adapters.get(name).check(setup)
        except ControlRoomError as exc:  # a broken plugin
            problem = str(exc)
        if problem is not None:
            return f"{room.control}: adapters.{name}: {problem}; fix it in CONTROL.md"
    # passed/ and to-test/ hold tasks only with a repo (the merge queue): a room made before they
    # existed needs them only then
    wanted = SWARM_DIRS if settings.repo else tuple(d for d in SWARM_DIRS if d not in MERGE_STATES)
    for folder in (room.cr, *(room.swarm / d for d in wanted)):
        why = _writable_dir(room, folder)
        if why is not None:
            return why
    why = _ledger(room.ledger)
    if why is not None:
        return why
    free = shutil.disk_usage(room.root).free
    need = settings.min_free_mb * 2**20
    if free < need:
        return (
            f"{room.root}: {free / 2**20:.1f} MiB free on its disk, below CONTROL.md min_free_mb "
            f"{settings.min_free_mb}; free some space"
        )
    if settings.repo:  # agents work in the route's worktree of the repo (dispatch/worktrees.py)
        from control_room.dispatch import worktrees  # runs git: only for a room with a repo

        return worktrees.check(room, settings)
    wd = workdir(room, settings)
    if not wd.is_dir():
        return f"{room.control}: workdir {wd} does not exist; create it or fix workdir in CONTROL.md"
    return None


def _writable_dir(room: Room, folder: Path) -> str | None:
    if not folder.is_dir():
        return f"{folder} is missing; `control-room init {room.root}` restores the room's folders"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"{folder} is not writable; give this user write permission on it"
    return None


def _ledger(path: Path) -> str | None:
    try:
        empty = path.stat().st_size == 0
        whole = not empty and has_header(path)  # reads up to the header: a few hundred bytes
    except FileNotFoundError:
        return f"{path} is missing; restore it (git checkout) or `control-room init` starts a new one"
    except OSError as exc:
        return f"{path} cannot be read ({exc.strerror}); fix its permissions"
    if not whole:
        what = "empty" if empty else "without its header"
        return f"{path} is {what}; restore it (git checkout), or `control-room init` restores the header"
    if not os.access(path, os.W_OK):
        return f"{path} is not writable; give this user write permission on it"
    return None
