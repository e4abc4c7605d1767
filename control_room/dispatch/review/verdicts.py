"""Verdicts (SPEC §12): what a task's reviews add up to, failing closed.

When every review has a verdict (``settle``): all accept -> the task may integrate (or is done,
with nothing to merge); only rejects -> a failed round for the task, the findings in its next
brief; both -> an arbiter task gets the two sides as Position A and Position B, with no lens,
adapter or model named, and answers ``A``, ``B`` or ``escalate`` (parked for a person). A second
arbitration for one task escalates too. Until then the task cannot integrate: a review task
that is parked leaves it waiting, never merged by default, until a person decides: ``accept``
(``task accept``: the verdict is the person's) or ``task cancel``.
"""

from __future__ import annotations

import random

from control_room import ledger
from control_room.dispatch.person import decisions
from control_room.dispatch.review import independence, materials
from control_room.dispatch.review.queueing import check_of, free_id, needs_verdict, word
from control_room.dispatch.review.which import serves
from control_room.dispatch.round.outcome import fail_round, park
from control_room.dispatch.round.report import Report, validate
from control_room.dispatch.worktrees import place, worktree
from control_room.errors import ConflictError, InvalidError
from control_room.knowledge import routes
from control_room.ledger import events
from control_room.room import lenses, swarm, tasks
from control_room.room import results as results_folder
from control_room.room.layout import Room
from control_room.room.settings import Settings
from control_room.room.tasks import Task
from control_room.store.files import atomic_write, read_optional
from control_room.timeutil import now_iso


def after_pass(
    room: Room, settings: Settings, task: Task, rep: Report, adapter: str
) -> tuple[str, str | None]:
    """A review or arbiter task passed (it is in ``done/``): record its verdict, then settle
    the task it serves. Returns (what happened, in words; the id of a task now accepted)."""
    verdict = word(rep)
    atomic_write(swarm.task_file(room, "done", task["id"]), swarm.dumps({**task, "verdict": verdict}))
    target_id = str(serves(task))
    if task.get("reviews"):
        ledger.append(
            room.ledger,
            events.REVIEW,
            task=target_id,
            route=task.get("route", ""),
            adapter=adapter,
            outcome=verdict,
            detail=f"{task['lens']} ({task['id']}): {rep.why.strip()[:300]}",
        )
        return settle(room, settings, target_id)
    return _arbitrated(room, settings, task, verdict, rep)


def settle(room: Room, settings: Settings, target_id: str) -> tuple[str, str | None]:
    """Decide what ``target_id``'s reviews add up to, if they all have a verdict."""
    if swarm.task_file(room, "queue", target_id).exists():
        return _after_failure(room, target_id), None
    if not swarm.task_file(room, "passed", target_id).exists():
        return f"{target_id} is no longer waiting for its reviews", None
    target, _ = swarm.read_task(swarm.task_file(room, "passed", target_id))
    if not needs_verdict(target):  # a person accepted it meanwhile: a late verdict changes nothing
        return f"{target_id} has its verdict already", None
    verdicts = _verdicts(room, target_id, target.get("review_tasks", []))
    if isinstance(verdicts, str):
        return verdicts, None
    accepts = [r for r, v in verdicts.items() if v == "accept"]
    rejects = [r for r, v in verdicts.items() if v == "reject"]
    if not rejects:
        why = f"all {len(accepts)} reviews accept" if len(accepts) > 1 else "its one review accepts"
        return _accepted(room, settings, target, why)
    if not accepts:
        return _rejected(room, settings, target, rejects, "every review rejects"), None
    return _arbitrate(room, settings, target, accepts, rejects), None


def _verdicts(room: Room, target_id: str, review_ids: list[str]) -> dict[str, str] | str:
    """Each review's verdict, once every one is done; else what ``target_id`` waits for."""
    verdicts: dict[str, str] = {}
    for rid in review_ids:
        state = swarm.state_of(room, rid)
        if state != "done":
            return f"{target_id} waits for {rid} ({state or 'gone'})"
        review, _ = swarm.read_task(swarm.task_file(room, "done", rid))
        verdicts[rid] = str(review.get("verdict", ""))
    return verdicts


