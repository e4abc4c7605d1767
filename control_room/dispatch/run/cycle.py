"""One cycle (SPEC §4), step by step: STOP, the room's health (``preflight``), slot, recover,
pick, claim; then ``runner`` runs it.

Every step that changes something writes a ledger line. Nothing is ever lost: a task is in
exactly one swarm folder at any time, and a cycle that dies leaves a claim the next one
recovers. No fault but the task's own uses one of its rounds (SPEC §15): a room fault is found
before the claim, or un-claims the task after it; Ctrl-C, SIGTERM and SIGHUP end the agent's
process group and put the task back; a dead cycle's task goes back too (``recover``).
The views (CURRENT_CONTEXT.md, DIGEST.md) are refreshed by whoever called the cycle, at its
edge (``views.refresh``).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from control_room import crashpoint, errors, interrupt, ledger
from control_room.dispatch.queue import pick
from control_room.dispatch.queue.pick import Pick
from control_room.dispatch.round import claims
from control_room.dispatch.round.outcome import CycleResult, dispatcher_died, requeue
from control_room.dispatch.run import preflight, runner, unfinished
from control_room.ledger import events
from control_room.room import settings as settings_file
from control_room.room import swarm
from control_room.room.layout import Room
from control_room.room.settings import Settings
from control_room.timeutil import now_iso

if TYPE_CHECKING:
    from control_room.dispatch.shared import sync


def cycle(
    room: Room, *, say: Callable[[str], None] | None = None, progress: runner.Progress | None = None
) -> CycleResult:
    """Run one cycle. What it did before its pick (recoveries) is in the result's ``notes``,
    and is also passed at once, line by line, to ``say`` if given: a person watching should
    not wait for the agent to hear of it. ``progress`` is told, a few times a second, how the
    agent's run goes (a live line on a terminal)."""
    # 1. STOP: the dumbest possible brake, before any parsing or locking. (In a shared room, a
    # STOP committed for every machine is lifted by a commit too: the sync below looks.)
    stopped = room.stopped()
    if stopped and not _stop_is_shared(room):
        return CycleResult(errors.STOPPED, f"stopped: {room.stop} exists; nothing ran")
    # Then what the cycle needs, before it claims anything: a fault of the room is the room's.
    try:
        settings = settings_file.load(room)
    except errors.InvalidError as exc:
        raise errors.RoomInvalidError(f"room invalid: {exc}; nothing was claimed") from None
    if settings.remote:
        room.make_folders()  # git keeps no empty folder: a fresh clone lacks them
    preflight.check(room, settings)
    share = _shared(room, settings)
    if stopped and share is None:
        return CycleResult(errors.STOPPED, f"stopped: {room.stop} exists; nothing ran")
    # 2. A free slot, held until this process ends.
    slot = claims.take_slot(room, settings.max_parallel)
    if slot is None:
        n = settings.max_parallel
        taken = "the only slot is" if n == 1 else f"all {n} slots are"
        return CycleResult(errors.BUSY, f"busy: {taken} taken; nothing changed")
    number, fd = slot
    picked: Pick | CycleResult | None = None
    try:
        notes: list[str] = []
        if share is not None:
            # A shared room (CONTROL.md remote:): the others' work, and a STOP committed anywhere.
            started = _shared_start(room, settings, share, number, stopped)
            if isinstance(started, CycleResult):
                return started
            settings, notes = started
        # The queue's order and the readiness states, before the lock: under it, only what
        # exactly-once needs (the candidates checked again against the running tasks, the claim).
        found = pick.ahead(room, settings, ahead_of(settings)) if share is None else None
        # Recover, pick and claim are not cut in half by Ctrl-C: it is let through after them. In
        # a shared room they take the clone's turn first (``Shared.turn``: no merge meanwhile).
        turn = share.turn() if share is not None else contextlib.nullcontext()
        with interrupt.deferred(), turn, claims.claim_lock(room):
            notes += recover(room, settings, mine=number, share=share)
            for note in notes:
                if say is not None:
                    say(note)
            picked = _pick_and_claim(room, settings, number, share, found)
            if isinstance(picked, CycleResult):
                picked.notes[:0] = notes
                return picked
        result = runner.run_claimed(room, settings, picked, progress=progress)
        result.notes[:0] = notes
        return result
    except interrupt.Interrupted as exc:
        if isinstance(picked, Pick):
            exc.outcome = _interrupted(room, picked, exc)
        else:
            exc.outcome = "nothing was claimed"
        raise
    except (errors.ControlRoomError, OSError) as exc:
        if not isinstance(picked, Pick):
            raise
        raise _unclaim(room, picked, exc) from None
    finally:
        os.close(fd)


