"""Atomic writes, per-file locks, and read-modify-write that never clobbers a concurrent edit.

Every write goes to a hidden temp file in the same folder, is fsynced, then renamed over the
target, so a reader sees the old file or the new one, never half of one. Read-modify-write runs
under a hidden sibling lock (``.NAME.lock``, see ``lock.sibling``), and re-checks the file just
before the rename: a person who saved the file meanwhile (people take no lock) makes us re-read
and re-apply the change, and after a few tries refuse with a clear message. A save that lands in the
instant between the re-check and the rename is the one race left (documented).
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import os
import stat
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO

from control_room import crashpoint, redact
from control_room.errors import IO_ERROR, ConflictError, ControlRoomError
from control_room.store import lock

TMP_PREFIX = ".tmp-"


def atomic_write(
    path: Path,
    text: str | bytes,
    *,
    mode: int | None = None,
    durable: bool = True,
    unless: Callable[[], bool] | None = None,
) -> bool:
    """Write ``text`` to ``path`` atomically (temp file in the same folder, fsync, rename);
    whether it was written: ``unless()``, asked when all but the rename is done, may call it
    off (the file changed under us), so the window in which a person's save can be lost is the
    rename alone, not the write and the fsync.

    ``durable=False`` skips the fsync: for derived caches, which a crash may lose but never
    tear (a reader sees the old file or the new one), and which are rebuilt when lost. In
    text, the secrets of our environment are replaced by ``[redacted:NAME]`` (``redact``);
    bytes are written as given (a cache's marshal data, whose lengths a change would break)."""
    data = encoded(redact.scrub(text)) if isinstance(text, str) else text
    if mode is None:
        try:
            mode = os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o666 & ~_umask()
    fd, tmp = _temp(path)
    try:
        try:  # os.write, not a file object: no buffer, no fstat, ioctl or lseek of its own
            _write_all(fd, data)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.chmod(tmp, mode)
        if crashpoint.armed():  # the temp file is whole, the rename not done
            crashpoint.hit(f"write.{path.name}")
        if unless is not None and unless():
            os.unlink(tmp)
            return False
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise cannot_write(path, exc) from exc
        raise
    return True


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def flush(paths: Iterable[Path]) -> None:
    """Make files written with ``durable=False`` durable now, together: one ``fsync`` each, of
    which the first commits what all of them wrote (the file system's journal holds them in one
    transaction), so a run's results cost one commit instead of one each. A path that is gone
    or not a regular file (an agent's doing) is passed by; one that cannot be synced raises
    as a write that failed."""
    for path in paths:
        try:  # never through a link, never waiting on a FIFO planted there
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                os.fsync(fd)
        except OSError as exc:
            raise cannot_write(path, exc) from exc
        finally:
            os.close(fd)


def encoded(text: str) -> bytes:
    """``text`` as the UTF-8 a room file holds. A lone surrogate (a byte that was not UTF-8 on
    a command line, a ``\\ud800`` escape in JSON) has no UTF-8: it is written as U+FFFD, the
    replacement character, rather than failing the write (`stop --reason` must never fail)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text).encode("utf-8")


def create_exclusive(path: Path, text: str) -> bool:
    """Create ``path`` with ``text`` only if it does not exist; return whether it was created.

    Written to a temp file first and then hard-linked into place, so the file appears whole
    or not at all, and an existing file is never replaced.
    """
    fd, tmp = _temp(path)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(encoded(redact.scrub(text)))
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        return True
    except OSError as exc:
        raise cannot_write(path, exc) from exc
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def cannot_write(path: Path, exc: OSError) -> ControlRoomError:
    """The one error for a write that the system refused, naming the file the caller meant to
    write: never the temp or lock file it went through, which a person has never heard of."""
    return ControlRoomError(f"cannot write {path}: {exc.strerror or exc}", exit_code=IO_ERROR)


def _temp(path: Path) -> tuple[int, str]:
    """A new hidden temp file beside ``path`` (O_EXCL; tempfile costs more to import)."""
    while True:
        name = os.path.join(path.parent, f"{TMP_PREFIX}{os.urandom(6).hex()}")
        try:
            return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), name
        except FileExistsError:
            continue
        except OSError as exc:
            raise cannot_write(path, exc) from exc


_UMASK: int | None = None


def _umask() -> int:
    global _UMASK
    if _UMASK is None:
        _UMASK = os.umask(0)
        os.umask(_UMASK)
    return _UMASK


def open_fd(path: Path | str) -> int:
    """A read-only descriptor of the regular file at ``path``: every read of a room file opens
    through here. It opens without blocking (``O_NONBLOCK``: a FIFO someone left in place of a
    file would wait for a writer forever) and refuses what is not a regular file, so a reader
    never hangs on a FIFO nor reads a device: ``IsADirectoryError`` for a folder, ``OSError``
    (EINVAL, "not a regular file") for the rest."""
    return _opened(path)[0]


def _opened(path: Path | str) -> tuple[int, int]:
    """``open_fd``'s descriptor, and the file's size as it was opened."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file (a FIFO, a socket or a device)", str(path))
    except BaseException:
        os.close(fd)
        raise
    return fd, st.st_size


