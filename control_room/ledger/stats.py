"""Aggregates over the ledger, always streamed: full ``stats`` and the incremental ``summary``."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from control_room.ledger import events
from control_room.ledger.follow import follow, misses
from control_room.ledger.line import Col, unescape
from control_room.ledger.read import entries


def stats(path: Path) -> dict[str, Any]:
    """Events, outcomes and spend per day, per adapter and per route."""

    def bucket() -> dict[str, Any]:
        return {"events": 0, "outcomes": Counter(), "spend_usd": 0.0}

    groups: dict[str, dict[str, dict[str, Any]]] = {
        "day": defaultdict(bucket),
        "adapter": defaultdict(bucket),
        "route": defaultdict(bucket),
    }
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
        return {"events": b["events"], "outcomes": dict(b["outcomes"]), "spend_usd": round(b["spend_usd"], 6)}

    out: dict[str, Any] = {"total": plain(total)}
    for name, g in groups.items():
        out[f"by_{name}"] = {k: plain(v) for k, v in sorted(g.items())}
    return out


def named_tasks(path: Path, cache_file: Path) -> set[str]:
    """The ids of every task a line of the ledger is about (its task column), kept current
    incrementally (see follow): whether the room has history of a task, for admission (the
    whole history: asked only of a task file written before 0.4)."""
    state, _ = follow(path, cache_file, "tasks-1", lambda: {"tasks": set()}, _task, whole=True)
    found: set[str] = state["tasks"]
    return found


def _task(state: dict[str, Any], cells: list[str]) -> None:
    if cells[Col.TASK]:
        state["tasks"].add(unescape(cells[Col.TASK]))


def _count(state: dict[str, Any], cells: list[str]) -> None:
    """Only time, event and cost are needed: no full parse."""
    event = unescape(cells[Col.EVENT])
    state["events"][event] = state["events"].get(event, 0) + 1
    cost = cells[Col.COST_USD]
    if cost != "0":
        try:
            day = cells[Col.TIME][:10]
            state["spend_by_day"][day] = round(state["spend_by_day"].get(day, 0.0) + float(cost), 6)
        except ValueError:
            pass


def _summary_init() -> dict[str, Any]:
    return {"events": {}, "spend_by_day": {}}


def summary(path: Path, cache_file: Path, *, whole: bool = False) -> dict[str, Any]:
    """Line count, events by name and spend by day, kept current incrementally (see follow;
    on a big ledger maybe of recent lines only, ``from_time`` on: ``whole`` for all)."""
    state, _ = follow(path, cache_file, "summary-1", _summary_init, _count, whole=whole, by_day=True)
    return state


def spent_on(path: Path, cache_file: Path, day: str) -> float:
    """What the ledger's lines of ``day`` spent: from the summary, whole when the summary's
    recent lines do not reach back past that day's first line."""
    s = summary(path, cache_file)
    if misses(s, day):
        s = summary(path, cache_file, whole=True)
    spent: float = s["spend_by_day"].get(day, 0.0)
    return spent


def _tokens(state: dict[str, Any], cells: list[str]) -> None:
    if unescape(cells[Col.EVENT]) != events.RESULT.name:
        return
    from control_room.ledger import result  # only for a room with a daily token budget

    run = result.read(unescape(cells[Col.DETAIL]))
    n = (run.input_tokens or 0) + (run.output_tokens or 0)
    if n:
        day = cells[Col.TIME][:10]
        state["tokens_by_day"][day] = state["tokens_by_day"].get(day, 0) + n


def _tokens_init() -> dict[str, Any]:
    return {"tokens_by_day": {}}


def tokens(path: Path, cache_file: Path, *, whole: bool = False) -> dict[str, Any]:
    """Tokens (in and out) the runs of each UTC day used, from their ``result`` lines, kept
    current incrementally (see follow): read only where CONTROL.md sets ``daily_budget_tokens``."""
    init = _tokens_init
    state, _ = follow(path, cache_file, "tokens-1", init, _tokens, whole=whole, by_day=True)
    return state


def tokens_on(path: Path, cache_file: Path, day: str) -> int:
    """The tokens of ``day``, whole when the recent lines do not reach back past its first
    line (as ``spent_on``)."""
    state = tokens(path, cache_file)
    if misses(state, day):
        state = tokens(path, cache_file, whole=True)
    used: int = state["tokens_by_day"].get(day, 0)
    return used