def _shared_start(
    room: Room, settings: Settings, share: sync.Shared, slot: int, stopped: bool
) -> tuple[Settings, list[str]] | CycleResult:
    """Fetch; let go of our dead claims other machines took over (before the merge brings their
    files); sync. The settings after the merge (CONTROL.md may have come with it) and what was
    said, or why the cycle ends here: offline (fail closed) or a STOP from the remote."""
    from control_room.dispatch.shared import sync  # a shared room's only (``_shared``)

    try:
        with share.turn():  # what it fetched is what it recovers and merges by
            share.fetch()
            with interrupt.deferred(), claims.claim_lock(room):
                notes = recover(room, settings, mine=slot, share=share)
            notes += share.sync(why="a cycle starts", fetched=True, tries=sync.CYCLE_TRIES).said
    except errors.OfflineError as exc:
        if stopped:
            return CycleResult(errors.STOPPED, f"stopped: {room.stop} exists; nothing ran ({exc})")
        return CycleResult(errors.OFFLINE, f"offline: {exc}; nothing was claimed (fail closed)")
    if room.stopped():
        how = "exists, committed for every machine (`control-room resume --everywhere` lifts it)"
        why = how if stopped else "came with the sync"
        return CycleResult(errors.STOPPED, f"stopped: {room.stop} {why}; nothing ran", notes=notes)
    return settings_file.load(room), notes


def _stop_is_shared(room: Room) -> bool:
    """Whether STOP is committed in a shared room, where a commit may lift it (``sharing``)."""
    if not settings_file.mentions(room, "remote"):
        return False
    from control_room.dispatch.shared import sharing  # a shared room's only: git and the remote

    return sharing.stop_is_shared(room)


def _shared(room: Room, settings: Settings) -> sync.Shared | None:
    """The room's sharing (CONTROL.md ``remote:``), or None: the shared wing is loaded only for
    a shared room."""
    if not settings.remote:
        return None
    from control_room.dispatch.shared import sharing  # a shared room's only: git and the remote

    return sharing.shared(room, settings)


CLAIM_TRIES = 10  # in a shared room: tasks another machine may take from under us, one cycle


def ahead_of(settings: Settings) -> int:
    """How many candidates a cycle finds before the claim lock: enough that the other slots'
    cycles, claiming first, leave it one."""
    return min(64, 2 * settings.max_parallel + 2)


def _pick_and_claim(
    room: Room, settings: Settings, slot: int, share: sync.Shared | None, found: pick.Ahead | None = None
) -> Pick | CycleResult:
    """Pick the next ready task (the first of ``found`` still ready, else from the whole queue)
    and claim it: here, and first on the remote in a shared room, where a refused claim means
    another machine took the task: pick again."""
    chooser = None
    if share is not None:
        from control_room.dispatch.shared import claiming  # a shared room's only (``_shared``)

        chooser = claiming.Chooser(share, settings.grace_s)
    for _ in range(CLAIM_TRIES):
        taken = chooser.taken if chooser is not None else None
        picked = pick.pick(room, settings, taken=taken, ahead=found)
        found = None
        nothing = isinstance(picked, CycleResult) and picked.code == errors.OK
        if nothing and settings.on_empty_queue == "orchestrate":
            from control_room.dispatch.queue import orchestrator  # an empty queue's only (~8 ms to load)

            if orchestrator.queue_one(room, settings):
                picked = pick.pick(room, settings, taken=taken)
        if isinstance(picked, CycleResult):
            return picked
        until = time.time() + float(picked.task["wall_clock_s"]) + float(settings.validator_timeout_s)
        if chooser is not None and not chooser.claim(
            room, picked.task, until, claiming.info(chooser.share.host, slot, until)
        ):
            continue
        claim(room, picked, slot, until)
        return picked
    return CycleResult(errors.OK, f"nothing claimed: other machines took {CLAIM_TRIES} tasks first")


def _interrupted(room: Room, picked: Pick, exc: interrupt.Interrupted) -> str:
    """The operator stopped us while ``picked`` ran: its process group is gone already
    (``proc.run``); back to the queue without using a round. Returns what happened."""
    tid = picked.task["id"]
    with interrupt.deferred():
        back = requeue(
            room,
            picked.task,
            events.INTERRUPTED,
            f"{exc.name} while it ran; its process group was ended; no round used",
            adapter=picked.plan.adapter.name,
        )
    if back:
        return f"{tid} is back in the queue, no round used"
    return f"{tid} had finished its round (see `control-room ledger tail`)"


