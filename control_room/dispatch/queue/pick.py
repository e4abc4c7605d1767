"""Step 3 of a cycle: pick the next ready task (SPEC §4).

Candidates come in run order from the queue index, and ``ready`` says of each whether it may
run (the same answer ``status`` and ``task list`` give). One refused there (a killed route, a
dep rejected or gone) is rejected at once; one that waits (deps not done, paths owned by a
running task, a death loop, a gate not approved, the budget) stays queued, and a hold by a
death loop, a gate or the budget is logged once a day. The first ready candidate is re-read
from its file and must pass admission (``Stage.RUN``); one whose CLI is not installed is held,
not rejected. With nothing to claim, the cycle's line names the first waiting tasks and why.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from control_room import errors, ledger
from control_room.dispatch.queue import index, listing
from control_room.dispatch.queue.admission import Refused, Stage, admit
from control_room.dispatch.queue.environment import agent_env
from control_room.dispatch.queue.ready import Readiness, Wait, folded_meanwhile, readiness
from control_room.dispatch.queue.resolve import Plan
from control_room.dispatch.round.outcome import CycleResult
from control_room.ledger import events
from control_room.ledger.events import Event
from control_room.plain import Plain
from control_room.proc import which
from control_room.room import swarm
from control_room.room.layout import Room
from control_room.room.settings import Settings
from control_room.room.tasks import Task
from control_room.store import cache
from control_room.timeutil import today

REJECTED = ("rejected",)  # the one folder whose count a pick compares (not done/'s 10,000 names)


class Pick(Plain):
    """The task a cycle claims, and how it runs."""

    __slots__ = ("plan", "task")

    def __init__(self, task: Task, plan: Plan) -> None:
        self.task, self.plan = task, plan


def ahead(room: Room, settings: Settings, n: int) -> Ahead:
    """Outside the claim lock: the first ``n`` queued tasks, in run order, that look ready now,
    and the readiness that said so; fewer (none) when the walk met a task only the pick under
    the lock may act on first (one to reject, a hold not yet logged today).

    This is the slow half of a pick (the queue's order over thousands of tasks, the
    readiness states): taken before the lock, it leaves the lock held only for what
    exactly-once needs (``pick`` with ``ahead``). Nothing here writes to the room but what
    the queue's order does anyway (a new file read, an invalid one rejected: a rename, which
    one process wins)."""
    before = room.counts(REJECTED)["rejected"]  # the queue's order may reject files on its own
    with folded_meanwhile(room, settings):  # a first run: readiness's ledger states, in a child
        walk = listing.candidates(room)  # the queue's order (a first scan reads every file)
    ready = readiness(room, settings)
    holds = Holds(room)
    found: list[index.Listed] = []
    for item in walk:
        wait = ready.why(item.id, item.summary)
        if wait is None:
            found.append(item)
            if len(found) >= n:
                break
        elif wait.refused or (wait.hold is not None and not holds.logged(item.id, wait.hold)):
            break
    return Ahead(found, ready, before)


class Ahead:
    """What ``ahead`` found: candidates in run order, the readiness it asked, and how many
    files ``swarm/rejected/`` held before it (for the nothing-to-do line)."""

    __slots__ = ("before", "found", "ready")

    def __init__(self, found: list[index.Listed], ready: Readiness, before: int) -> None:
        self.found, self.ready, self.before = found, ready, before


def pick(
    room: Room,
    settings: Settings,
    *,
    taken: Callable[[str], str | None] | None = None,
    ahead: Ahead | None = None,
) -> Pick | CycleResult:
    """The next ready task, or what the cycle says when there is none. In a shared room,
    ``taken`` says why a task is not ours to claim (another machine holds it), or None.
    ``ahead``: the candidates found before the claim lock; the first of them still queued and
    ready now (``Readiness.renewed``: the running tasks as they are now) is taken, without
    walking the whole queue again. When none is (other cycles took them meanwhile), or one
    is no longer what it was (edited, its CLI gone), the whole walk below decides."""
    ready = ahead.ready.renewed() if ahead is not None else readiness(room, settings)
    holds = Holds(room)
    rejected = 0
    for item in ahead.found if ahead is not None else ():
        if not os.path.exists(room.state_dir("queue") / item.name):
            listing.gone(room, item.name)  # another cycle claimed it
            continue
        if ready.why(item.id, item.summary) is not None:
            continue
        chosen = _admit(room, settings, item, ready, holds)
        if isinstance(chosen, Pick):
            listing.gone(room, item.name)
            holds.save()
            return chosen
        rejected = int(chosen == "rejected")
        break
    # the scan below (or ``ahead``'s) may reject files on its own
    before = ahead.before if ahead is not None else room.counts(REJECTED)["rejected"]
    waiting: list[str] = []
    seen = rejected  # the candidate rejected above was one the queue held
    missing: list[str] = []
    for item in listing.run_order(room):
        seen += 1
        wait = ready.why(item.id, item.summary)
        if wait is None and taken is not None and (elsewhere := taken(item.id)):
            wait = Wait("claimed", elsewhere)
        if wait is None:
            chosen = _admit(room, settings, item, ready, holds)
            if isinstance(chosen, Pick):
                listing.gone(room, item.name)
                holds.save()
                return chosen
            if isinstance(chosen, Wait):
                wait = chosen
            elif chosen == "rejected":
                rejected += 1
                continue
            else:
                missing.append(f"{item.id} ({chosen})")
                continue
        if wait.refused:
            swarm.reject(room, item.name, [wait.why], task_id=item.id)
            rejected += 1
            continue
        if wait.hold is not None:
            holds.log(item.id, item.summary, wait.hold, wait.detail)
        waiting.append(f"{item.id} {wait.why}")
    holds.save()
    if missing:
        which_stay = "s, which stay" if len(missing) != 1 else ", which stays"
        return CycleResult(
            errors.ADAPTER_MISSING,
            f"adapter unavailable for {len(missing)} ready task{which_stay} queued: {'; '.join(missing)}",
        )
    scanned = max(0, room.counts(REJECTED)["rejected"] - before - rejected)  # rejected by the scan itself
    if not seen and not scanned:
        return CycleResult(errors.OK, "nothing to do: the queue is empty")
    return CycleResult(errors.OK, "nothing to do: " + nothing_to_do(waiting, rejected + scanned))


NAMED = 3  # waiting tasks the nothing-to-do line names, in run order


def nothing_to_do(waiting: list[str], rejected: int) -> str:
    """``1 rejected (see swarm/rejected/); 2 queued tasks not ready: t1 waits for dep t0
    (queue); t3 waits for gate gpu: ...``, naming the first ``NAMED`` waiting tasks."""
    parts = []
    if rejected:
        parts.append(f"{rejected} rejected (see swarm/rejected/)")
    if waiting:
        n = len(waiting)
        named = "; ".join(waiting[:NAMED])
        more = f"; and {n - NAMED} more (control-room task list --state queue)" if n > NAMED else ""
        parts.append(f"{n} queued task{'s' if n != 1 else ''} not ready: {named}{more}")
    return "; ".join(parts)


def _admit(
    room: Room, settings: Settings, item: index.Listed, ready: Readiness, holds: Holds
) -> Pick | Wait | str:
    """Re-read the candidate from its file and admit it. Returns the Pick, or why not: a Wait
    (edited since the index saw it: no longer ready), "rejected", or "<adapter>: <what>" for a
    CLI that is not installed, so the next one is tried."""
    path = swarm.task_file(room, "queue", item.id)
    task, problems = swarm.read_task(path)
    plan = None
    if not problems:
        wait = ready.why(item.id, index.summarize(task))
        if wait is not None:
            return wait
        try:
            plan = admit(room, task, Stage.RUN, settings, runs_on=ready.runs_on(task))
        except Refused as exc:
            problems = [str(exc)]
    if problems or plan is None:
        swarm.reject(room, path.name, problems, task_id=item.id)
        return "rejected"
    adapter = plan.adapter
    exe = adapter.executable(plan.invocation(task, "", path, room.root))
    if exe is None or which(exe, agent_env(room, settings, task)) is None:
        holds.log(
            item.id,
            item.summary,
            events.ADAPTER_MISSING,
            f"{adapter.name}: {exe} not found on PATH; {adapter.install}",
        )
        return f"{adapter.name}: {exe} not found on PATH"
    key = plan.setup.api_key_env
    if key and not os.environ.get(key):  # the operator's environment, not the task: no rejection
        raise errors.RoomInvalidError(
            f"room invalid: {plan.setup_where}: adapters.{adapter.name}.api_key_env names {key}, "
            f"which is not set in the environment this cycle runs in; export {key} there "
            "(for cron or launchd: in its entry); nothing was claimed"
        )
    return Pick(task, plan)


class Holds:
    """Log a held task once per reason and day (remembered in a disposable cache)."""

    def __init__(self, room: Room) -> None:
        self.room, self.file = room, room.cache / "holds"
        seen = cache.load(self.file)
        self.seen: dict[str, str] = seen if isinstance(seen, dict) else {}
        self.changed = False

    def logged(self, task_id: str, event: Event) -> bool:
        """Whether this hold of the task was logged today already."""
        name, _, day = self.seen.get(task_id, "").partition(" ")  # before 0.3.0: its old name
        return f"{events.canonical(name)} {day}" == f"{event.name} {today()}"

    def log(self, task_id: str, s: dict[str, Any], event: Event, detail: str) -> None:
        if self.logged(task_id, event):
            return
        key = f"{event.name} {today()}"
        ledger.append(self.room.ledger, event, task=task_id, route=s.get("route", ""), detail=detail)
        self.seen[task_id] = key
        self.changed = True

    def save(self) -> None:
        if self.changed:
            cache.save(self.file, self.seen)
