"""Folding a big ledger's older history into the derived states, in a process of its own.

A first command on a big ledger folds only its recent lines (``ledger.follow``): it answers at
once, and leaves the older history to ``control-room ledger fold``, which its edge starts in the
background (``start``: detached, at low priority, at most one per room: it holds
``.cache/fold.lock``), as git starts its own ``gc --auto``. The command names the states it left
recent only, and the fold makes each of them whole on disk, where the next command that reads
it takes it up (a dashboard build keeps its states in memory and adopts them from disk); it
writes the default dashboard's numbered ledger pages too, so no build has to. A person may run
``ledger fold`` in the foreground; nothing is lost if it is killed (the next command starts it
again, from where its checkpoints got to).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from control_room.knowledge import history, scorecard
from control_room.ledger import stats
from control_room.room.layout import Room
from control_room.store import cache, lock
from control_room.views.dashboard import fold as dashboard_fold

LOCK = "fold.lock"

# Each derived state a window can leave partial: its checkpoint's name in .cache, and how to
# bring it up whole.
STATES: tuple[tuple[str, Callable[[Room], Any]], ...] = (
    ("ledger-summary", lambda room: stats.summary(room.ledger, room.cache / "ledger-summary", whole=True)),
    ("digest", lambda room: history.state(room, whole=True)),
    ("death-loops", lambda room: history.trouble(room, whole=True)),
    ("scorecard", lambda room: scorecard.state(room, whole=True)),
    ("dashboard", lambda room: dashboard_fold.state(room, whole=True)),
    ("ledger-tokens", lambda room: stats.tokens(room.ledger, room.cache / "ledger-tokens", whole=True)),
)


def behind(room: Room) -> list[str]:
    """The checkpoints of ``room`` that hold recent history only."""
    out = []
    for name, _ in STATES:
        st = cache.load(room.cache / name)
        if isinstance(st, dict) and st.get("from"):
            out.append(name)
    return out


def run(room: Room, names: list[str] | None = None) -> list[str] | None:
    """Bring the states ``names`` (default: every partial one on disk) of ``room`` whole; the
    names folded, or None when another fold holds the lock (it does the work)."""
    room.cache.mkdir(parents=True, exist_ok=True)
    fd = lock.take(room.cache / LOCK)
    if fd is None:
        return None
    try:
        todo = behind(room) if names is None else [n for n, _ in STATES if n in names]
        for name, whole in STATES:
            if name in todo:
                whole(room)
        # http.server and more (~15 ms): for the fold only, not for `start` at a command's edge
        from control_room.views.dashboard import site

        out = site.default_out(room)
        if "dashboard" in todo and (out / ".state").exists():
            site.build(room, out)  # its numbered ledger pages, all of them, here rather than in a build
        return todo
    finally:
        os.close(fd)


def start(cache_dir: Path, names: set[str]) -> bool:
    """Start ``ledger fold`` of the states ``names`` for the room whose cache is ``cache_dir``,
    detached, unless one is running; whether one was started."""
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)  # a dashboard build saves none of its own
        if not lock.is_free(cache_dir / LOCK):
            return False
    except OSError:
        return False  # a cache that cannot be locked (read-only disk): the states stay recent
    root = cache_dir.parent.parent
    argv = [sys.executable, "-m", "control_room", "--room", str(root), "ledger", "fold", "--background"]
    argv += ["--only", ",".join(sorted(names))]
    try:
        subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        return False
    return True
