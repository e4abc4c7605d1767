"""Reading the ledger without loading it: forward streaming and backward tailing."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from control_room.ledger.line import COLUMNS, HEADER, Col, Entry, escape, parse, split_cells, unescape
from control_room.store.files import open_fd, open_regular

FIRST_BLOCK = 1 << 12  # most reads need only the last line or two
MAX_BLOCK = 1 << 20
SEARCH_HEAD = 1 << 16  # the table header must be this near the top for a byte search or a window
SEARCH_BLOCK = 1 << 22


def lines_backward(fd: int, end: int) -> Iterator[str]:
    """Physical lines of the file behind ``fd``, last first, from byte ``end`` backwards.

    A last line without its newline (a torn write) is yielded as it is.
    """
    pos = end
    carry = b""
    block = FIRST_BLOCK
    while pos > 0:
        size = min(block, pos)
        block = min(block * 2, MAX_BLOCK)
        pos -= size
        chunk = os.pread(fd, size, pos) + carry
        parts = chunk.split(b"\n")
        carry = parts[0]
        for raw in reversed(parts[1:]):
            yield raw.decode("utf-8", errors="replace")
    yield carry.decode("utf-8", errors="replace")


@contextmanager
def opened(path: Path) -> Iterator[int]:
    """A read-only descriptor of the ledger (or another log) at ``path``, closed after."""
    fd = open_fd(path)
    try:
        yield fd
    finally:
        os.close(fd)


def backward(path: Path) -> Iterator[str]:
    """Physical lines of the file at ``path``, last first (nothing when it is not there); the
    file is open only while the caller iterates."""
    try:
        with opened(path) as fd:
            yield from lines_backward(fd, os.fstat(fd).st_size)
    except FileNotFoundError:
        return


def entries_since(path: Path, since: str = "") -> Iterator[Entry]:
    """The well-formed entries of the ledger at ``path``, last first, back to the table header or
    to the first one older than ``since`` (an ISO time; "": no such bound)."""
    for line in backward(path):
        if line == HEADER:
            return
        entry = parse(line)
        if entry is None:
            continue
        if since and entry.time < since:
            return
        yield entry


def data_lines_backward(fd: int, end: int) -> Iterator[str]:
    """The lines before byte ``end`` back to the table header (not included), last first."""
    first = True
    for line in lines_backward(fd, end):
        if first:
            first = False
            if line == "":  # the empty string after the final newline
                continue
        if line == HEADER:
            return
        yield line


def tail(path: Path, n: int) -> list[str]:
    """The last ``n`` lines after the table header, oldest first, read from the end."""
    if n <= 0:
        return []
    out: list[str] = []
    with opened(path) as fd:
        for line in data_lines_backward(fd, os.fstat(fd).st_size):
            if line.startswith("|---"):
                break
            out.append(line)
            if len(out) == n:
                break
    return out[::-1]


def last_hash(fd: int, end: int, writer: str) -> str | None:
    """The hash of the last whole line written by ``writer`` before byte ``end``, if any.

    Searched for as bytes (its cell, escaped), a block of whole lines at a time from the end, and
    only a line whose third cell it is gets parsed: a
    writer's first line in a big ledger costs one scan of the file at memory speed, not a parse
    of every line."""
    top = table_start(fd)
    if top is None:  # no header near the top: line by line
        for line in data_lines_backward(fd, end):
            entry = parse(line)
            if entry is not None and entry.writer == writer:
                return entry.hash
        return None
    needle = f" | {escape(writer)} | ".encode()
    pos = end
    size = FIRST_BLOCK  # most appends find their writer's line in the last few
    while pos > top:
        start = max(top, pos - size)
        size = min(size * 4, SEARCH_BLOCK)
        block = os.pread(fd, pos - start, start)
        cut = block.find(b"\n") + 1 if start > top else 0  # a line begun before the block: next time
        if cut >= len(block):
            cut = 0  # one line longer than a block: no ledger line, skipped
        at = len(block)
        while (at := block.rfind(needle, cut, at)) >= 0:
            line_start = block.rfind(b"\n", 0, at) + 1
            if block.count(b" | ", line_start, at) != 1:
                continue  # not the third cell (| time | id | writer |): look further back
            line_end = block.find(b"\n", at)
            entry = parse(block[line_start : line_end if line_end >= 0 else None].decode("utf-8", "replace"))
            if entry is not None and entry.writer == writer:
                return entry.hash
            at = line_start
        pos = start + cut if cut else start
    return None


def table_start(fd: int) -> int | None:
    """The offset just past the table header's line, if the header is near the top."""
    header = HEADER.encode() + b"\n"
    head = os.pread(fd, FIRST_BLOCK, 0)  # a preamble is short; a longer one is read whole below
    if header not in head:
        head = os.pread(fd, SEARCH_HEAD, 0)
    if head.startswith(header):
        return len(header)
    at = head.find(b"\n" + header)
    return None if at < 0 else at + 1 + len(header)


