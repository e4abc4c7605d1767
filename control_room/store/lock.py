"""Every lock control-room takes, in one place: ``flock`` on POSIX, filelock where it is missing.

- ``hold(fd)``: wait until the lock on an open file is ours (a ledger append, the claim lock);
- ``take(path)``: a lock file taken only if it is free now, kept until its descriptor is closed
  (a cycle's slot: the kernel frees it when the process dies, however it dies);
- ``sibling(path)``: the hidden ``.NAME.lock`` beside a file, polled until a timeout, then a
  ``ConflictError`` (read-modify-write of a markdown file).

``flock`` locks belong to an open file: closing the descriptor releases them. Where ``fcntl``
is missing (Windows), ``sibling`` uses the filelock package and the other two refuse, since
the ledger and the slots need POSIX semantics (a lock that dies with its process).
"""

from __future__ import annotations

import contextlib
import errno
import os
import time
from collections.abc import Iterator
from pathlib import Path

from control_room.errors import ConflictError, ControlRoomError, RoomInvalidError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

TIMEOUT_S = 30.0
POLL_S = 0.005


def _posix(what: Path) -> None:
    if fcntl is None:  # pragma: no cover - Windows
        raise ControlRoomError(f"{what}: this lock needs POSIX file locks (fcntl)")


def open_lock_file(path: Path, guards: Path | None = None) -> int:
    """Open (creating it) lock file ``path``, never through a link (``refused_link``). A
    refusal (an ``OSError`` still) names what a person knows: the file the lock ``guards``,
    else the folder the lock lives in; never the hidden lock file itself."""
    try:
        return open_no_link(path, os.O_RDWR | os.O_CREAT)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, str(guards or path.parent)) from None


def open_no_link(path: Path, flags: int) -> int:
    """``os.open`` of a file control-room locks (a lock file, the ledger), never through a
    link: one there is ``refused_link``."""
    try:
        return os.open(path, flags | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise refused_link(path) from None
        raise


def refused_link(path: Path) -> RoomInvalidError:
    """The one error for a file control-room writes in place (the ledger, a lock file) found to
    be a link: an agent's run may have planted it, pointing out of the room, so it is never
    followed, and a person puts the room's own file back."""
    try:
        target = os.readlink(path)
    except OSError:
        target = "?"
    return RoomInvalidError(
        f"{path} is a link (to {target}), not a file of the room: control-room never writes through "
        "one; put the room's own file in its place (an agent's run may have moved it)"
    )


def hold(fd: int, what: Path) -> None:
    """Block until the exclusive lock on ``fd`` is ours; it lasts until ``fd`` is closed."""
    if fcntl is None:  # pragma: no cover - Windows
        _posix(what)
    fcntl.flock(fd, fcntl.LOCK_EX)


def release(fd: int) -> None:
    """Give up the lock ``hold`` took on ``fd``, keeping ``fd`` open (a descriptor kept for the
    next lock: the ledger's appends)."""
    fcntl.flock(fd, fcntl.LOCK_UN)


def try_hold(fd: int) -> bool:
    """Take the exclusive lock on ``fd`` if nobody holds it; never waits."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def waited_out(fd: int) -> bool:
    """Whether nobody held the exclusive lock on ``fd``; if somebody did, after waiting until
    it was let go (a shared lock, taken and given back)."""
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        free = True
    except OSError:
        fcntl.flock(fd, fcntl.LOCK_SH)
        free = False
    fcntl.flock(fd, fcntl.LOCK_UN)
    return free


def take(path: Path) -> int | None:
    """The descriptor of lock file ``path``, locked, if it was free; else None."""
    _posix(path)
    fd = open_lock_file(path)
    if try_hold(fd):
        return fd
    os.close(fd)
    return None


def is_free(path: Path) -> bool:
    """Whether nobody holds lock file ``path`` (tested by taking it for an instant)."""
    try:
        fd = take(path)
    except OSError:
        return False
    if fd is None:
        return False
    os.close(fd)
    return True


@contextlib.contextmanager
def held(path: Path) -> Iterator[None]:
    """Hold lock file ``path`` for the ``with`` block, waiting as long as it takes."""
    fd = open_lock_file(path)
    try:
        hold(fd, path)
        yield
    finally:
        os.close(fd)


@contextlib.contextmanager
def sibling(path: Path, timeout: float = TIMEOUT_S) -> Iterator[None]:
    """Hold the hidden sibling lock ``.NAME.lock`` of ``path``, polling for up to ``timeout``.

    This is what filelock's UnixFileLock does, without its ~20 ms import on every command.
    """
    lock_path = path.parent / f".{path.name}.lock"
    busy = ConflictError(f"{path}: another control-room process holds its lock (waited {timeout:.0f}s)")
    if fcntl is None:  # pragma: no cover - Windows
        from filelock import FileLock, Timeout  # only where fcntl is missing

        lock = FileLock(str(lock_path), timeout=timeout)
        try:
            lock.acquire(poll_interval=0.01)
        except Timeout:
            raise busy from None
        try:
            yield
        finally:
            lock.release()
        return
    fd = open_lock_file(lock_path, guards=path)
    try:
        deadline = time.monotonic() + timeout
        while not try_hold(fd):
            if time.monotonic() >= deadline:
                raise busy
            time.sleep(POLL_S)
        yield
    finally:
        os.close(fd)
