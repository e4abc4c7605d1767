"""Appending to the ledger: one ``write`` per line, under an exclusive lock on the file; and
putting back a lost header (``restore_header``, for ``init``).

The lock is ``flock`` on the ledger itself (blocking, held for microseconds), so concurrent
writers queue up instead of polling. After taking it we check that the path still names the
file we locked (git may have replaced it), make sure the previous line was whole, find the
previous hash of our writer by reading backwards from the end, and write the line with a single
``os.write`` on an ``O_APPEND`` descriptor. A failed write (disk full) is cut back off, so the
ledger never keeps half a line.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from control_room import crashpoint, redact
from control_room.errors import IO_ERROR, ControlRoomError, NoRoomError
from control_room.ledger.events import Event
from control_room.ledger.line import (
    GENESIS,
    HEADER,
    PREAMBLE,
    SEPARATOR,
    Entry,
    cut_detail,
    format_cost,
    render,
)
from control_room.ledger.read import last_hash
from control_room.lineage import inside_run
from control_room.store import lock
from control_room.store.files import atomic_write, read_optional
from control_room.timeutil import now_iso

_WRITER_CHARS = r"[^A-Za-z0-9._-]+"


HOST_FILE = ".host"  # control-room/.host: this clone's host id (`control-room sync --host`); git-ignored


def writer_name(cr: Path | None = None) -> str:
    """Who writes, the host id of every ledger line and claim: ``CONTROL_ROOM_WRITER``, else the
    room's ``control-room/.host`` (``cr``: the room's control-room/ folder), else this
    machine's host name; made cell-safe. Inside an agent's run (lineage.py) it ends with
    ``.task.<id>``: what an agent writes itself is never written as the machine's person."""
    raw = os.environ.get("CONTROL_ROOM_WRITER") or ""
    if not raw and cr is not None:
        try:
            raw = (read_optional(cr / HOST_FILE) or "").strip()
        except OSError:
            raw = ""  # unreadable: the machine's name, below
    raw = raw or os.uname().nodename or "unknown"
    task = inside_run()
    if task is None:
        return cell_safe(raw)
    suffix = "." + cell_safe(f"task.{task}")[:40]
    name = cell_safe(raw)
    if f"{suffix}." in f"{name}.":  # said already (the MCP server's writer names it)
        return name
    return name[: 64 - len(suffix)] + suffix


def cell_safe(raw: str) -> str:
    """A name usable as a writer or host id: letters, digits, ``.``, ``_``, ``-``; 64 at most."""
    return re.sub(_WRITER_CHARS, "-", raw).strip("-")[:64] or "unknown"


def new_event_id() -> str:
    """A random 64-bit event id: unique across machines without any counter to share."""
    return os.urandom(8).hex()


def append(
    path: Path,
    event: Event,
    *,
    task: str = "",
    route: str = "",
    adapter: str = "",
    outcome: str | None = None,
    cost_usd: float = 0.0,
    detail: str = "",
    writer: str | None = None,
) -> Entry:
    """Append one event (``ledger.events``) to the ledger at ``path``; return it as written.
    ``outcome`` defaults to the event's first outcome; a secret in ``detail`` is redacted."""
    who = writer or writer_name(path.parent)
    result = event.check(
        outcome, {"task": task, "route": route, "adapter": adapter, "cost_usd": cost_usd, "detail": detail}
    )
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_APPEND)
        except FileNotFoundError:
            raise NoRoomError(
                f"{path} is missing; restore it (git checkout) or run `control-room init` to start a new one"
            ) from None
        try:
            lock.hold(fd, path)
            if os.fstat(fd).st_ino != _inode(path):
                continue  # replaced while we waited for the lock: lock the new file
            end = os.fstat(fd).st_size
            torn = end > 0 and os.pread(fd, 1, end - 1) != b"\n"
            prev = last_hash(fd, end, who) or GENESIS
            entry = Entry(
                time=now_iso(),
                id=new_event_id(),
                writer=who,
                event=event.name,
                task=task,
                route=route,
                adapter=adapter,
                outcome=result,
                cost_usd=format_cost(cost_usd),
                detail=cut_detail(redact.scrub(detail)),
                prev=prev,
            )
            line, h = render(entry)
            data = (b"\n" if torn else b"") + line.encode("utf-8") + b"\n"
            try:
                written = os.write(fd, data)
                if written != len(data):
                    raise OSError(28, "short write (disk full?)")
            except OSError as exc:
                os.ftruncate(fd, end)
                raise ControlRoomError(
                    f"cannot append to {path}: {exc.strerror or exc}; nothing was written",
                    exit_code=IO_ERROR,
                ) from None
            crashpoint.hit("ledger.written")  # the line is whole; the lock is not let go yet
            return entry._replace(hash=h)
        finally:
            os.close(fd)  # also releases the lock


def _inode(path: Path) -> int:
    try:
        return os.stat(path).st_ino
    except FileNotFoundError:
        return -1


def restore_header(path: Path) -> int | None:
    """Put the table header (with the preamble) back into a ledger that lost it, keeping every
    line; return how many ledger lines it now heads, or None if the header was there.

    What stood above the first table row (the old preamble, or anything a person wrote) stays
    above the header, so it is not read as ledger lines; every row below keeps its place, its
    bytes and so its hash chain. Runs under the ledger's lock, and replaces the file whole (a
    writer waiting for the lock sees the new file and appends to it)."""
    while True:
        fd = os.open(path, os.O_RDWR)
        try:
            lock.hold(fd, path)
            if os.fstat(fd).st_ino != _inode(path):
                continue  # replaced while we waited for the lock
            data = os.pread(fd, os.fstat(fd).st_size, 0)
            lines = data.split(b"\n")
            if HEADER.encode() in lines:
                return None
            first_row = next((i for i, ln in enumerate(lines) if ln.startswith(b"|")), len(lines))
            head, rows = lines[:first_row], lines[first_row:]
            if rows and rows[0] == SEPARATOR.encode():
                rows = rows[1:]  # the separator of the lost header: the new header brings its own
            above = b"\n".join(head).rstrip(b"\n")
            if b"# LEDGER" not in head:  # the preamble went too: put it back, above what was there
                above = PREAMBLE.split(HEADER)[0].rstrip("\n").encode() + (b"\n\n" + above if above else b"")
            body = b"\n".join(rows)
            text = above + b"\n\n" + f"{HEADER}\n{SEPARATOR}\n".encode() + body
            if body and not body.endswith(b"\n"):
                text += b"\n"  # a torn last line is closed, so the next append starts its own
            atomic_write(path, text)
            return sum(1 for r in rows if r.startswith(b"| "))
        finally:
            os.close(fd)