def _after_failure(room: Room, target_id: str) -> str:
    """Reviews of a failed round (``review_when: always``): once all are in, what the rejecting
    ones found joins the task's next brief; no verdict, no arbitration (the round failed)."""
    path = swarm.task_file(room, "queue", target_id)
    target, _ = swarm.read_task(path)
    ids = list(target.get("review_tasks", []))
    verdicts = _verdicts(room, target_id, ids)
    if isinstance(verdicts, str):
        return verdicts
    rejects = [r for r, v in verdicts.items() if v == "reject"]
    found = findings(room, rejects) if rejects else "every review accepts what the round left"
    note = f"\n\nWhat the reviews of that round found:\n{found}"
    updated = {
        k: v for k, v in target.items() if k not in ("review_tasks", "reviewed_state", "reviewed_commit")
    }
    updated["last_failure"] = str(target.get("last_failure", "")) + note
    atomic_write(path, swarm.dumps(updated))
    outcome = "rejected" if rejects else "accepted"
    detail = (
        f"{routes.REVIEWED_FAILURE} {len(rejects)} of {len(ids)} reject; their findings join its next brief"
    )
    ledger.append(
        room.ledger,
        events.REVIEW,
        task=target_id,
        route=target.get("route", ""),
        outcome=outcome,
        detail=detail,
    )
    said = f"{len(rejects)} of {len(ids)} reject"
    return f"{target_id}'s failed round was reviewed ({said}); the findings join its next brief"


def _accepted(room: Room, settings: Settings, target: Task, why: str) -> tuple[str, str | None]:
    tid = target["id"]
    ledger.append(
        room.ledger, events.REVIEW, task=tid, route=target.get("route", ""), outcome="accepted", detail=why
    )
    accepted: Task = {**target, "review_verdict": "accept"}
    if settings.repo and worktree.ahead(room, settings, place.path_of(room, target)):
        atomic_write(swarm.task_file(room, "passed", tid), swarm.dumps(accepted))
        return f"{tid} accepted ({why}); it may integrate", tid
    swarm.move(room, tid, "passed", "done", task=accepted)
    return f"{tid} accepted ({why}); done", None


def accept(room: Room, settings: Settings, task_id: str, who: str, reason: str) -> tuple[str, str | None]:
    """A person accepts a task whose reviews have no verdict: one in ``passed/`` (they wait,
    disagree, or a review or arbiter task is parked), or one parked by an escalation. The
    verdict is the person's. The review and arbiter tasks it waits for are cancelled; then it
    is accepted as reviews accept one (it may integrate, or is done with nothing to merge).
    Returns as ``settle``."""
    state, path = swarm.locate(room, task_id)
    target, problems = swarm.read_task(path)
    if state not in ("passed", "parked") or (state == "parked" and not target.get("escalated")):
        parked = (
            " (a parked task only when its reviews' disagreement was escalated)" if state == "parked" else ""
        )
        raise ConflictError(f"cannot accept {task_id}: it is in swarm/{state}/, not in swarm/passed/{parked}")
    if problems:
        raise InvalidError(f"cannot accept {task_id}: {path} is not a valid task: {'; '.join(problems)}")
    if not needs_verdict(target):
        raise ConflictError(
            f"cannot accept {task_id}: it waits for no verdict (it has no reviews, or they accepted it); "
            f"`control-room integrate {task_id}` merges it"
        )
    if state == "parked":  # back where an accepted task waits for the merge queue, the reason gone
        target = tasks.without(target, "escalated")
        swarm.move(room, task_id, "parked", "passed", task=target)
    decisions.let_go(room, target, f"{task_id} was accepted by a person ({who})")
    why = f"by a person, {who}" + (f": {reason}" if reason else "")
    return _accepted(room, settings, target, why)


def findings(room: Room, review_ids: list[str]) -> str:
    """What the rejecting reviews found, for the task's next brief: each one's WHY and
    CONFIRMED items, with no lens or model named."""
    hide = materials.names_to_hide(room, review_ids)
    out = []
    for n, rid in enumerate(review_ids, 1):
        rep = validate(read_optional(results_folder.folder(room, rid) / "report.md") or "")
        items = "".join(f"\n  - CONFIRMED: {e.text}" for e in rep.confirmed)
        out.append(materials.anonymise(f"review {n}: {rep.why.strip()}{items}", hide))
    return "\n".join(out)


def _rejected(room: Room, settings: Settings, target: Task, rejects: list[str], why: str) -> str:
    tid = target["id"]
    found = findings(room, rejects)
    ledger.append(
        room.ledger, events.REVIEW, task=tid, route=target.get("route", ""), outcome="rejected", detail=why
    )
    where = fail_round(room, settings, target, f"review: {why}:\n{found}", src="passed")
    if target.get("route"):
        routes.record_run(room, target["route"], tid, "fail", 0.0)
    return f"{tid} rejected by review ({why}); {where}"


