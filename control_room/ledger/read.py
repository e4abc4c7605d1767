"""Reading the ledger without loading it: forward streaming and backward tailing."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from control_room.ledger.line import COLUMNS, HEADER, Col, Entry, parse, split_cells, unescape
from control_room.store.files import open_fd, open_regular

FIRST_BLOCK = 1 << 12  # most reads need only the last line or two
MAX_BLOCK = 1 << 20


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
    """The hash of the last whole line written by ``writer`` before byte ``end``, if any: the
    last line that ``parse`` reads as an entry of ``writer``, its two cells read alone."""
    for line in data_lines_backward(fd, end):
        cells = split_cells(line)
        if cells is not None and len(cells) == len(COLUMNS) and unescape(cells[Col.WRITER]) == writer:
            return unescape(cells[Col.HASH])
    return None


def torn_and_last_hash(fd: int, end: int, writer: str) -> tuple[bool, str | None]:
    """Whether the file's last line lacks its newline (torn), and ``last_hash``, from one read of
    the file's last KiB when the last line is ``writer``'s (or the header); else ``last_hash``
    reads backwards as far as it must."""
    block = os.pread(fd, min(end, TAIL_BLOCK), max(0, end - TAIL_BLOCK))
    torn = block[-1:] not in (b"\n", b"")
    lines = block.split(b"\n")[: None if torn else -1]  # the last whole or torn line is lines[-1]
    if len(lines) > 1 or (lines and end <= TAIL_BLOCK):  # it starts in the block
        last = lines[-1].decode("utf-8", errors="replace")
        if last == HEADER:
            return torn, None
        cells = split_cells(last)
        if cells is not None and len(cells) == len(COLUMNS) and unescape(cells[Col.WRITER]) == writer:
            return torn, unescape(cells[Col.HASH])
    return torn, last_hash(fd, end, writer)


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
