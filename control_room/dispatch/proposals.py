"""Tasks proposed by an agent whose role ``writes_tasks`` (the orchestrator).

An orchestrator proposes tasks as JSON objects in fenced ```json blocks of its answer. After a
passing run, each proposal goes through ``swarm.add``: the same validation as any other task
(required fields, a runnable adapter, no killed route, the gate's limits); at most
CONTROL.md ``max_new_tasks`` are queued per run. Each refusal is logged with its reason.
"""

from __future__ import annotations

import json
import re
from typing import Any

from control_room.room.layout import Room

_FENCE = re.compile(r"^```json[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)


def extract(text: str) -> list[tuple[int, Any, str | None]]:
    """(line, parsed object or None, problem or None) for each ```json block in ``text``."""
    out: list[tuple[int, Any, str | None]] = []
    for m in _FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        try:
            data = json.loads(m.group(1))
        except (ValueError, RecursionError) as exc:
            out.append((line, None, f"not valid JSON: {exc}"))
            continue
        for item in data if isinstance(data, list) else [data]:
            out.append((line, item, None if isinstance(item, dict) else "a proposal must be a JSON object"))
    return out


def accept(room: Room, gate: dict[str, Any], source: str, text: str) -> tuple[list[str], list[str]]:
    """Queue the proposals in ``text`` (from the run of task ``source``); return (queued ids,
    refusals). Every outcome is in the ledger."""
    from control_room import ledger
    from control_room.errors import ControlRoomError
    from control_room.room import swarm

    queued: list[str] = []
    refused: list[str] = []
    cap = int(gate["max_new_tasks"])
    for line, data, problem in extract(text):
        if problem is None and len(queued) >= cap:
            problem = f"over max_new_tasks ({cap}) for one run"
        if problem is None:
            try:
                task = swarm.add(room, dict(data), source=source)
                queued.append(task["id"])
                continue
            except ControlRoomError as exc:
                problem = str(exc)
        what = f"proposal at line {line} of {source}'s answer: {problem}"
        refused.append(what)
        ledger.append(room.ledger, "proposal-refused", task=source, outcome="refused", detail=what)
    return queued, refused