def open_regular(path: Path) -> BinaryIO:
    """``open_fd`` as a binary file object."""
    return os.fdopen(open_fd(path), "rb")


def read_bytes(path: Path | str, limit: int | None = None) -> bytes:
    """The bytes of the regular file at ``path`` (its first ``limit``, if given). Read with
    ``os.read`` in reads of the file's size: a buffered read of ``limit`` bytes would allocate
    all of them first (a 1 MiB buffer for each task file of the queue's first scan)."""
    fd, size = _opened(path)
    try:
        left = (1 << 62) if limit is None else limit
        parts: list[bytes] = []
        while left > 0:
            part = os.read(fd, min(left, size + 1 if not parts else 1 << 20))
            if not part:
                break
            parts.append(part)
            left -= len(part)
        return parts[0] if len(parts) == 1 else b"".join(parts)
    finally:
        os.close(fd)


def read_text(path: Path, limit: int | None = None) -> str:
    """Read a room file as UTF-8 (its first ``limit`` bytes, if given); undecodable bytes
    become U+FFFD rather than an exception."""
    return read_bytes(path, limit).decode("utf-8", errors="replace")


def read_output(path: Path, limit: int | None = None) -> tuple[str, bool]:
    """A program's captured output as text, and whether it was all UTF-8. Output that is not
    (a tool printing Latin-1) is not mangled into U+FFFD: each byte that is not part of a
    UTF-8 sequence is read as Latin-1, so ``caf\\xe9`` reads ``café``. Empty if missing."""
    try:
        data = read_bytes(path, limit)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return "", True
    try:
        return data.decode("utf-8"), True
    except UnicodeDecodeError:
        return data.decode("utf-8", errors=_LATIN1), False


def _latin1(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    return exc.object[exc.start : exc.end].decode("latin-1"), exc.end


_LATIN1 = "control-room-latin-1"
codecs.register_error(_LATIN1, _latin1)


def read_optional(path: Path, limit: int | None = None) -> str | None:
    """``read_text``, or None when the file is not there (or is a folder)."""
    try:
        return read_text(path, limit)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def update(path: Path, change: Callable[[str], str], *, tries: int = 3) -> str:
    """Apply ``change`` to the text of ``path`` and write the result; return the new text.

    Runs under the file's lock. If the file changed between our read and our write (a person
    saved it: people take no lock), re-read and re-apply ``change``; after ``tries`` attempts,
    refuse. ``change`` must be a pure function of the text, since it may run more than once.
    """
    with lock.sibling(path):
        for _ in range(tries):
            before = _settled(path)
            new = change(before.decode("utf-8", errors="replace"))
            if encoded(new) == before:
                return new

            def changed(seen: bytes = before) -> bool:  # a person saved it under us: re-read, re-apply
                return (read_bytes(path) if path.exists() else b"") != seen

            if atomic_write(path, new, unless=changed):
                return new
    raise ConflictError(
        f"{path}: it kept changing while control-room was writing it; nothing was written, try again"
    )


SETTLE_TRIES = 6  # reads of a file found empty a moment after a save, before it is taken as empty
SETTLE_S = 0.02


def just_saved(path: Path) -> bool:
    """Whether ``path`` changed within the last second: a person's save may be half done (an
    editor saving in place truncates the file, then writes it)."""
    try:
        return time.time() - os.stat(path).st_mtime < 1.0
    except OSError:
        return False


def _settled(path: Path) -> bytes:
    """The bytes of ``path`` (none if it is missing), waiting up to 0.1 s for a save in place to
    finish when it reads empty right after a save: merged as empty, a person's text would be lost
    (and their save would land in the file our rename replaced)."""
    for _ in range(SETTLE_TRIES):
        data = read_bytes(path) if path.exists() else b""
        if data or not just_saved(path):
            return data
        time.sleep(SETTLE_S)
    return data


def append_lines(path: Path, lines: list[str]) -> None:
    """Append whole lines to a log file (``cycle --log``): one ``O_APPEND`` write, so lines of
    cycles writing at once never interleave mid-line. A log is not state: failing to write it
    raises like any write (the caller decides)."""
    data = redact.scrub("".join(f"{ln}\n" for ln in lines)).encode("utf-8", "replace")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError as exc:
        raise cannot_write(path, exc) from None
    try:
        os.write(fd, data)
    except OSError as exc:
        raise cannot_write(path, exc) from None
    finally:
        os.close(fd)


def remove(path: Path) -> None:
    """Delete a file, or a folder and everything in it: the one place the house deletes room
    content (`cleanup`, room/retention.py). A symlink is removed, never followed; a path already
    gone is not an error."""
    import shutil  # only `cleanup` deletes: no other command pays for shutil

    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    except FileNotFoundError:
        pass
