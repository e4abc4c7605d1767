"""Findings (SPEC §7): death loops and unsupported CONFIRMED claims, each with the ledger
lines that show it. Read from the digest's state, so this costs only the new ledger lines."""

from __future__ import annotations

from typing import Any

from control_room import ledger
from control_room.errors import ConflictError, InvalidError
from control_room.knowledge import history
from control_room.ledger import events
from control_room.room.layout import Room
from control_room.room.settings import Settings


def gather(room: Room, settings: Settings) -> dict[str, Any]:
    st, _ = history.state(room)
    loops = history.death_loops(st, settings.death_loop_n)
    return {
        "death_loops": [{"key": k, **v} for k, v in loops.items()],
        "unsupported_claims": [
            {"time": t, "id": i, "task": task, "route": route, "detail": d}
            for t, i, task, route, d in st["unsupported"]
        ],
        "unsupported_total": st["unsupported_n"],
    }


def resume(room: Room, settings: Settings, key: str, because: str) -> None:
    """A person (or the orchestrator) releases a route held by a death loop."""
    if not because.strip():
        raise InvalidError("releasing a held route needs --because: what changed")
    if key not in history.held(room, settings):
        raise ConflictError(f"{key} is not held: no death loop on it")
    route, task = (key, "") if not key.startswith("task:") else ("", key[5:])
    ledger.append(room.ledger, events.ROUTE_RESUME, route=route, task=task, detail=because)
