"""Aggregates over the ledger, always streamed: full ``stats`` and the incremental ``summary``."""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from control_room.ledger.line import COLUMNS, HEADER, split_cells, unescape
from control_room.ledger.read import entries
from control_room.store import cache


def stats(path: Path) -> dict[str, Any]:
    """Events, outcomes and spend per day, per adapter and per route."""

    def bucket() -> dict[str, Any]:
        return {"events": 0, "outcomes": Counter(), "spend_usd": 0.0}

    groups: dict[str, dict[str, dict[str, Any]]] = {
        "day": defaultdict(bucket), "adapter": defaultdict(bucket), "route": defaultdict(bucket),
    }  # fmt: skip
    total = bucket()
    for e in entries(path):
        cost = e.cost
        keys = {"day": e.time[:10], "adapter": e.adapter or "-", "route": e.route or "-"}
        for b in (total, *(groups[name][key] for name, key in keys.items())):
            b["events"] += 1
            b["spend_usd"] += cost
            if e.outcome:
                b["outcomes"][e.outcome] += 1

    def plain(b: dict[str, Any]) -> dict[str, Any]:
        return {"events": b["events"], "outcomes": dict(b["outcomes"]),
                "spend_usd": round(b["spend_usd"], 6)}  # fmt: skip

    out: dict[str, Any] = {"total": plain(total)}
    for name, g in groups.items():
        out[f"by_{name}"] = {k: plain(v) for k, v in sorted(g.items())}
    return out


_BOUNDARY = 64
_CHUNK = 1 << 20


def _count(line: str, state: dict[str, Any], events: Counter[str], spend: dict[str, float]) -> None:
    if not state["in_table"]:
        state["in_table"] = line == HEADER
        return
    cells = split_cells(line)  # no full parse: only time, event and cost are needed
    if cells is None or len(cells) != len(COLUMNS):
        return
    state["lines"] += 1
    events[unescape(cells[3])] += 1
    if cells[8] != "0":
        try:
            spend[cells[0][:10]] += float(cells[8])
        except ValueError:
            pass


def _boundary(fd: int, size: int) -> str:
    start = max(0, size - _BOUNDARY)
    return os.pread(fd, size - start, start).hex()


def summary(path: Path, cache_file: Path) -> dict[str, Any]:
    """Line count, events by name and spend by day, kept in a disposable checkpoint.

    Only the bytes appended since the checkpoint are read. If the file no longer starts with
    what the checkpoint saw (the bytes just before its offset differ, or the file shrank), the
    summary is rebuilt from the start.
    """
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        state = cache.load(cache_file)
        if not (
            isinstance(state, dict)
            and state.get("v") == 1
            and isinstance(state.get("size"), int)
            and state["size"] <= size
            and state.get("boundary") == _boundary(fd, state["size"])
        ):
            state = {"v": 1, "size": 0, "in_table": False, "lines": 0, "events": {},
                     "spend_by_day": {}}  # fmt: skip
        start = state["size"]
        if start < size:
            events = Counter(state["events"])
            spend: defaultdict[str, float] = defaultdict(float, state["spend_by_day"])
            pos, carry = start, b""
            while pos < size:
                block = carry + os.pread(fd, min(_CHUNK, size - pos), pos)
                pos += len(block) - len(carry)
                *whole, carry = block.split(b"\n")  # a torn tail waits for its newline
                for raw in whole:
                    _count(raw.decode("utf-8", "replace"), state, events, spend)
            state["events"] = dict(events)
            state["spend_by_day"] = {k: round(v, 6) for k, v in spend.items()}
            state["size"] = size - len(carry)
            state["boundary"] = _boundary(fd, state["size"])
            cache.save(cache_file, state)
        return state
    finally:
        os.close(fd)
