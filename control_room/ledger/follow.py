"""Keeping a derived state current with the ledger, reading only what was appended.

A derived state (the status summary, the digest, the chain check) is a checkpoint that records
how many bytes of the ledger it has folded in and the bytes just before that offset. On the next
call, if the ledger still holds those bytes there, only the lines after the offset are read and
folded in; otherwise (the file was rewritten or shrank) the state is rebuilt from the start.

A first call on a big ledger (no checkpoint yet: a fresh clone, a deleted cache, an upgrade)
does not read it all: the state starts ``WINDOW`` bytes before the end (``from`` is that offset,
``from_time`` the time of its first line; a state that counts by day reaches back to a line of
an earlier day) and is at once usable for what needs recent lines. The whole history is folded
in a second checkpoint (``<name>.older``) from the top, by ``control-room ledger fold``, which the
command's edge starts in the background for the cache folders left in ``BEHIND``
(views/catch_up.py). A later call that finds it within ``STEP`` bytes of the end folds the rest
and makes it the state (``from`` 0). A caller that cannot do with recent lines passes
``whole=True``: the catch-up runs to the end in that call. Deleting a checkpoint only costs one
rebuild.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from control_room.ledger.line import COLUMNS, HEADER, split_cells
from control_room.ledger.read import table_start
from control_room.store import cache
from control_room.store.files import open_fd
from control_room.timeutil import today

BOUNDARY = 64
CHUNK = 1 << 20
WINDOW = 2 << 20  # bytes a first call folds, back from the end, when the ledger is bigger than SMALL
STEP = 4 << 20  # a whole-history state this near the end is finished by the call that finds it
SMALL = WINDOW + STEP  # a ledger up to this size is folded whole at once
WINDOW_MAX = 32 << 20  # a window grows back (doubling) until its first line is of an earlier day

BEHIND: dict[Path, set[str]] = {}  # cache folder -> the checkpoints this command left recent only

Fold = Callable[[dict[str, Any], list[str]], None]  # (state, raw cells of one line)
FoldLine = Callable[[dict[str, Any], str], None]  # (state, one whole physical line)


def boundary(fd: int, size: int) -> str:
    """The ``BOUNDARY`` bytes before offset ``size`` (hex): what must still be there for a
    checkpoint at ``size`` to resume from."""
    start = max(0, size - BOUNDARY)
    return os.pread(fd, size - start, start).hex()


def table_lines(fd: int, start: int, size: int) -> Iterator[tuple[int, str]]:
    """(the byte offset just after it, the line) for each whole line of the table from ``start``
    (at 0, the lines up to the header are skipped) up to byte ``size``: a reader that resumes
    at an offset of its own (the dashboard's ledger pages)."""
    pos = start
    in_table = start > 0
    carry = b""
    while pos < size:
        block = carry + os.pread(fd, min(CHUNK, size - pos), pos)
        end = pos - len(carry)
        pos += len(block) - len(carry)
        *whole, carry = block.split(b"\n")
        for raw in whole:
            end += len(raw) + 1
            line = raw.decode("utf-8", "replace")
            if in_table:
                yield end, line
            else:
                in_table = line == HEADER


def _lines(fd: int, state: dict[str, Any], size: int) -> Iterator[str]:
    """Every whole line between the checkpoint's offset and ``size``; then moves the offset to
    the end of the last whole one (a torn tail waits for its newline). The loop of
    ``table_lines`` without its offsets, kept apart on purpose: a fold of 500,000 lines built on
    one shared generator read them about 9% slower (620 against 570 ms, the fold doing nothing),
    and this is the path of every first ``status`` on a big ledger."""
    pos = state["size"]
    carry = b""
    while pos < size:
        block = carry + os.pread(fd, min(CHUNK, size - pos), pos)
        pos += len(block) - len(carry)
        *whole, carry = block.split(b"\n")
        for raw in whole:
            yield raw.decode("utf-8", "replace")
    state["size"] = size - len(carry)
    state["boundary"] = boundary(fd, state["size"])


def _valid(state: Any, kind: str, fd: int, st: os.stat_result, same_inode: bool) -> bool:
    """Whether a loaded checkpoint can be resumed: its kind, and the ledger still holds the bytes
    it stopped at (and, ``same_inode``, is the same file)."""
    return (
        isinstance(state, dict)
        and state.get("kind") == kind
        and isinstance(state.get("size"), int)
        and state["size"] <= st.st_size
        and state.get("boundary") == boundary(fd, state["size"])
        and (not same_inode or state.get("inode") == st.st_ino)
    )


def _fresh(kind: str, init: Callable[[], dict[str, Any]], fd: int, at: int) -> dict[str, Any]:
    """A new state that starts folding at byte ``at`` (0: the top, the preamble skipped)."""
    state = {"kind": kind, "size": at, "in_table": at > 0, "lines": 0, "from": at, "from_time": "", **init()}
    if at:
        first = os.pread(fd, 256, at).split(b" | ", 1)[0]
        state["from_time"] = first.lstrip(b"| ").decode("ascii", "replace")
        state["boundary"] = boundary(fd, at)
    return state


def window_start(fd: int, size: int) -> int:
    """Where a first fold of a ledger of ``size`` bytes starts: 0 for a small one; else the
    start of the first whole line in its last ``WINDOW`` bytes. 0 when the table header is not
    near the top (a start past it could not be told from the preamble)."""
    return _window(fd, size, None)


def day_window_start(fd: int, size: int) -> int:
    """``window_start`` for a state that counts by day (spend): the window reaches back, twice
    as far each time up to ``WINDOW_MAX``, until its first line is of a day before today, so
    today's lines are all in it when the ledger is in time order."""
    return _window(fd, size, today())


def big(fd: int, size: int) -> bool:
    """Whether a ledger of ``size`` bytes is big: more than ``SMALL``, its table header near the top
    (a start past it could not be told from the preamble otherwise)."""
    return size > SMALL and table_start(fd) is not None


def misses(state: dict[str, Any], day: str) -> bool:
    """Whether ``state``, of a big ledger's recent lines only, may lack lines of ``day``: its
    first line is of that day or later (a whole state lacks none)."""
    return bool(state.get("from")) and str(state.get("from_time", ""))[:10] >= day


def _window(fd: int, size: int, day: str | None) -> int:
    top = table_start(fd) if size > SMALL else None
    if top is None:
        return 0
    back = WINDOW
    while size - back > top:
        at = size - back
        block = os.pread(fd, CHUNK, at)
        cut = block.find(b"\n")
        if cut < 0:
            return 0
        first_day = block[cut + 1 : cut + 13].lstrip(b"| ")[:10].decode("ascii", "replace")
        if day is None or first_day < day or back >= WINDOW_MAX:
            return at + cut + 1
        back *= 2
    return 0


def _walk(
    path: Path,
    checkpoint: Path,
    kind: str,
    init: Callable[[], dict[str, Any]],
    each: Callable[..., None],
    same_inode: bool = False,
    *,
    first: Callable[[int, int], int] = window_start,
    older: bool = True,
    whole: bool = False,
) -> tuple[dict[str, Any], int]:
    """Load (or start, at ``first(fd, size)``) the checkpoint of ``kind``, call ``each(state,
    fd, size)`` if the ledger grew, save; if the state is not whole yet (and ``older``), see to
    its catch-up; return the state and the bytes read. ``same_inode``: a file replaced since
    (a rename over it: an editor's save, ``sed -i``, a checkout) is read again from the start."""
    fd = open_fd(path)
    try:
        st = os.fstat(fd)
        size = st.st_size
        kept = _KEPT.get(checkpoint) if KEEP and not cache.holding() else None
        state = (
            _newest(checkpoint, kept, kind, fd, st, same_inode)
            if kept is not None
            else cache.load(checkpoint)
        )
        if not _valid(state, kind, fd, st, same_inode):
            state = _fresh(kind, init, fd, first(fd, size))
        start = state["size"]
        read = 0
        if start < size or (same_inode and state.get("inode") != st.st_ino):
            each(state, fd, size)
            read = size - start
            state["inode"] = st.st_ino
            _save(checkpoint, state, kept)
        if older and state.get("from", 0) > 0:
            state, more = _catch_up(checkpoint, kind, init, each, fd, st, state, whole)
            read += more
            if checkpoint in _KEPT:  # caught up (and saved): the state kept is that one now
                _KEPT[checkpoint] = (_KEPT[checkpoint][0], state, cache.fingerprint(checkpoint))
        return state, read
    finally:
        os.close(fd)


# A run loop's cycles keep their states in memory (``kept``): each call folds the lines since its
# own last one (or since the checkpoint on disk, when another process saved one further on), and
# saves the checkpoint for other commands at most every ``SAVE_S``, not at every call (a save is a
# file made and renamed: several a cycle, eight loops racing).
KEEP = False
SAVE_S = 1.0
# checkpoint -> (when saved, the state, the checkpoint's fingerprint when last read or saved)
_KEPT: dict[Path, tuple[float, dict[str, Any], list[int] | None]] = {}


@contextmanager
def kept() -> Iterator[None]:
    """Inside, states are kept in this process's memory between calls and saved to their
    checkpoints at most every ``SAVE_S`` (and when it ends): for a loop of many cycles. A state
    is a function of the ledger's bytes alone: a checkpoint another process saved further on is
    taken instead of ours (one stat tells whether there is one), else the lines since are folded
    here; the checkpoint on disk lags by a second at most, and a command that reads it folds the
    lines since."""
    global KEEP
    before, KEEP = KEEP, True
    try:
        yield
    finally:
        KEEP = before
        if not before:
            for checkpoint, (_, state, _) in _KEPT.items():
                cache.save(checkpoint, state)
            _KEPT.clear()


def is_kept(checkpoint: Path) -> bool:
    """Whether this process keeps the state of ``checkpoint`` in memory (inside ``kept``)."""
    return KEEP and checkpoint in _KEPT


def _newest(
    checkpoint: Path, kept: tuple[float, dict[str, Any], list[int] | None], kind: str, fd: int,
    st: os.stat_result, same_inode: bool,
) -> dict[str, Any]:  # fmt: skip
    """The state kept here, or the checkpoint on disk if another process saved it further on."""
    saved_at, state, seen = kept
    now = cache.fingerprint(checkpoint)
    if now is None or now == seen:
        return state
    disk = cache.load(checkpoint)
    _KEPT[checkpoint] = (saved_at, state, now)
    if (
        _valid(disk, kind, fd, st, same_inode)
        and disk.get("from", 0) == state.get("from", 0)
        and disk["size"] > state["size"]
    ):
        _KEPT[checkpoint] = (saved_at, disk, now)
        return disk  # type: ignore[no-any-return]
    return state


def _save(
    checkpoint: Path, state: dict[str, Any], kept: tuple[float, dict[str, Any], list[int] | None] | None
) -> None:
    if not KEEP or cache.holding():
        cache.save(checkpoint, state)
        return
    now = time.monotonic()
    if kept is None or now - kept[0] >= SAVE_S:
        cache.save(checkpoint, state)
        _KEPT[checkpoint] = (now, state, cache.fingerprint(checkpoint))
    else:
        _KEPT[checkpoint] = (kept[0], state, _KEPT.get(checkpoint, kept)[2])


def _catch_up(
    checkpoint: Path,
    kind: str,
    init: Callable[[], dict[str, Any]],
    each: Callable[..., None],
    fd: int,
    st: os.stat_result,
    state: dict[str, Any],
    whole: bool,
) -> tuple[dict[str, Any], int]:
    """A whole-history state to replace ``state`` with: the one on disk (a reader inside
    ``cache.held`` keeps its own), else ``<checkpoint>.older``, else one from the top. With
    ``whole`` it is folded to the end now; else only when it is within ``STEP`` bytes of the
    end (the background fold brought it there); otherwise the fold is left to ``ledger fold``
    (``BEHIND``). Returns (the state to use, bytes read)."""
    older = checkpoint.with_name(checkpoint.name + ".older")
    behind: Any = cache.load(checkpoint, disk=True) if cache.holding() else None
    if not _valid(behind, kind, fd, st, False) or behind.get("from"):
        behind = cache.load(older)
    if not _valid(behind, kind, fd, st, False):
        behind = _fresh(kind, init, fd, 0)
    start = behind["size"]
    if not whole and st.st_size - start > STEP:
        BEHIND.setdefault(Path(os.path.abspath(checkpoint)).parent, set()).add(checkpoint.name)
        state["older"] = start
        return state, 0
    each(behind, fd, st.st_size)
    behind["inode"] = st.st_ino
    cache.save(checkpoint, behind)  # caught up: the whole history is the state now
    if not cache.holding():
        try:
            older.unlink()
        except FileNotFoundError:
            pass
    return behind, st.st_size - start


def progress(state: dict[str, Any]) -> float | None:
    """How much of the history before the state's window the catch-up has folded (0 to 1), or
    None for a state that holds the whole history."""
    start = state.get("from", 0)
    return None if not start else min(1.0, state.get("older", 0) / start)


def start_at(
    path: Path, checkpoint: Path, kind: str, init: Callable[[], dict[str, Any]], offset: int
) -> None:
    """Make a checkpoint that has folded in the ledger up to ``offset`` (the end of a whole line
    past the table header) without reading it: for a state that only wants what comes next."""
    fd = open_fd(path)
    try:
        size = min(offset, os.fstat(fd).st_size)
        state = {**_fresh(kind, init, fd, 0), "size": size, "in_table": True}
        state["boundary"] = boundary(fd, size)
    finally:
        os.close(fd)
    cache.save(checkpoint, state)


def follow(
    path: Path,
    checkpoint: Path,
    kind: str,
    init: Callable[[], dict[str, Any]],
    fold: Fold,
    *,
    whole: bool = False,
    by_day: bool = False,
) -> tuple[dict[str, Any], int]:
    """Return (the state brought up to date, the number of ledger bytes read to do it).

    ``kind`` names the state's format: a checkpoint of another kind is rebuilt. ``fold`` is
    called with the raw (still escaped) cells of each whole data line, in order. A state may
    hold only recent history (see the module's docstring); ``whole``: the whole, now;
    ``by_day``: its recent lines are all of today's (``day_window_start``).
    """

    def each(state: dict[str, Any], fd: int, size: int) -> None:
        for line in _lines(fd, state, size):
            if not state["in_table"]:
                state["in_table"] = line == HEADER
                continue
            cells = split_cells(line)
            if cells is not None and len(cells) == len(COLUMNS):
                state["lines"] += 1
                fold(state, cells)

    first = day_window_start if by_day else window_start
    return _walk(path, checkpoint, kind, init, each, first=first, whole=whole)


def follow_lines(
    path: Path,
    checkpoint: Path,
    kind: str,
    init: Callable[[], dict[str, Any]],
    fold: FoldLine,
    *,
    same_inode: bool = False,
    first: Callable[[int, int], int] = window_start,
) -> tuple[dict[str, Any], int]:
    """``follow`` for a state that reads every physical line as it is, the preamble included
    (the chain check: it numbers lines and hashes them); ``same_inode`` as for ``_walk``. A
    first call starts at ``first(fd, size)`` and never folds in what came before."""

    def each(state: dict[str, Any], fd: int, size: int) -> None:
        for line in _lines(fd, state, size):
            fold(state, line)

    return _walk(path, checkpoint, kind, init, each, same_inode, first=first, older=False)
