"""Findings (SPEC §7): death loops and unsupported CONFIRMED claims, each with the ledger
lines that show it. Read from the digest's state, so this costs only the new ledger lines."""

from __future__ import annotations

from typing import Any

from control_room.room.layout import Room


def gather(room: Room, gate: dict[str, Any]) -> dict[str, Any]:
    from control_room.knowledge import digest

    st, _ = digest.state(room)
    loops = digest.death_loops(st, int(gate["death_loop_n"]))
    return {
        "death_loops": [{"key": k, **v} for k, v in loops.items()],
        "unsupported_claims": [
            {"time": t, "id": i, "task": task, "route": route, "detail": d}
            for t, i, task, route, d in st["unsupported"]
        ],
        "unsupported_total": st["unsupported_n"],
    }


def resume(room: Room, key: str, because: str) -> None:
    """A person (or the orchestrator) releases a route held by a death loop."""
    from control_room import ledger
    from control_room.errors import ConflictError, InvalidError
    from control_room.knowledge import digest
    from control_room.room import settings as control
    from control_room.views import context

    if not because.strip():
        raise InvalidError("releasing a held route needs --because: what changed")
    if key not in digest.held(room, control.load(room)):
        raise ConflictError(f"{key} is not held: no death loop on it")
    route, task = (key, "") if not key.startswith("task:") else ("", key[5:])
    ledger.append(room.ledger, "route-resume", route=route, task=task, outcome="released", detail=because)
    digest.refresh(room)
    context.refresh(room)
