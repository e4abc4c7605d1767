"""A run written down whose cycle died before it moved the task: finished from what was written,
never run again.

``finish`` writes a run down in order: its results (meta.json, report.md, answer.md), its
``result`` line, then the task's move out of ``swarm/running/``. A cycle killed between the line
and the move left a task whose round the ledger has already judged. Sending it back to the
queue would run it twice (two ``result`` lines, a second commit of the same work, a pass paid
twice), so recovery looks for that line first: the result line of the task's current round
written since its claim, and does what the cycle would have done next (``finish.passed``, or
``finish.failed`` counting the round), from the results it kept.

A cycle killed after it moved a task out of ``running/`` but before what follows the move (a
pass's reviews queued, a review's verdict recorded and settled; a failed round's reviews with
``review_when: always``; the run's ROUTES.md row) left a claim file behind: ``finish.passed``
and ``finish.failed`` remove it last. Recovery finds that claim dead and does what was left
(``follow_up``), each step only if it was not done: never twice.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from control_room import errors, ledger
from control_room.dispatch.review import which
from control_room.dispatch.round.outcome import CycleResult
from control_room.dispatch.round.report import validate as validate_report
from control_room.dispatch.run import finish
from control_room.knowledge import routes
from control_room.ledger import events, result
from control_room.ledger.line import Entry
from control_room.ledger.read import entries_since
from control_room.room import results as results_folder
from control_room.room import roles, swarm
from control_room.room.layout import Room
from control_room.room.settings import Settings
from control_room.room.tasks import Task
from control_room.store import records
from control_room.store.files import read_bytes, read_optional


def written_down(room: Room, task: Task, claim: dict[str, Any] | None) -> Entry | None:
    """The ``result`` line of ``task``'s current round, if one was written since its claim; read
    backwards from the end, back to the task's claim line (or, without one, to the time its
    claim file says it started). None without a claim file: its cycle died before the run."""
    line = _since_claim(room, task["id"], claim).get(events.RESULT.name)
    this_round = int(task.get("rounds", 0)) + 1
    return line if line is not None and result.read(line.detail).round == this_round else None


def _since_claim(room: Room, tid: str, claim: dict[str, Any] | None) -> dict[str, Entry]:
    """Task ``tid``'s last line of each event since its claim (the claim file's), read backwards
    from the end to its claim line; none without a claim file."""
    found: dict[str, Entry] = {}
    if claim is None:
        return found
    for entry in entries_since(room.ledger, str(claim.get("started", ""))):  # back to the claim
        if entry.task != tid:
            continue
        if entry.event == events.CLAIM.name:
            break
        found.setdefault(entry.event, entry)
    return found


def finish_written(room: Room, settings: Settings, task: Task, line: Entry, why: str) -> str:
    """Do what the cycle that wrote ``line`` would have done next; what happened, in one line."""
    tid = task["id"]
    ledger.append(
        room.ledger,
        events.RECOVER,
        task=tid,
        route=task.get("route", ""),
        detail=f"claim is dead: {why}; its run was written down ({line.outcome}) before the cycle "
        "died: finished from its results, not run again",
    )
    folder = results_folder.folder(room, tid)
    meta = records.read_object(folder / "meta.json") or {}
    cost = float(line.cost_usd or 0)
    run = result.read(line.detail)
    if line.outcome == "fail":
        failures = meta.get("failures")
        why_failed = "; ".join(map(str, failures)) if isinstance(failures, list) and failures else run.failed
        done: CycleResult = finish.failed(room, settings, task, why_failed, cost)
    else:
        try:
            role_meta, _ = roles.read(room, run.role or roles.name_of(task))
        except errors.ControlRoomError:
            role_meta = {}  # the role went since: it wrote no tasks then
        written = finish.Written(
            task,
            line.adapter,
            role_meta.get("writes_tasks") is True,
            Path(str(meta.get("workdir") or room.root)),
            read_optional(folder / "answer.md") or "",
            validate_report(read_optional(folder / "report.md") or ""),
            f"round {run.round or 1}, written down before its cycle died",
        )
        done = finish.passed(room, settings, written, cost)
    return f"recovered {tid}: {why}; its run was written down already: {done.message}"


def follow_up(
    room: Room, settings: Settings, task_id: str, why: str, claim: dict[str, Any] | None = None
) -> str | None:
    """What follows a round's move, for a task whose cycle died after the move (its claim file
    left behind, ``claim``), each step only if it was not done: after a pass, a review's or an
    arbiter's verdict recorded (then the task it serves settled), or a reviewed task's reviews
    queued; after a failed round, its reviews (``review_when: always``); after either, ROUTES.md
    recounted from the ledger (the run's row may not have been written). What was done, in one
    line, or None."""
    found = swarm.locate(room, task_id)
    if found is None:
        return None
    state, path = found
    task, problems = swarm.read_task(path)
    if problems:
        return None
    seen = _since_claim(room, task_id, claim)
    judged = seen.get(events.RESULT.name)
    if state in ("passed", "done") and task.get("passed_at"):
        done = _after_pass(room, settings, task, state)
    elif state in ("queue", "parked") and judged is not None and judged.outcome == "fail":
        queued = events.REVIEW_QUEUED.name in seen  # before the cycle died
        done = "" if queued else _after_failure(room, settings, task, state)
    else:
        return None  # a requeue, a dead dispatcher: back in the queue, nothing follows there
    if judged is not None and task.get("route") and not which.serves(task) and routes.recount(room):
        done = "; ".join(filter(None, [done, "ROUTES.md recounted from the ledger"]))
    if not done:
        return None
    said = f"{why}; its cycle died after it moved the task to swarm/{state}/: {done}"
    ledger.append(
        room.ledger,
        events.RECOVER,
        task=task_id,
        route=task.get("route", ""),
        detail=f"claim is dead: {said}",
    )
    return f"recovered {task_id}: {said}"


def _after_pass(room: Room, settings: Settings, task: Task, state: str) -> str:
    """A pass's follow-ups not done yet (see ``follow_up``); what was done, or ""."""
    from control_room.dispatch.review import queueing, verdicts  # after a crash only: not for a plain cycle

    task_id = task["id"]
    if which.serves(task) and state == "done":
        if not task.get("verdict"):
            folder = results_folder.folder(room, task_id)
            meta = records.read_object(folder / "meta.json") or {}
            rep = validate_report(read_optional(folder / "report.md") or "")
            done, _ = verdicts.after_pass(room, settings, task, rep, str(meta.get("adapter", "")))
            return done
        target = str(which.serves(task))  # recorded: what the task it serves waits for may still be to settle
        before = _as_is(room, target)
        said, _ = verdicts.settle(room, settings, target)
        return said if _as_is(room, target) != before else ""
    if state == "passed" and not task.get("review_tasks"):
        chosen = which.check_lenses(room, settings, task)
        if chosen:
            ids = queueing.queue_reviews(room, settings, task, chosen, "passed")
            return f"its reviews queued: {', '.join(ids)}"
    return ""


def _after_failure(room: Room, settings: Settings, task: Task, state: str) -> str:
    """A failed round's reviews (``review_when: always``, the task back in the queue), not
    queued before its cycle died; what was done, or ""."""
    if settings.review_when != "always" or state != "queue":
        return ""
    chosen = which.check_lenses(room, settings, task)
    if not chosen:
        return ""
    from control_room.dispatch.review import queueing  # after a crash only

    ids = queueing.queue_reviews(room, settings, task, chosen, "queue")
    return f"the reviews of its failed round queued: {', '.join(ids)}"


def _as_is(room: Room, task_id: str) -> tuple[str, bytes] | None:
    """Where a task is and its file's bytes: what a settle that changed nothing leaves as it was."""
    found = swarm.locate(room, task_id)
    if found is None:
        return None
    try:
        return found[0], read_bytes(found[1])
    except OSError:
        return None
