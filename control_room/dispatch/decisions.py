"""What only a person decides: Done, retry, park, cancel, approve. Each is logged."""

from __future__ import annotations

from typing import Any

from control_room import ledger
from control_room.errors import ConflictError, InvalidError
from control_room.room import swarm
from control_room.room.layout import Room
from control_room.timeutil import now_iso
from control_room.views import context


def _load(room: Room, task_id: str, allowed: tuple[str, ...], verb: str) -> tuple[str, dict[str, Any]]:
    state, path = swarm.locate(room, task_id)
    if state not in allowed:
        hint = " (stop it first: `control-room stop`)" if state == "running" else ""
        raise ConflictError(
            f"cannot {verb} {task_id}: it is in swarm/{state}/, not in "
            f"{' or '.join(f'swarm/{s}/' for s in allowed)}{hint}"
        )
    task, problems = swarm.read_task(path)
    if problems and verb != "cancel":
        raise InvalidError(f"cannot {verb} {task_id}: {path} is not a valid task: {'; '.join(problems)}")
    return state, task


def mark_done(room: Room, task_id: str, who: str) -> dict[str, Any]:
    """A person marks a passed task Done; passing alone never is."""
    _, task = _load(room, task_id, ("done",), "mark Done")
    if task.get("done_at"):
        raise ConflictError(
            f"{task_id} was marked Done already, at {task['done_at']} by {task.get('done_by')}"
        )
    updated = {**task, "done_at": now_iso(), "done_by": who}
    from control_room.store.files import atomic_write

    atomic_write(swarm.task_file(room, "done", task_id), swarm.dumps(updated))
    ledger.append(
        room.ledger,
        "done",
        task=task_id,
        route=task.get("route", ""),
        outcome="done",
        detail=f"marked Done by {who}",
    )
    context.refresh(room)
    return updated


def retry(room: Room, task_id: str) -> str:
    """Back to the queue with a fresh round count, from parked, rejected, cancelled or done."""
    state, task = _load(room, task_id, ("parked", "rejected", "cancelled", "done"), "retry")
    fresh = {
        k: v
        for k, v in task.items()
        if k not in ("rounds", "last_failure", "passed_at", "done_at", "done_by")
    }
    swarm.move(room, task_id, state, "queue", task=fresh)
    ledger.append(
        room.ledger,
        "retry",
        task=task_id,
        route=task.get("route", ""),
        outcome="queued",
        detail=f"from swarm/{state}/ by a person",
    )
    context.refresh(room)
    return state


def park(room: Room, task_id: str, reason: str) -> None:
    _, task = _load(room, task_id, ("queue",), "park")
    swarm.move(
        room,
        task_id,
        "queue",
        "parked",
        reason=f"Parked by a person at {now_iso()}.\n\n{reason or '(no reason given)'}\n",
    )
    ledger.append(
        room.ledger,
        "park",
        task=task_id,
        route=task.get("route", ""),
        outcome="parked",
        detail=reason or "by a person",
    )
    context.refresh(room)


def cancel(room: Room, task_id: str, reason: str) -> str:
    state, task = _load(room, task_id, ("queue", "parked", "rejected"), "cancel")
    swarm.move(
        room,
        task_id,
        state,
        "cancelled",
        reason=f"Cancelled at {now_iso()} from swarm/{state}/.\n\n{reason or '(no reason given)'}\n",
    )
    ledger.append(
        room.ledger,
        "cancel",
        task=task_id,
        route=task.get("route", ""),
        outcome="cancelled",
        detail=reason or f"from swarm/{state}/",
    )
    context.refresh(room)
    return state
