"""How a claimed task leaves ``swarm/running/``: what a cycle returns, a failed round, a dead
dispatcher, and going back to the queue without using a round.

A failed round (the task's own failure: agent error, time-out, broken report, validator
failure) sends the task back to the queue with what failed for its next brief, or parks it
after CONTROL.md ``max_rounds``. A fault of the room, an interruption or STOP puts it back
without counting a round (SPEC §15). So does a dispatcher that died while it ran, except that
those deaths are counted on their own: a task that kills its dispatcher ``max_dispatcher_deaths``
times is parked as a poison task.
"""

from __future__ import annotations

from control_room import ledger
from control_room.dispatch.round import claims
from control_room.ledger import events, result
from control_room.ledger.events import Event
from control_room.plain import Plain
from control_room.room import swarm
from control_room.room.layout import Room
from control_room.room.settings import Settings
from control_room.room.tasks import Task
from control_room.timeutil import now_iso

LAST_FAILURE_MAX = 8000  # characters of what failed kept in the task file, for the next brief


class CycleResult(Plain):
    """What a cycle did: its exit code and its line."""

    __slots__ = ("code", "merge", "message", "notes", "task_id")

    def __init__(
        self,
        code: int,
        message: str,
        task_id: str | None = None,
        notes: list[str] | None = None,
        merge: str | None = None,
    ) -> None:
        self.code = code  # an exit code from control_room.errors
        self.message = message  # one line for the person or the log
        self.task_id = task_id
        self.notes: list[str] = [] if notes is None else notes  # what the cycle did first (recoveries)
        self.merge = merge  # a task now ready for the merge queue (auto_integrate takes it)


def fail_round(room: Room, settings: Settings, task: Task, why: str, *, src: str, stuck: str = "") -> str:
    """Count a failed round: back to the queue with what failed, or parked after the last (or
    at once when ``stuck`` says why it makes no progress). Returns where the task went, in words.
    A claim file is the caller's to remove, last: until then it tells recovery that what follows
    the move (ROUTES.md, the round's reviews) may not be done (``unfinished.follow_up``)."""
    tid = task["id"]
    rounds = int(task.get("rounds", 0)) + 1
    # Cut (the whole text is in its results), so that the task file stays a size the scan admits.
    kept = why if len(why) <= LAST_FAILURE_MAX else why[: LAST_FAILURE_MAX - 3] + "..."
    updated: Task = {**task, "rounds": rounds, "last_failure": kept}
    max_rounds = settings.max_rounds
    plural = "s" if rounds != 1 else ""
    if rounds >= max_rounds or stuck:
        after = stuck or f"after {rounds} failed round{plural} (CONTROL.md max_rounds {max_rounds})"
        reason = f"Parked at {now_iso()} {after}.\n\nLast failure:\n{why}\n\nResults: swarm/results/{tid}/\n"
        # the ledger gets the failure cut to a line; all of it is in the .reason
        park(
            room,
            updated,
            src,
            reason,
            f"{stuck or f'after {rounds} failed round{plural}'}: {result.cut(why)}",
        )
        where = "parked for a person (swarm/parked/)"
    else:
        swarm.move(room, tid, src, "queue", task=updated)
        where = f"back in the queue for round {rounds + 1} of {max_rounds}"
    return where


def dispatcher_died(room: Room, settings: Settings, task: Task, why: str) -> str:
    """The cycle that ran ``task`` is gone (SIGKILL, OOM, reboot): back to the queue without
    using a round, or parked as a poison task after ``max_dispatcher_deaths``. Returns what
    happened, in one line."""
    tid = task["id"]
    deaths = int(task.get("dispatcher_deaths", 0)) + 1
    limit = settings.max_dispatcher_deaths
    updated: Task = {**task, "dispatcher_deaths": deaths}
    count = f"dispatcher death {deaths} of {limit}"
    route = task.get("route", "")
    if deaths < limit:
        ledger.append(
            room.ledger,
            events.RECOVER,
            task=tid,
            route=route,
            detail=f"claim is dead: {why}; back in the queue, no round used ({count})",
        )
        swarm.move(room, tid, "running", "queue", task=updated)
        claims.release(room, tid)
        return f"recovered {tid}: {why}; back in the queue, no round used ({count})"
    ledger.append(room.ledger, events.RECOVER, task=tid, route=route, detail=f"claim is dead: {why}; {count}")
    times = "once" if deaths == 1 else f"{deaths} times"
    reason = (
        f"Parked at {now_iso()} as a poison task: the cycle running it died {times} "
        f"(CONTROL.md max_dispatcher_deaths {limit}); the last time, {why}.\n\n"
        f"These deaths are not failed rounds (rounds used: {int(task.get('rounds', 0))}). A task "
        "that kills the process running it may exhaust memory or disk, or kill its parent: see "
        f"swarm/results/{tid}/.\n"
    )
    poison = f"poison task: the cycle running it died {times} (max_dispatcher_deaths {limit})"
    park(room, updated, "running", reason, poison)
    claims.release(room, tid)
    return f"recovered {tid}: {why}; parked as a poison task (the cycle running it died {times})"


def park(room: Room, task: Task, src: str, reason: str, detail: str) -> None:
    """To ``swarm/parked/`` with ``reason`` beside it (and what a person may do), one ``park`` line."""
    tid = task["id"]
    decide = (
        f"A person decides: `control-room task retry {tid}`, `control-room task cancel {tid}`, "
        "or kill its route.\n"
    )
    swarm.move(room, tid, src, "parked", task=task, reason=reason + decide)
    ledger.append(room.ledger, events.PARK, task=tid, route=task.get("route", ""), detail=detail)


def requeue(room: Room, task: Task, event: Event, detail: str, *, adapter: str = "") -> bool:
    """Back to the queue from ``running/`` without using a round, with one ledger line; False
    (and no line) if the task had left ``running/`` already."""
    tid = task["id"]
    if not swarm.task_file(room, "running", tid).exists():
        return False
    swarm.move(room, tid, "running", "queue")
    claims.release(room, tid)
    ledger.append(room.ledger, event, task=tid, route=task.get("route", ""), adapter=adapter, detail=detail)
    return True
