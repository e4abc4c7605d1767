"""Atomic writes, per-file locks, and read-modify-write that never clobbers a concurrent edit.

Every write goes to a hidden temp file in the same folder, is fsynced, then renamed over the
target, so a reader sees the old file or the new one, never half of one. Read-modify-write runs
under a hidden sibling lock (``.NAME.lock``) taken with filelock, and re-checks the file just
before the rename: a person who saved the file meanwhile (people take no lock) makes us re-read
and re-apply the change, and after a few tries refuse with a clear message. The lock is
``flock`` on POSIX (polled, with a timeout), filelock elsewhere. A save that lands in the
instant between the re-check and the rename is the one race left (documented).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from control_room.errors import IO_ERROR, ConflictError, ControlRoomError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_TIMEOUT_S = 30.0
TMP_PREFIX = ".tmp-"


def atomic_write(path: Path, text: str | bytes, *, mode: int | None = None, durable: bool = True) -> None:
    """Write ``text`` to ``path`` atomically (temp file in the same folder, fsync, rename).

    ``durable=False`` skips the fsync: for derived caches, which a crash may lose but never
    tear (a reader sees the old file or the new one), and which are rebuilt when lost."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    if mode is None:
        try:
            mode = os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o666 & ~_umask()
    fd, tmp = _temp(path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            if durable:
                os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise ControlRoomError(f"cannot write {path}: {exc.strerror or exc}", exit_code=IO_ERROR) from exc
        raise


def create_exclusive(path: Path, text: str) -> bool:
    """Create ``path`` with ``text`` only if it does not exist; return whether it was created.

    Written to a temp file first and then hard-linked into place, so the file appears whole
    or not at all, and an existing file is never replaced.
    """
    fd, tmp = _temp(path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        return True
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _temp(folder: Path) -> tuple[int, str]:
    """A new hidden temp file in ``folder`` (O_EXCL; tempfile costs more to import)."""
    while True:
        name = os.path.join(folder, f"{TMP_PREFIX}{os.urandom(6).hex()}")
        try:
            return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), name
        except FileExistsError:
            continue


_UMASK: int | None = None


def _umask() -> int:
    global _UMASK
    if _UMASK is None:
        _UMASK = os.umask(0)
        os.umask(_UMASK)
    return _UMASK


def read_text(path: Path) -> str:
    """Read a room file as UTF-8; undecodable bytes become U+FFFD rather than an exception."""
    return path.read_bytes().decode("utf-8", errors="replace")


@contextlib.contextmanager
def locked(path: Path, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold the hidden sibling lock ``.NAME.lock`` of ``path``.

    On POSIX this is ``flock`` on the lock file, polled until ``timeout`` (what filelock's
    UnixFileLock does, without its ~20 ms import on every command); elsewhere, filelock.
    """
    lock_path = path.parent / f".{path.name}.lock"
    busy = ConflictError(f"{path}: another control-room process holds its lock (waited {timeout:.0f}s)")
    if fcntl is None:  # pragma: no cover - Windows
        from filelock import FileLock, Timeout

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
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise busy from None
                time.sleep(0.005)
        yield
    finally:
        os.close(fd)


def update(path: Path, change: Callable[[str], str], *, tries: int = 3) -> str:
    """Apply ``change`` to the text of ``path`` and write the result; return the new text.

    Runs under the file's lock. If the file changed between our read and our write (a person
    saved it: people take no lock), re-read and re-apply ``change``; after ``tries`` attempts,
    refuse. ``change`` must be a pure function of the text, since it may run more than once.
    """
    with locked(path):
        for _ in range(tries):
            before = path.read_bytes() if path.exists() else b""
            new = change(before.decode("utf-8", errors="replace"))
            if new.encode("utf-8") == before:
                return new
            now = path.read_bytes() if path.exists() else b""
            if now != before:
                continue  # edited under us: re-read, re-apply
            atomic_write(path, new)
            return new
    raise ConflictError(
        f"{path}: it kept changing while control-room was writing it; nothing was written, try again"
    )
