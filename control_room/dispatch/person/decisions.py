"""What only a person decides: approve, Done, retry, park, cancel. Each is logged. (Accepting a
task whose reviews have no verdict is ``dispatch.review.verdicts.accept``: it settles reviews.)"""

from __future__ import annotations

from typing import Any

from control_room import ledger
from control_room.errors import ConflictError, InvalidError
from control_room.ledger import events
from control_room.room import settings as settings_file
from control_room.room import swarm, tasks
from control_room.room.layout import Room
from control_room.room.tasks import Task
from control_room.store.files import atomic_write, update
from control_room.text import escaped
from control_room.timeutil import now_iso


def _load(room: Room, task_id: str, allowed: tuple[str, ...], verb: str) -> tuple[str, Task]:
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


def approve(room: Room, task_id: str, gates: list[str], who: str) -> list[str]:
    """Record approvals for a task's gates in CONTROL.md; return the new ones.

    Only the ``approvals:`` entry is rewritten (as one flow-style YAML line), so the comments
    and the rest of the file stay as the person wrote them.
    """
    _, path = swarm.locate(room, task_id)
    task, _ = swarm.read_task(path)
    own = list(task.get("gate", []))
    wanted = gates or own
    if not wanted:
        raise InvalidError(f"task {task_id} has no gate to approve")
    unknown = [g for g in wanted if g not in own]
    if unknown:  # a gate as a person typed it, on one line
        named = ", ".join(map(escaped, unknown))
        raise InvalidError(f"task {task_id} has no gate {named} (its gates: {', '.join(own) or 'none'})")
    added: list[str] = []

    def change(text: str) -> str:
        added.clear()
        current = settings_file.parse(text, str(room.control))
        new: list[Any] = list(current.approvals)
        for g in wanted:
            if not current.approved(task_id, g):
                new.append({"task": task_id, "gate": g, "by": who, "at": now_iso()})
                added.append(g)
        return settings_file.set_value(text, "approvals", new) if added else text

    update(room.control, change)
    for g in added:
        ledger.append(room.ledger, events.APPROVE, task=task_id, detail=f"gate {g} by {who}")
    return added


def mark_done(room: Room, task_id: str, who: str) -> Task:
    """A person marks a passed task Done (with a repo: a merged one, from ``to-test/``);
    passing alone never is."""
    if swarm.task_file(room, "passed", task_id).exists():
        raise ConflictError(
            f"cannot mark Done {task_id}: it passed but is not merged yet (swarm/passed/); "
            f"`control-room integrate {task_id}` first"
        )
    state, task = _load(room, task_id, ("done", "to-test"), "mark Done")
    if task.get("done_at"):
        raise ConflictError(
            f"{task_id} was marked Done already, at {task['done_at']} by {task.get('done_by')}"
        )
    updated: Task = {**task, "done_at": now_iso(), "done_by": who}
    if state == "to-test":
        swarm.move(room, task_id, "to-test", "done", task=updated)
    else:
        atomic_write(swarm.task_file(room, "done", task_id), swarm.dumps(updated))
    ledger.append(
        room.ledger, events.DONE, task=task_id, route=task.get("route", ""), detail=f"marked Done by {who}"
    )
    return swarm.as_written(updated)


def retry(room: Room, task_id: str) -> str:
    """Back to the queue with a fresh round count, from parked, rejected, cancelled or done."""
    state, task = _load(room, task_id, ("parked", "rejected", "cancelled", "done"), "retry")
    fresh = tasks.without(
        task, "rounds", "dispatcher_deaths", "last_failure", "passed_at", "done_at", "done_by", "escalated"
    )
    swarm.move(room, task_id, state, "queue", task=fresh)
    ledger.append(
        room.ledger,
        events.RETRY,
        task=task_id,
        route=task.get("route", ""),
        detail=f"from swarm/{state}/ by a person",
    )
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
        room.ledger, events.PARK, task=task_id, route=task.get("route", ""), detail=reason or "by a person"
    )


CANCELLABLE = ("queue", "parked", "rejected")


def cancel(
    room: Room, task_id: str, reason: str, *, allowed: tuple[str, ...] = CANCELLABLE, note: str = ""
) -> str:
    """Cancel a task from one of the ``allowed`` folders (``passed/`` only through
    ``dispatch.merge.withdraw``, which first sets its work aside); ``note`` joins the reason and
    the ledger line. The review and arbiter tasks it still waits for go with it (``let_go``)."""
    state, task = _load(room, task_id, allowed, "cancel")
    said = (reason or "(no reason given)") + (f"\n\nOn cancel, {note}." if note else "")
    swarm.move(
        room,
        task_id,
        state,
        "cancelled",
        reason=f"Cancelled at {now_iso()} from swarm/{state}/.\n\n{said}\n",
    )
    ledger.append(
        room.ledger,
        events.CANCEL,
        task=task_id,
        route=task.get("route", ""),
        detail=(reason or f"from swarm/{state}/") + (f"; {note}" if note else ""),
    )
    let_go(room, task, f"cancelled with {task_id}, which it served")
    return state


PENDING = ("queue", "parked", "rejected")  # a helper here has not started; a running one finishes


def let_go(room: Room, task: Task, why: str) -> list[str]:
    """Cancel the review and arbiter tasks ``task`` waits for (its ``review_tasks`` and
    ``arbiter``) that have not started, one ``cancel`` line each: nothing is left to run for a
    task a person decided. One running finishes, and its verdict finds nothing waiting."""
    ids = [*task.get("review_tasks", []), *([task["arbiter"]] if task.get("arbiter") else [])]
    gone = []
    for helper in dict.fromkeys(ids):
        state = swarm.state_of(room, helper)
        if state not in PENDING:
            continue
        assert state is not None
        h, _ = swarm.read_task(swarm.task_file(room, state, helper))
        said = f"Cancelled at {now_iso()} from swarm/{state}/: {why}.\n"
        swarm.move(room, helper, state, "cancelled", reason=said)
        ledger.append(room.ledger, events.CANCEL, task=helper, route=h.get("route", ""), detail=why)
        gone.append(helper)
    return gone
