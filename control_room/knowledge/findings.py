"""Findings (SPEC §7): death loops, unsupported CONFIRMED claims and runs too big for their
model's context window (split them), each with the ledger lines that show it. Read from the
digest's state, so this costs only the new ledger lines."""

from __future__ import annotations

import os
from typing import Any

from control_room import ledger
from control_room.errors import ConflictError, InvalidError
from control_room.knowledge import history
from control_room.ledger import events
from control_room.room.layout import Room
from control_room.room.settings import Settings
from control_room.store.files import read_optional
from control_room.text import escaped


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
        "escalated": escalated(room),
        "kill_proposals": [
            {"key": k, "time": t, "id": i, "task": task, "detail": d}
            for k, (t, i, task, d) in sorted(st.get("proposals", {}).items())
        ],
        "too_big": [
            {"time": t, "id": i, "task": task, "route": route, "detail": d}
            for t, i, task, route, d in st.get("too_big", [])
        ],
    }


ESCALATED = "for a person: its reviews disagree"  # how review.py's parking reason starts


def escalated(room: Room) -> list[dict[str, str]]:
    """Parked tasks whose reviews disagreed and went to a person (arbiter's escalate, or a
    second arbitration): both positions are in their ``.reason``."""
    out: list[dict[str, str]] = []
    folder = room.state_dir("parked")
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".reason"))
    except OSError:
        return out
    for name in names:
        head = (read_optional(folder / name) or "")[:200]
        if ESCALATED in head:
            out.append({"task": name[: -len(".reason")], "reason": f"swarm/parked/{name}"})
    return out


def resume(room: Room, settings: Settings, key: str, because: str) -> None:
    """A person (or the orchestrator) releases a route held by a death loop."""
    if not because.strip():
        raise InvalidError("releasing a held route needs --because: what changed")
    if key not in history.held(room, settings):
        raise ConflictError(f"{escaped(key)} is not held: no death loop on it")  # a person's words: one line
    route, task = (key, "") if not key.startswith("task:") else ("", key[5:])
    ledger.append(room.ledger, events.ROUTE_RESUME, route=route, task=task, detail=because)