def _arbitrate(room: Room, settings: Settings, target: Task, accepts: list[str], rejects: list[str]) -> str:
    tid = target["id"]
    sides = {"accept": accepts, "reject": rejects}
    first = random.choice(("accept", "reject"))  # which side is A: never always the same
    second = "reject" if first == "accept" else "accept"
    if int(target.get("arbitrations", 0)) >= 1:
        return _escalate(
            room, target, {"A": sides[first], "B": sides[second]}, "a second arbitration was needed"
        )
    arbiter_lens = lenses.read(room, lenses.ARBITER)
    aid = free_id(room, f"arbitrate-{tid}")
    arbiter: Task = {
        "id": aid,
        "objective": f"Two reviews of task {tid} disagree: decide by evidence, Position A or Position B.",
        "falsifier": "the chosen position's evidence does not hold when checked",
        "validator": check_of(arbiter_lens, target),
        "max_cost_usd": arbiter_lens.max_cost_usd,
        "wall_clock_s": arbiter_lens.wall_clock_s,
        "kill_condition": "the evidence cannot be checked here",
        "role": "arbiter",
        "arbitrates": tid,
        "lens": lenses.ARBITER,
        "sides": {"A": sides[first], "B": sides[second]},
        "meaning": {"A": first, "B": second},
        "priority": int(target.get("priority", 0)) + 60,
        "created": now_iso(),
    }
    if target.get("route"):
        arbiter["route"] = target["route"]
    if arbiter_lens.adapter:
        arbiter["adapter"] = arbiter_lens.adapter
    if arbiter_lens.model:
        arbiter["model"] = arbiter_lens.model
    swarm.write_new(room, arbiter)
    said = independence.warn_if_correlated(room, settings, arbiter, tid)
    updated: Task = {**target, "arbitrations": int(target.get("arbitrations", 0)) + 1, "arbiter": aid}
    atomic_write(swarm.task_file(room, "passed", tid), swarm.dumps(updated))
    ledger.append(
        room.ledger,
        events.ARBITRATION,
        task=tid,
        route=target.get("route", ""),
        outcome="queued",
        detail=f"{len(accepts)} accept, {len(rejects)} reject: {aid} decides (Position A is {first})",
    )
    warning = f"; warning: {said}" if said else ""
    return f"{tid}'s reviews disagree ({len(accepts)} accept, {len(rejects)} reject); queued {aid}{warning}"


def _arbitrated(
    room: Room, settings: Settings, arbiter: Task, verdict: str, rep: Report
) -> tuple[str, str | None]:
    tid = str(arbiter["arbitrates"])
    if not swarm.task_file(room, "passed", tid).exists():
        return f"{tid} is no longer waiting for its arbiter", None
    target, _ = swarm.read_task(swarm.task_file(room, "passed", tid))
    if not needs_verdict(target):  # see settle
        return f"{tid} has its verdict already", None
    sides = arbiter.get("sides", {})
    if verdict == "escalate":
        return _escalate(room, target, sides, f"the arbiter escalated: {rep.why.strip()[:200]}"), None
    label = verdict.upper()
    meaning = arbiter.get("meaning", {}).get(label, "")
    ledger.append(
        room.ledger,
        events.ARBITRATION,
        task=tid,
        route=target.get("route", ""),
        outcome=label,
        detail=f"{arbiter['id']} chose {label} ({meaning}): {rep.why.strip()[:300]}",
    )
    if meaning == "accept":
        return _accepted(room, settings, target, f"the arbiter {arbiter['id']} chose the accepting side")
    why = f"the arbiter {arbiter['id']} chose the rejecting side: {rep.why.strip()[:300]}"
    return _rejected(room, settings, target, list(sides.get(label, [])), why), None


def _escalate(room: Room, target: Task, sides: dict[str, list[str]], why: str) -> str:
    tid = target["id"]
    both = materials.positions_text(room, sides)
    reason = (
        f"Parked at {now_iso()} for a person: its reviews disagree and {why}.\n\n"
        f"Both positions, side by side (who wrote each is withheld here too; the review tasks are "
        f"{', '.join([*sides.get('A', []), *sides.get('B', [])])}):\n\n{both}\n\n"
    )
    reason += f"The verdict may be a person's: `control-room task accept {tid}` accepts it.\n"
    ledger.append(
        room.ledger, events.ESCALATED, task=tid, route=target.get("route", ""), outcome="parked", detail=why
    )
    park(room, {**target, "escalated": now_iso()}, "passed", reason, f"escalated: {why}")
    return f"{tid} escalated to a person ({why}); parked with both positions"