def torn_and_last_hash(fd: int, end: int, writer: str) -> tuple[bool, str | None]:
    """Whether the file's last line lacks its newline (torn), and ``last_hash``, from one read of
    the file's last KiB when the last line is ``writer``'s; else ``last_hash`` searches backwards
    as far as it must (to the first table header: a header line further down is no table's start,
    as ``verify`` reads it)."""
    start = end - TAIL_BLOCK if end > TAIL_BLOCK else 0
    block = os.pread(fd, end - start, start)
    parts = block.rsplit(b"\n", 2)  # [..., the last line, b""], or [..., the last line] when torn
    torn = parts[-1] != b""
    n = len(parts) - (not torn)  # lines, the last one's start included when n > 1
    if n > 1 or (n and not start):  # the last line starts in the block
        last = parts[n - 1]
        cells = last.split(b" | ")
        if (  # then they are split_cells's, split whole: less "| " before the first, " |" after the last
            len(cells) == _COLUMNS
            and cells[0][:2] == b"| "
            and cells[Col.HASH][-2:] == b" |"
            and last.find(b"\\") < 0  # no escapes to read (bytes' `in` is slower than find)
        ):
            if cells[Col.WRITER].decode("utf-8", "replace") == writer and last != _HEADER:
                return torn, cells[Col.HASH][:-2].decode("utf-8", "replace")
        elif last != _HEADER:
            split = split_cells(last.decode("utf-8", errors="replace"))
            if split is not None and len(split) == _COLUMNS and unescape(split[Col.WRITER]) == writer:
                return torn, unescape(split[Col.HASH])
    return torn, last_hash(fd, end, writer)


_HEADER = HEADER.encode()  # the header reads as a row of writer "writer"
_COLUMNS = len(COLUMNS)
TAIL_BLOCK = 1 << 10  # a ledger line is ~200 bytes


def numbered_lines(path: Path) -> Iterator[tuple[int, str, bool]]:
    """(1-based line number, text without newline, whether the newline was there) for every
    line; streams the file."""
    with open_regular(path) as f:
        for number, raw in enumerate(f, 1):
            whole = raw.endswith(b"\n")
            text = (raw[:-1] if whole else raw).decode("utf-8", "replace")
            yield number, text, whole


def has_header(path: Path) -> bool:
    """Whether the ledger at ``path`` has its table header: read up to it (the whole file when it
    has none). Readers start after the header, so without it no line is read."""
    return any(line == HEADER for _, line, _ in numbered_lines(path))


def table_lines(path: Path) -> Iterator[tuple[int, str, bool]]:
    """``numbered_lines`` after the table header (the preamble above it is not ledger)."""
    in_table = False
    for number, line, whole in numbered_lines(path):
        if in_table:
            yield number, line, whole
        else:
            in_table = line == HEADER


def entries(path: Path) -> Iterator[Entry]:
    """Every well-formed entry, in file order; streams the file."""
    for _, line, _ in table_lines(path):
        entry = parse(line)
        if entry is not None:
            yield entry
