"""Appending to the ledger: one ``write`` per line, under an exclusive lock on the file; and
putting back a lost header (``restore_header``, for ``init``).

The lock is ``flock`` on the ledger itself (blocking, held for microseconds), so concurrent
writers queue up instead of polling. After taking it we check that the path still names the
file we locked (git may have replaced it), make sure the previous line was whole, find the
previous hash of our writer by reading backwards from the end, and write the line with a single
``os.write`` on an ``O_APPEND`` descriptor. A failed write (disk full) is cut back off, so the
ledger never keeps half a line.

Everything but the time and ``prev`` is rendered before the lock is taken; the time is read and
the line hashed once it is held. A process keeps its descriptor open from one append to the
next (``_keep``), with the line it last wrote: when the file ends with that very line, nobody
wrote since, so it is the previous line of our writer and the file needs no read backwards.
An append is five system calls: ``flock``, ``stat``, ``pread``, ``write``, ``flock``.
"""

from __future__ import annotations

import _thread
import contextlib
import os
import re
from collections.abc import Iterator
from pathlib import Path

from control_room import crashpoint, redact
from control_room.errors import IO_ERROR, ControlRoomError, NoRoomError
from control_room.ledger import rewrite
from control_room.ledger.events import Event
from control_room.ledger.line import (
    DETAIL_MAX,
    GENESIS,
    HEADER,
    PREAMBLE,
    SEPARATOR,
    Entry,
    cut_detail,
    escape,
    format_cost,
    join_cells,
    short_hash,
)
from control_room.ledger.read import torn_and_last_hash
from control_room.lineage import TASK_VARIABLE, env, run_of
from control_room.store import lock
from control_room.store.files import atomic_write, read_optional
from control_room.timeutil import now_iso

_WRITER_CHARS = r"[^A-Za-z0-9._-]+"


HOST_FILE = ".host"  # control-room/.host: this clone's host id (`control-room sync --host`); git-ignored


def writer_name(cr: Path | None = None) -> str:
    """Who writes, the host id of every ledger line and claim: ``CONTROL_ROOM_WRITER``, else the
    room's ``control-room/.host`` (``cr``: the room's control-room/ folder), else this
    machine's host name; made cell-safe. Inside an agent's run (lineage.py) it ends with
    ``.task.<id>``: what an agent writes itself is never written as the machine's person.

    Read afresh each time; ``append`` reads ``.host`` once per ledger and keeps it until the
    next ``writer_name`` (a claim asks it each cycle, before its lines), so an append makes no
    system call to know its writer."""
    _hosts.clear()
    return _writer(env("CONTROL_ROOM_WRITER") or _host_id(cr))


def _host_id(cr: Path | None) -> str:
    """What the room's ``control-room/.host`` says, else this machine's host name."""
    raw = ""
    if cr is not None:
        try:
            raw = (read_optional(cr / HOST_FILE) or "").strip()
        except OSError:
            raw = ""  # unreadable: the machine's name, below
    return raw or _node()


def _node() -> str:
    global _nodename
    if _nodename is None:
        _nodename = os.uname().nodename or "unknown"
    return _nodename


_nodename: str | None = None


def _ledger_host(path: Path) -> str:
    """The host id of the room whose ledger is at ``path``: read once, then kept (``_hosts``)."""
    said = _hosts.get(path)
    if said is None:
        if len(_hosts) >= 64:
            _hosts.clear()
        said = _hosts[path] = _host_id(path.parent)
    return said


_hosts: dict[Path, str] = {}  # ledger path -> its room's host id, until the next writer_name()


def _writer(raw: str) -> str:
    """``raw``, the name of the person or machine, as a writer: cell-safe, and inside an
    agent's run naming its task."""
    own = env(TASK_VARIABLE)  # all inside_run goes by: the rest is read once per process
    name = _names.get((raw, own))
    if name is None:
        if len(_names) >= 256:
            _names.clear()
        name = _names[raw, own] = _name(raw, run_of(own))
    return name


_names: dict[tuple[str, str | None], str] = {}  # (raw name, CONTROL_ROOM_TASK) -> writer, worked out once


def _name(raw: str, task: str | None) -> str:
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
    """A random 64-bit event id: unique across machines without any counter to share. Taken from
    a pool of 256 drawn at once from ``os.urandom`` (one system call, not one per line); a forked
    child starts a pool of its own (``_forked``), so it never repeats its parent's ids."""
    return next(_ids, None) or _more_ids()


