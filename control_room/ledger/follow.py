"""Keeping a derived state current with the ledger, reading only what was appended.

A derived state (the status summary, the digest) is a JSON checkpoint that records how many
bytes of the ledger it has folded in and the bytes just before that offset. On the next call,
if the ledger still holds those bytes there, only the lines after the offset are read and
folded in; otherwise (the file was rewritten or shrank) the state is rebuilt from the start.
Deleting a checkpoint only costs one full rebuild.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from control_room.ledger.line import COLUMNS, HEADER, split_cells
from control_room.store import cache

BOUNDARY = 64
CHUNK = 1 << 20

Fold = Callable[[dict[str, Any], list[str]], None]  # (state, raw cells of one line)


def _boundary(fd: int, size: int) -> str:
    start = max(0, size - BOUNDARY)
    return os.pread(fd, size - start, start).hex()


def follow(
    path: Path, checkpoint: Path, kind: str, init: Callable[[], dict[str, Any]], fold: Fold
) -> tuple[dict[str, Any], int]:
    """Return (the state brought up to date, the number of ledger bytes read to do it).

    ``kind`` names the state's format: a checkpoint of another kind is rebuilt. ``fold`` is
    called with the raw (still escaped) cells of each whole data line, in order.
    """
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        state = cache.load(checkpoint)
        if not (
            isinstance(state, dict)
            and state.get("kind") == kind
            and isinstance(state.get("size"), int)
            and state["size"] <= size
            and state.get("boundary") == _boundary(fd, state["size"])
        ):
            state = {"kind": kind, "size": 0, "in_table": False, "lines": 0, **init()}
        start = pos = state["size"]
        if start >= size:
            return state, 0
        carry = b""
        while pos < size:
            block = carry + os.pread(fd, min(CHUNK, size - pos), pos)
            pos += len(block) - len(carry)
            *whole, carry = block.split(b"\n")  # a torn tail waits for its newline
            for raw in whole:
                line = raw.decode("utf-8", "replace")
                if not state["in_table"]:
                    state["in_table"] = line == HEADER
                    continue
                cells = split_cells(line)
                if cells is not None and len(cells) == len(COLUMNS):
                    state["lines"] += 1
                    fold(state, cells)
        state["size"] = size - len(carry)
        state["boundary"] = _boundary(fd, state["size"])
        cache.save(checkpoint, state)
        return state, size - start
    finally:
        os.close(fd)
