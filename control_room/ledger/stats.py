"""Aggregates over the ledger, always streamed: full ``stats`` and the incremental ``summary``."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from control_room.ledger import events
from control_room.ledger.follow import follow
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
    incrementally (see follow): whether the room has history of a task, for admission."""
    state, _ = follow(path, cache_file, "tasks-1", lambda: {"tasks": set()}, _task)
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


def summary(path: Path, cache_file: Path) -> dict[str, Any]:
    """Line count, events by name and spend by day, kept current incrementally (see follow)."""
    state, _ = follow(path, cache_file, "summary-1", lambda: {"events": {}, "spend_by_day": {}}, _count)
    return state


def _tokens(state: dict[str, Any], cells: list[str]) -> None:
    if unescape(cells[Col.EVENT]) != events.RESULT.name:
        return
    from control_room.ledger import result  # only for a room with a daily token budget

    run = result.read(unescape(cells[Col.DETAIL]))
    n = (run.input_tokens or 0) + (run.output_tokens or 0)
    if n:
        day = cells[Col.TIME][:10]
        state["tokens_by_day"][day] = state["tokens_by_day"].get(day, 0) + n


def tokens_by_day(path: Path, cache_file: Path) -> dict[str, int]:
    """Tokens (in and out) the runs of each UTC day used, from their ``result`` lines, kept
    current incrementally (see follow): read only where CONTROL.md sets ``daily_budget_tokens``."""
    state, _ = follow(path, cache_file, "tokens-1", lambda: {"tokens_by_day": {}}, _tokens)
    found: dict[str, int] = state["tokens_by_day"]
    return found