def _more_ids() -> str:
    global _ids
    pool = os.urandom(8 * 256).hex()
    ids = iter([pool[i : i + 16] for i in range(0, len(pool), 16)])
    first = next(ids)
    _ids = ids  # another thread refilling at the same time keeps its own: both are random
    return first


_ids: Iterator[str] = iter(())  # `next` on it is one step under the GIL: two threads never share an id


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
    who = writer or _writer(env("CONTROL_ROOM_WRITER") or _ledger_host(path))  # writer_name()
    cols, outcomes = event.columns, event.outcomes
    if (
        (task and "task" not in cols)
        or (route and "route" not in cols)
        or (adapter and "adapter" not in cols)
        or (cost_usd and "cost_usd" not in cols)
        or (detail and "detail" not in cols)
        or (outcome is not None and outcomes and outcome not in outcomes)
    ):  # a bug in the writer: check says which
        filled = {"task": task, "route": route, "adapter": adapter, "cost_usd": cost_usd, "detail": detail}
        event.check(outcome, filled)
    result = outcome if outcome is not None else outcomes[0] if outcomes else ""
    said = redact.scrub(detail) if detail else ""
    if len(said) > DETAIL_MAX:
        said = cut_detail(said)
    cost, eid, name = _costs.get(cost_usd) or _cost(cost_usd), next(_ids, None) or _more_ids(), event.name
    cells = (eid, who, name, task, route, adapter, result, cost, said)
    middle = f" | {join_cells(cells)} | "  # the cells between time and prev, made before the lock
    ours = _mutex.acquire(False)  # False: another of our threads appends, with the kept one
    try:
        while True:
            led = _kept
            if not ours or led is None or not (led.path is path or led.path == path):
                led = _keep(path) if ours else _Open(path)
            kept = False
            try:
                lock.hold(led.fd, path)
                try:
                    st = os.stat(led.name)
                except FileNotFoundError:
                    continue  # removed while we waited for the lock: open the path again
                if st.st_ino == led.ino and st.st_dev == led.dev:  # else replaced: lock the new file
                    if led.end < 0 and not rewrite.settled(path):
                        continue  # a fresh descriptor while git rewrote the file: open it again
                    when = now_iso()  # the time the lock was got: lines keep time order
                    prev, h = _write(led, path, st.st_size, who, when, middle)
                    kept = ours
                    break
            finally:
                if kept:
                    lock.release(led.fd)  # the descriptor stays open for our next append
                else:
                    _close(led)  # also releases the lock
    finally:
        if ours:
            _mutex.release()
    return tuple.__new__(Entry, (when, eid, who, name, task, route, adapter, result, cost, said, prev, h))


def _cost(cost: float) -> str:
    said = format_cost(cost)
    if len(_costs) < 256:
        _costs[cost] = said
    return said


_costs: dict[float, str] = {0.0: "0"}  # cost_usd -> its cell: most lines cost 0, a bench's one sum


def _write(led: _Open, path: Path, end: int, who: str, when: str, middle: str) -> tuple[str, str]:
    """Under the lock, with the file ``end`` bytes long: write the line of time ``when`` and
    cells ``middle`` (those between time and prev, escaped) with one ``os.write``; return its
    prev and hash."""
    mark = led.mark
    if (
        end == led.end
        and who == led.writer
        and end >= len(mark)
        and os.pread(led.fd, len(mark), end - len(mark)) == mark
    ):
        torn, prev, cell = False, led.hash, led.hash  # the file ends with our last line: nobody wrote since
    else:
        torn, last = torn_and_last_hash(led.fd, end, who)
        prev = last or GENESIS
        cell = prev if prev.isalnum() and prev.isascii() else escape(prev)  # a hash: plain already
    stamp = _stamps.get(when) or _stamp(when)
    body = f"{stamp}{middle}{cell} |".encode()
    h = short_hash(body)
    data = b"%s %s |\n" % (body, h.encode())
    try:
        written = os.write(led.fd, b"\n" + data if torn else data)
        if written != len(data) + torn:
            raise OSError(28, "short write (disk full?)")
    except OSError as exc:
        os.ftruncate(led.fd, end)
        raise ControlRoomError(
            f"cannot append to {path}: {exc.strerror or exc}; nothing was written", exit_code=IO_ERROR
        ) from None
    crashpoint.hit("ledger.written")  # the line is whole; the lock is not let go yet
    led.end, led.mark, led.writer, led.hash = end + written, b"\n" + data, who, h
    return prev, h


