"""A child's output captured into files, and its stdin fed, from one loop: no thread.

``proc.run`` hands the child's pipes to ``Pipes`` and calls ``wait`` until the child exits.
One ``poll`` watches both output pipes, the stdin pipe while the payload lasts and, on Linux,
the child itself (a pidfd, readable when it exits), so an exit is seen at once and a child that
prints a gigabyte is read as fast as it writes. Each stream keeps its first ``cap`` bytes in its
file, written as they arrive; the rest is read and dropped, so the child never blocks on a full
pipe. A capture file that cannot be written (the disk filled) is noted on its stream, and the
rest of that stream is read and dropped too. A child that does not read its stdin is never
waited on: the payload goes in as the pipe takes it, and is given up at the child's end.
"""

from __future__ import annotations

import contextlib
import os
import select
import stat
import time
from pathlib import Path
from typing import IO

from control_room.plain import Plain

CHUNK = 1 << 16
_OUT = select.POLLIN | select.POLLHUP | select.POLLERR
_WAIT_MAX_S = 0.05  # without a pidfd (macOS), how long a wait may go without a look at the child


class Stream(Plain):
    """A child's stdout or stderr, as captured into its file."""

    __slots__ = ("bytes_kept", "bytes_seen", "error", "path")

    def __init__(self, path: Path, bytes_seen: int = 0, bytes_kept: int = 0, error: str = "") -> None:
        self.path = path
        self.bytes_seen = bytes_seen
        self.bytes_kept = bytes_kept
        self.error = error  # why the stream could not be saved (the disk filled), if it could not

    @property
    def truncated(self) -> bool:
        return self.bytes_seen > self.bytes_kept and not self.error

    def tail(self, lines: int = 10, max_bytes: int = 4096) -> str:
        """The last lines kept, decoded leniently."""
        try:
            with open(self.path, "rb") as f:
                f.seek(max(0, self.bytes_kept - max_bytes))
                data = f.read()
        except OSError:
            return ""
        text = data.decode("utf-8", "replace").rstrip("\n")
        return "\n".join(text.splitlines()[-lines:])


def sink(stream: Stream) -> int | None:
    """The capture file of ``stream``, made empty: its descriptor. A link at its path is removed
    first and never followed (``O_NOFOLLOW``): an agent that linked its validator's capture to a
    person's file outside the room cannot have it overwritten. None, the error noted, if it
    cannot be made."""
    try:
        with contextlib.suppress(FileNotFoundError):
            if stat.S_ISLNK(os.lstat(stream.path).st_mode):
                os.unlink(stream.path)
        return os.open(
            stream.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644
        )
    except OSError as exc:
        stream.error = f"{stream.path}: {exc.strerror or exc}"
        return None


def exit_fd(pid: int) -> int | None:
    """A descriptor that polls readable once process ``pid`` (our child) exits (Linux 5.3 and
    later); None elsewhere."""
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        return int(opener(pid))
    except OSError:
        return None


class Pipes:
    """The pipes of one child: its stdout and stderr into their streams, its stdin payload in."""

    def __init__(
        self,
        outputs: list[tuple[IO[bytes], Stream, int | None]],
        cap: int,
        stdin: IO[bytes] | None = None,
        payload: bytes = b"",
        exited: int | None = None,
    ) -> None:
        self.cap, self.exited = cap, exited
        self.poller = select.poll()
        self.reading: dict[int, tuple[IO[bytes], Stream, int | None]] = {}
        for pipe, stream, fd in outputs:
            self.reading[pipe.fileno()] = (pipe, stream, fd)
            self.poller.register(pipe.fileno(), _OUT)
        self.stdin, self.payload, self.sent = stdin, memoryview(payload), 0
        if stdin is not None:
            if payload:
                os.set_blocking(stdin.fileno(), False)
                self.poller.register(stdin.fileno(), select.POLLOUT)
            else:
                self._stdin_done()
        if exited is not None:
            self.poller.register(exited, select.POLLIN)
        self.idle_s = 0.001

    def wait(self, at_most_s: float) -> bool:
        """Move what is ready (output in, payload out), waiting up to ``at_most_s`` for anything;
        True when the child has exited (or may have: without a pidfd, every wait is short)."""
        if self.exited is None:  # no way to hear the exit: wait a little, longer while nothing happens
            at_most_s = min(at_most_s, self.idle_s)
            self.idle_s = min(self.idle_s * 2, _WAIT_MAX_S)
        events = self.poller.poll(max(0, int(at_most_s * 1000 + 0.999)))
        gone = self.exited is None
        for fd, _ in events:
            if fd == self.exited:
                gone = True
            elif fd in self.reading:
                self.idle_s = 0.001
                self._read(fd)
            elif self.stdin is not None and fd == self.stdin.fileno():
                self._write()
        return gone

    def drain(self, at_most_s: float) -> None:
        """Read what the pipes still hold until each is closed, for ``at_most_s`` at most (a
        writer left outside the group we ended may keep one open)."""
        end = time.monotonic() + at_most_s
        while self.reading and (left := end - time.monotonic()) > 0:
            for fd, _ in self.poller.poll(max(1, int(left * 1000))):
                if fd in self.reading:
                    self._read(fd)

    def close(self) -> None:
        """Close every pipe and capture file still open."""
        for fd in list(self.reading):
            self._done(fd)
        self._stdin_done()
        if self.exited is not None:
            with contextlib.suppress(OSError):
                os.close(self.exited)
            self.exited = None

    def _read(self, fd: int) -> None:
        _, stream, out = self.reading[fd]
        try:
            chunk = os.read(fd, CHUNK)
        except OSError:
            chunk = b""
        if not chunk:
            self._done(fd)
            return
        stream.bytes_seen += len(chunk)
        room = self.cap - stream.bytes_kept
        if room <= 0 or out is None:
            return
        kept = chunk[:room]
        try:
            view = memoryview(kept)
            while view:
                view = view[os.write(out, view) :]
        except OSError as exc:  # the disk filled: what follows is read and dropped, the error noted
            stream.error = stream.error or f"{stream.path}: {exc.strerror or exc}"
            self.reading[fd] = (self.reading[fd][0], stream, None)
            with contextlib.suppress(OSError):
                os.close(out)
            return
        stream.bytes_kept += len(kept)

    def _write(self) -> None:
        assert self.stdin is not None
        try:
            self.sent += os.write(self.stdin.fileno(), self.payload[self.sent : self.sent + CHUNK])
        except BlockingIOError:
            return
        except OSError:  # the child closed its stdin: the rest is not for it
            self.sent = len(self.payload)
        if self.sent >= len(self.payload):
            self._stdin_done()

    def _stdin_done(self) -> None:
        if self.stdin is None:
            return
        with contextlib.suppress(OSError, KeyError):
            self.poller.unregister(self.stdin.fileno())
        with contextlib.suppress(OSError):
            self.stdin.close()
        self.stdin = None

    def _done(self, fd: int) -> None:
        pipe, _, out = self.reading.pop(fd)
        with contextlib.suppress(OSError, KeyError):
            self.poller.unregister(fd)
        with contextlib.suppress(OSError):
            pipe.close()
        if out is not None:
            with contextlib.suppress(OSError):
                os.close(out)
