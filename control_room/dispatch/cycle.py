"""One cycle (SPEC §4), step by step: STOP, slot, recover, pick, claim; then ``runner`` runs it.

Every step that changes something writes a ledger line. Nothing is ever lost: a task is in
exactly one swarm folder at any time, and a cycle that dies leaves a claim the next one
recovers. The views (CURRENT_CONTEXT.md, DIGEST.md) are refreshed by whoever called the cycle,
at its edge (``views.refresh``).
"""

from __future__ import annotations

import os
import time

from control_room import errors, ledger
from control_room.dispatch import claims, orchestrator, runner
from control_room.dispatch.pick import Pick, pick
from control_room.dispatch.rounds import CycleResult, fail_round, requeue
from control_room.ledger import events
from control_room.room import settings as settings_file
from control_room.room import swarm
from control_room.room.layout import Room
from control_room.room.settings import Settings
from control_room.timeutil import now_iso


def cycle(room: Room) -> CycleResult:
    # 1. STOP: the dumbest possible brake, before any parsing or locking.
    if room.stopped():
        return CycleResult(errors.STOPPED, f"stopped: {room.stop} exists; nothing ran")
    settings = settings_file.load(room)  # settings that cannot be read fail closed
    # 2. A free slot, held until this process ends.
    slot = claims.take_slot(room, settings.max_parallel)
    if slot is None:
        n = settings.max_parallel
        taken = "the only slot is" if n == 1 else f"all {n} slots are"
        return CycleResult(errors.BUSY, f"busy: {taken} taken; nothing changed")
    number, fd = slot
    try:
        with claims.claim_lock(room):
            recover(room, settings, mine=number)
            picked = pick(room, settings)
            nothing = isinstance(picked, CycleResult) and picked.code == errors.OK
            if (
                nothing
                and settings.on_empty_queue == "orchestrate"
                and orchestrator.queue_one(room, settings)
            ):
                picked = pick(room, settings)
            if isinstance(picked, CycleResult):
                return picked
            claim(room, settings, picked, number)
        try:
            return runner.run_claimed(room, settings, picked)
        except errors.ControlRoomError as exc:
            # A room problem (not the task's) stopped the run: back to the queue, no round.
            requeue(room, picked.task, events.REQUEUE, f"not run: {exc}")
            raise
    finally:
        os.close(fd)


# 3a. Recover what dead cycles left in swarm/running/.
def recover(room: Room, settings: Settings, *, mine: int | None) -> list[str]:
    recovered = []
    for task_id in claims.running_ids(room):
        info = claims.read_claim(room, task_id)
        why = claims.why_dead(room, info, settings.grace_s, mine=mine)
        if why is None:
            continue
        claims.kill_agent(info, task_id)
        task, problems = swarm.read_task(swarm.task_file(room, "running", task_id))
        if problems:
            swarm.reject(room, f"{task_id}.json", problems, task_id=task_id, state="running")
            claims.release(room, task_id)
            continue
        ledger.append(
            room.ledger,
            events.RECOVER,
            task=task_id,
            route=task.get("route", ""),
            detail=f"claim is dead: {why}",
        )
        fail_round(room, settings, task, f"the cycle running it died ({why})", src="running")
        recovered.append(task_id)
    claims.sweep(room)
    return recovered


# 3c. Claim: one rename into swarm/running/, then the claim file.
def claim(room: Room, settings: Settings, picked: Pick, slot: int) -> None:
    task = picked.task
    task_id = task["id"]
    swarm.move(room, task_id, "queue", "running")
    now = time.time()
    claims.write_claim(
        room,
        task_id,
        {
            "pid": os.getpid(),
            "host": claims.host(),
            "slot": slot,
            "started": now_iso(now),
            "deadline": now + float(task["wall_clock_s"]) + float(settings.validator_timeout_s),
            "agent_pgid": None,
        },
    )
    ledger.append(
        room.ledger,
        events.CLAIM,
        task=task_id,
        route=task.get("route", ""),
        adapter=picked.plan.adapter.name,
        detail=f"round {int(task.get('rounds', 0)) + 1}, slot {slot}, pid {os.getpid()}",
    )