def _stamp(when: str) -> str:
    """The line's start up to its time cell, ``| <time>``: made once a second."""
    _stamps.clear()
    _stamps[when] = said = f"| {escape(when)}"
    return said


_stamps: dict[str, str] = {}


class _Open:
    """A descriptor of the ledger at ``path`` (``O_APPEND``), the file it opened (``dev``,
    ``ino``), and the line it last wrote there: ``mark``, a newline and its bytes, ending at byte
    ``end``.

    A process keeps one open from one append to the next (``_kept``), used by one thread at a
    time (``_mutex``): ``flock``s taken through one open file do not exclude each other, so
    another thread appending meanwhile opens one of its own, and a forked child does not use its
    parent's (``_forked``). A descriptor whose file was replaced, or that an append failed with,
    is closed, and the next append opens a new one."""

    __slots__ = ("dev", "end", "fd", "hash", "ino", "mark", "name", "path", "writer")

    def __init__(self, path: Path) -> None:
        while True:
            try:
                self.fd = _open(path, os.O_RDWR | os.O_APPEND | _NOATIME)
                break
            except FileNotFoundError:
                if not rewrite.settled(path):
                    continue  # git unlinked it to write it anew: there now
                what = "restore it (git checkout) or run `control-room init` to start a new one"
                raise NoRoomError(f"{path} is missing; {what}") from None
        st = os.fstat(self.fd)
        self.path, self.name = path, os.fsencode(path)  # bytes: os.stat need not encode it
        self.dev, self.ino = st.st_dev, st.st_ino
        self.end, self.mark, self.writer, self.hash = -1, b"", "", ""


_kept: _Open | None = None  # this process's open ledger, kept between appends
_mutex = _thread.allocate_lock()  # who uses _kept (_thread, not threading: nothing to import)


def _keep(path: Path) -> _Open:
    """The kept descriptor of the ledger at ``path``: the last append's, else a new one."""
    global _kept
    led = _kept
    if led is not None and (led.path is path or led.path == path):
        return led
    if led is not None:  # another ledger's: a process keeps one
        _close(led)
    _kept = _Open(path)
    return _kept


def _close(led: _Open) -> None:
    global _kept
    if _kept is led:
        _kept = None
    os.close(led.fd)


def _forked() -> None:
    """In a forked child: forget the parent's descriptor (its ``flock``s would be the parent's
    too), its pool of event ids, and its thread's hold on ``_mutex``."""
    global _kept, _ids, _mutex
    led, _kept, _ids, _mutex = _kept, None, iter(()), _thread.allocate_lock()
    if led is not None:
        with contextlib.suppress(OSError):
            os.close(led.fd)  # the parent's stays open, and its lock with it


os.register_at_fork(after_in_child=_forked)


def _open(path: Path, flags: int) -> int:
    """The ledger opened for writing, never through a link (``lock.refused_link``). With
    ``O_NOATIME`` where the file is ours: an append reads the file's end, and on a
    ``relatime`` mount a read after a write updates the access time, which costs more than the
    read (the inode written to the journal again); another user's file is opened without it."""
    try:
        return lock.open_no_link(path, flags)
    except PermissionError:
        if not flags & _NOATIME:
            raise
        return lock.open_no_link(path, flags & ~_NOATIME)  # not our file: atime as usual


_NOATIME = getattr(os, "O_NOATIME", 0)  # Linux


def restore_header(path: Path) -> int | None:
    """Put the table header (with the preamble) back into a ledger that lost it, keeping every
    line; return how many ledger lines it now heads, or None if the header was there.

    What stood above the first table row (the old preamble, or anything a person wrote) stays
    above the header, so it is not read as ledger lines; every row below keeps its place, its
    bytes and so its hash chain. Runs under the ledger's lock, and replaces the file whole (a
    writer waiting for the lock sees the new file and appends to it)."""
    while True:
        fd = _open(path, os.O_RDWR)
        try:
            lock.hold(fd, path)
            try:
                same = os.path.samestat(os.stat(path), os.fstat(fd))
            except FileNotFoundError:
                same = False
            if not same:
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
