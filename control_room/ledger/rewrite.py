"""LEDGER.md rewritten by another program while control-room appends to it: git's merge in a
shared room (``dispatch/shared/sync.py``) unlinks the file and writes a new one in its place.

``held(path)`` holds the append lock of the file ``path`` names (``ledger.write``): appenders
holding a descriptor of it wait, then find the file replaced and open the new one. That leaves
a process opening the ledger afresh (its first line) while git works: it may find no file, or
git's new one not written yet, which git then writes over. So a rewrite (``rewriting=True``)
also holds ``.ledger-rewrite.lock`` beside the ledger, and a fresh descriptor is used only once
its append lock is held and that lock is free (``settled``); else the appender waits for the
rewrite to end and opens the file again. A rewriter that dies lets go of both locks with it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from control_room.store import lock

REWRITE_LOCK = ".ledger-rewrite.lock"  # beside LEDGER.md; git-ignored (.*.lock)


@contextlib.contextmanager
def held(path: Path, rewriting: bool = False) -> Iterator[None]:
    """The ledger's append lock for a ``with`` block (nothing without a ledger) and, when
    another program will rewrite the file in the block, the rewrite lock. Not for a block that
    appends: it would wait for itself."""
    try:
        fd = lock.open_no_link(path, os.O_RDONLY)
    except FileNotFoundError:
        yield
        return
    try:
        lock.hold(fd, path)
        if not rewriting:
            yield
            return
        with lock.held(path.parent / REWRITE_LOCK):
            yield
    finally:
        os.close(fd)


def settled(path: Path) -> bool:
    """Whether no rewrite of the ledger at ``path`` goes on; if one did, False once it ended
    (the caller opens the file again: the one it had may be gone, or written over)."""
    try:
        fd = os.open(path.parent / REWRITE_LOCK, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return True  # none was ever taken here (or a link, which no rewriter of ours made)
    try:
        return lock.waited_out(fd)
    finally:
        os.close(fd)
