"""Before a cycle claims anything: can this room run a cycle at all? (SPEC §15)

A fault of the room (CONTROL.md, permissions, the disk, the work dir, an adapter CONTROL.md
names) must never cost a task a round, and a task must never be rejected for it. So the cycle
checks what it needs first, and on a fault claims nothing: one line naming the file and the
fix, the ``ROOM_INVALID`` exit code, the queue as it was.

Each check is a stat or an ``access`` call (no file is read but the ledger, up to its header,
and the lenses CONTROL.md ``review`` names, from their cache): together well under a millisecond.
"""

from __future__ import annotations

import os
from pathlib import Path

from control_room.errors import ControlRoomError, RoomInvalidError
from control_room.ledger.read import has_header
from control_room.room.layout import MERGE_STATES, SWARM_DIRS, Room
from control_room.room.settings import Settings
from control_room.store import lock


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
    why = lens_fault(room, settings)
    if why is not None:
        return why
    for folder in needed_dirs(room, repo=bool(settings.repo)):
        why = _writable_dir(room, folder)
        if why is not None:
            return why
    why = _ledger(room.ledger)
    if why is not None:
        return why
    disk = os.statvfs(room.root)  # (what shutil.disk_usage says, without loading shutil)
    free = disk.f_bavail * disk.f_frsize
    need = settings.min_free_mb * 2**20
    if free < need:
        return (
            f"{room.root}: {free / 2**20:.1f} MiB free on its disk, below CONTROL.md min_free_mb "
            f"{settings.min_free_mb}; free some space"
        )
    if settings.repo:  # agents work in the route's worktree of the repo (dispatch/worktrees/worktree.py)
        from control_room.dispatch.worktrees import worktree  # runs git: only for a room with a repo

        return worktree.check(room, settings)
    wd = workdir(room, settings)
    if not wd.is_dir():
        return f"{room.control}: workdir {wd} does not exist; create it or fix workdir in CONTROL.md"
    return None


def review_lenses(settings: Settings) -> list[str]:
    """Every lens CONTROL.md ``review`` names (a list, or per route), each once, in order."""
    wanted = settings.review
    lists = wanted.values() if isinstance(wanted, dict) else [wanted]
    return list(dict.fromkeys(str(name) for names in lists for name in names))


def lens_fault(room: Room, settings: Settings) -> str | None:
    """A lens CONTROL.md ``review`` names that has no file or cannot be read: the room's fault,
    found before a task is claimed (else every cycle would claim a task and put it back).
    (Shared with ``doctor``.)"""
    names = review_lenses(settings)
    if not names:
        return None
    from control_room.room import lenses  # front matter of agents/lenses/: only for a room naming some

    for name in names:
        try:
            lenses.read(room, name)
        except ControlRoomError as exc:
            return f"{room.control}: review: {exc}; fix review in CONTROL.md or the lens's file"
    return None


def needed_dirs(room: Room, *, repo: bool) -> list[Path]:
    """The folders a cycle writes in: ``control-room/`` and the ``swarm/`` state folders (with
    CONTROL.md ``repo``, the merge queue's too). (Shared with ``doctor``.)"""
    # passed/ and to-test/ hold tasks only with a repo (the merge queue): a room made before they
    # existed needs them only then
    wanted = SWARM_DIRS if repo else tuple(d for d in SWARM_DIRS if d not in MERGE_STATES)
    return [room.cr, *(room.swarm / d for d in wanted)]


def folder_fault(folder: Path) -> str | None:
    """``missing`` or ``not writable`` (what stops a cycle from using ``folder``), or None.
    (Shared with ``doctor``, which words the fix its own way.)"""
    if not folder.is_dir():
        return "missing"
    if not os.access(folder, os.W_OK | os.X_OK):
        return "not writable"
    return None


def _writable_dir(room: Room, folder: Path) -> str | None:
    fault = folder_fault(folder)
    if fault == "missing":
        return f"{folder} is missing; `control-room init {room.root}` restores the room's folders"
    if fault is not None:
        return f"{folder} is not writable; give this user write permission on it"
    return None


def ledger_fault(path: Path) -> str | None:
    """What stops a cycle from writing the ledger at ``path``: ``missing``, ``a link`` (never
    written through: ``lock.refused_link``), ``empty``, ``without its header``, ``unreadable
    (<reason>)`` or ``not writable``; or None. (Shared with ``doctor``.)"""
    if path.is_symlink():
        return "a link"
    try:
        empty = path.stat().st_size == 0
        whole = not empty and has_header(path)  # reads up to the header: a few hundred bytes
    except FileNotFoundError:
        return "missing"
    except OSError as exc:
        return f"unreadable ({exc.strerror})"
    if not whole:
        return "empty" if empty else "without its header"
    if not os.access(path, os.W_OK):
        return "not writable"
    return None


def _ledger(path: Path) -> str | None:
    fault = ledger_fault(path)
    if fault is None:
        return None
    if fault == "missing":
        return f"{path} is missing; restore it (git checkout) or `control-room init` starts a new one"
    if fault == "a link":
        return str(lock.refused_link(path))
    if fault.startswith("unreadable"):
        return f"{path} cannot be read ({fault[len('unreadable (') : -1]}); fix its permissions"
    if fault == "not writable":
        return f"{path} is not writable; give this user write permission on it"
    return f"{path} is {fault}; restore it (git checkout), or `control-room init` restores the header"