def _unclaim(room: Room, picked: Pick, exc: Exception) -> errors.ControlRoomError:
    """A fault of the room struck after the claim (the disk filled, a folder turned read-only):
    un-claim the task without using a round, and say so, as far as the disk allows."""
    tid = picked.task["id"]
    what = str(exc) if isinstance(exc, errors.ControlRoomError) else _oserror(exc)
    code = exc.exit_code if isinstance(exc, errors.ControlRoomError) else errors.IO_ERROR
    with interrupt.deferred():
        try:
            back = requeue(room, picked.task, events.REQUEUE, f"room fault after the claim: {what}")
        except (errors.ControlRoomError, OSError) as again:
            where = swarm.state_of(room, tid) or "running"
            return errors.ControlRoomError(
                f"room fault while {tid} ran: {what}; {tid} is in swarm/{where}/, no round used; its "
                f"ledger line could not be written ({_oserror(again)})",
                exit_code=code,
            )
    where = "back in the queue" if back else "out of swarm/running/ already"
    return errors.ControlRoomError(
        f"room fault while {tid} ran: {what}; {tid} is {where}, no round used", exit_code=code
    )


def _oserror(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        return f"{exc.filename}: {exc.strerror}" if exc.filename else str(exc.strerror or exc)
    return str(exc)


# 3a. Recover what dead cycles left in swarm/running/: not the tasks' fault, so no round used.
def recover(
    room: Room, settings: Settings, *, mine: int | None, share: sync.Shared | None = None
) -> list[str]:
    """Recover every dead claim; return what was done, one line each. In a shared room, a dead
    claim another machine took over meanwhile is only let go."""
    said = []
    lost = {}
    if share is not None:
        from control_room.dispatch.shared import lost_claims  # a shared room's only (``_shared``)

        lost = lost_claims.lost(share)
    for task_id in claims.running_ids(room):
        info = claims.read_claim(room, task_id)
        why = claims.why_dead(room, info, settings.grace_s, mine=mine)
        if why is None:
            continue
        # Its cycle may have finished between our listing and now: the task left running/
        # (finish moves it, then removes the claim, then frees the slot). Not ours to recover.
        if not swarm.task_file(room, "running", task_id).exists():
            continue
        claims.kill_agent(room, info, task_id)
        if share is not None and task_id in lost:
            said.append(lost_claims.let_go(share, task_id, lost[task_id], why))
            continue
        task, problems = swarm.read_task(swarm.task_file(room, "running", task_id))
        if problems:
            swarm.reject(room, f"{task_id}.json", problems, task_id=task_id, state="running")
            claims.release(room, task_id)
            said.append(f"recovered {task_id}: {why}; not a valid task, moved to swarm/rejected/")
            continue
        line = unfinished.written_down(room, task, info)
        if line is not None:  # its run was judged: finished as written, never run twice
            said.append(unfinished.finish_written(room, settings, task, line, why))
            continue
        said.append(dispatcher_died(room, settings, task, why))
    for task_id in claims.moved_on(room):  # claims whose task left running/: finished, or not
        info = claims.read_claim(room, task_id)
        why = claims.why_dead(room, info, settings.grace_s, mine=mine)
        if why is None:
            continue  # its cycle still does what follows the move
        followed = unfinished.follow_up(room, settings, task_id, why, info)
        if followed is not None:
            said.append(followed)
        claims.release(room, task_id)
    return said


# 3c. Claim: one rename into swarm/running/, then the claim file.
def claim(room: Room, picked: Pick, slot: int, deadline: float) -> None:
    task = picked.task
    task_id = task["id"]
    swarm.move(room, task_id, "queue", "running")
    crashpoint.hit("claim.moved")
    claims.write_claim(
        room,
        task_id,
        {
            "pid": os.getpid(),
            "host": claims.host(room),
            "slot": slot,
            "started": now_iso(),
            "deadline": deadline,
        },
    )
    crashpoint.hit("claim.written")
    ledger.append(
        room.ledger,
        events.CLAIM,
        task=task_id,
        route=task.get("route", ""),
        adapter=picked.plan.adapter.name,
        detail=f"round {int(task.get('rounds', 0)) + 1}, slot {slot}, pid {os.getpid()}"
        f" on {claims.host(room)}",
    )
