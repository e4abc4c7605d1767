"""Running a claimed task (SPEC §4 steps 4-7): its work dir, the prompt, the agent's run, its
report and the validator; then ``finish`` writes it down (step 8) and, with ``auto_integrate``,
the merge queue takes a pass at once. A STOP, a missing CLI or the provider's refusal
(``provider``) puts the task back without a round.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from control_room import errors, interrupt, ledger, proc
from control_room.dispatch.queue import ready
from control_room.dispatch.queue.environment import agent_env
from control_room.dispatch.queue.pick import Pick
from control_room.dispatch.review.which import check_lenses, serves
from control_room.dispatch.round import prompt, validator
from control_room.dispatch.round.outcome import CycleResult, requeue
from control_room.dispatch.round.report import validate as validate_report
from control_room.dispatch.run import agent, finish, preflight, provider, spend
from control_room.knowledge import digest
from control_room.ledger import events
from control_room.room import cooldowns, swarm
from control_room.room import results as results_folder
from control_room.room.layout import Room
from control_room.room.settings import Settings
from control_room.room.tasks import Task
from control_room.store.files import atomic_write
from control_room.timeutil import now_iso

# (task id, adapter, seconds elapsed, the time limit, output bytes so far)
Progress = Callable[[str, str, float, float, int], None]


def run_claimed(
    room: Room, settings: Settings, picked: Pick, *, progress: Progress | None = None
) -> CycleResult:
    task, plan = picked.task, picked.plan
    adapter = plan.adapter
    tid = task["id"]
    round_no = int(task.get("rounds", 0)) + 1
    results = results_folder.folder(room, tid)
    results_folder.archive(results)
    linked = results_folder.parent_linked(results)  # a person's link stays; one an agent makes goes
    if settings.repo:  # the route's worktree of the target repository, made or reused
        from control_room.dispatch.worktrees import worktree  # with a target repository only

        workdir = worktree.workdir(room, settings, task)
    else:
        workdir = preflight.workdir(room, settings)
        if not workdir.is_dir():  # checked before the claim: it vanished since, the room's fault
            raise errors.RoomInvalidError(f"{room.control}: workdir {workdir} does not exist")
    check_lenses(room, settings, task)  # a missing lens is the room's fault: before the run
    shown = _materials(room, settings, task) if serves(task) else ""  # a review's or an arbiter's view
    history = digest.route_history(room, task["route"]) if task.get("route") else ""
    runs_on = f"{adapter.name}, " + (f"model {plan.model}" if plan.model else "its default model")
    if plan.instead_of:
        runs_on += f" (a fallback: {plan.instead_of} cools down after its provider refused)"
    p = prompt.assemble(room, task, plan.role, settings, history=history, runs_on=runs_on, shown=shown)
    for w in p.warnings:
        ledger.append(room.ledger, events.WARNING, task=tid, detail=w)
    # The run's results are made durable together when it is written down (``finish``), not one
    # by one: one journal commit, not five (docs/cycle.md)
    atomic_write(room.swarm / "outbox" / f"{tid}.md", p.text, durable=False)
    atomic_write(results / "prompt.md", p.text, durable=False)  # archived with the run's other files
    inv, env = agent.prepare(room, settings, plan, task, p.text, workdir, results)
    brief = inv.brief
    meta: dict[str, Any] = {
        "task": tid,
        "round": round_no,
        "adapter": adapter.name,
        "model": plan.model,
        **({"instead_of": plan.instead_of} if plan.instead_of else {}),
        "workdir": str(workdir),
        "started": now_iso(),
        **p.pressure(adapter.context_window),
    }

    try:
        meta["argv"] = adapter.command(inv)
        limit = float(task["wall_clock_s"])
        tick = None if progress is None else (lambda t, n: progress(tid, adapter.name, t, limit, n))
        left = ready.tokens_left(room, settings)
        home = adapter.usage_home(inv, env)  # where the CLI logs its usage per request, if it does
        cap = spend.meter(adapter, inv, results / "stdout.txt", settings.prices, left, home)
        res = agent.execute(room, settings, adapter, inv, env, limit, on_tick=tick, watch=cap)
    except proc.ExecutableNotFound as exc:
        brief.unlink(missing_ok=True)
        requeue(room, task, events.ADAPTER_MISSING, f"{exc}; {adapter.install}", adapter=adapter.name)
        return CycleResult(
            errors.ADAPTER_MISSING,
            f"adapter {adapter.name} unavailable: {exc}; task {tid} back in the queue",
            tid,
        )
    results_folder.own(results, linked)  # a link the agent left in its place goes: what follows stays in
    if res.stopped:
        brief.unlink(missing_ok=True)
        return _stopped(room, picked, "while the agent ran")
    for stream in (res.stdout, res.stderr):
        if stream.error:  # the room's fault (the disk filled): the cycle un-claims the task
            raise errors.ControlRoomError(
                f"the agent's output could not be saved: {stream.error}", exit_code=errors.IO_ERROR
            )
    outcome = agent.read(adapter, inv, res)
    if spend.settle(cap, outcome) or spend.price(outcome, settings.prices, plan.model):
        meta["cost_estimated"] = True  # dollars from tokens and CONTROL.md prices:, not the CLI's
    if outcome.fault is not None and outcome.fault.is_providers():  # not the task's fault
        brief.unlink(missing_ok=True)
        _discard_edits(room, settings, task, workdir)
        return provider.refused(room, picked, outcome.fault)
    if outcome.ok:
        cooldowns.clear(room, adapter.name, plan.model)
    atomic_write(results / "report.md", outcome.final_message, durable=False)
    # What the agent said: its final message, or its output where the adapter (the probe) wrote
    # the report itself. Proposals are read from here.
    answer = str(outcome.extra.get("answer", outcome.final_message))
    cuts = [n for n in res.notes if " cut at " in n]
    if cuts:  # said where a person reads the answer, not only in meta.json
        answer += "".join(
            f"\n\n[control-room: the agent's {n}; the rest was dropped (CONTROL.md capture_max_bytes)]"
            for n in cuts
        )
    atomic_write(results / "answer.md", answer, durable=False)
    rep = validate_report(outcome.final_message)
    brief.unlink(missing_ok=True)
    # reviewers and arbiters never edit: what they changed goes before their validator runs, so
    # that it checks their claims on the reviewed tree; then what the check itself left goes too
    _discard_edits(room, settings, task, workdir)
    # the validator gets the minimal environment (and CONTROL.md env_allow), never the agent's
    val = validator.run(room, settings, task, workdir, agent_env(room, settings, task), results)
    results_folder.own(results, linked)
    _discard_edits(room, settings, task, workdir, by="its validator")
    if val is not None and val.stopped:
        return _stopped(room, picked, "while its validator ran")
    # From here the run is written down whole (results, ledger line, move): Ctrl-C waits.
    with interrupt.deferred():
        done = finish.finish(
            room, settings, finish.Ran(picked, results, meta, res, outcome, rep, val, answer)
        )
    if done.code == errors.PASSED and settings.auto_integrate and done.merge:
        return _auto_integrate(room, settings, done.merge, done)
    return done


def _auto_integrate(room: Room, settings: Settings, ready: str, passed: CycleResult) -> CycleResult:
    """``auto_integrate: true``: the task that just passed (or whose reviews just accepted it)
    goes through the merge queue now, unless its ``merge`` gate waits for a person. The cycle's
    code is then the merge queue's."""
    from control_room.dispatch.merge import integrate  # auto_integrate only: the merge queue

    task, _ = swarm.read_task(swarm.task_file(room, "passed", ready))
    if integrate.waits_for_gate(settings, task):
        return passed
    try:
        (merged,) = integrate.integrate(room, settings, ready)
    except errors.RoomInvalidError as exc:  # the main tree is not fit: the task waits in passed/
        ledger.append(room.ledger, events.WARNING, task=ready, detail=f"auto_integrate: {exc}")
        return CycleResult(errors.ROOM_INVALID, f"{passed.message}; not merged: {exc}", passed.task_id)
    except (errors.ConflictError, errors.OfflineError) as exc:  # another machine merges, or offline
        ledger.append(room.ledger, events.WARNING, task=ready, detail=f"auto_integrate: {exc}")
        return CycleResult(
            passed.code, f"{passed.message}; not merged yet: {exc}", passed.task_id, passed.notes
        )
    return CycleResult(merged.code, f"{passed.message}; {merged.message}", passed.task_id, passed.notes)


def _materials(room: Room, settings: Settings, task: Task) -> str:
    """The prompt section of a review or an arbiter task: what its lens shows it."""
    from control_room.dispatch.review import materials  # a review's or an arbiter's only

    try:
        return materials.materials(room, settings, task)
    except errors.InvalidError as exc:
        raise errors.RoomInvalidError(f"room invalid: {exc}") from None


def _discard_edits(room: Room, settings: Settings, task: Task, workdir: Path, *, by: str = "") -> None:
    """What a reviewer or an arbiter (or, ``by`` its validator) changed in the worktree, undone;
    nothing to do for any other task, or without a target repository."""
    if not serves(task) or not settings.repo:
        return
    from control_room.dispatch.review import queueing  # a review's or an arbiter's only

    queueing.discard_edits(room, settings, task, workdir, by=by)


def _stopped(room: Room, picked: Pick, when: str) -> CycleResult:
    tid = picked.task["id"]
    requeue(
        room,
        picked.task,
        events.STOPPED,
        f"STOP appeared {when}; process group killed; task back in the queue",
        adapter=picked.plan.adapter.name,
    )
    return CycleResult(errors.STOPPED, f"stopped: STOP appeared {when}; {tid} is back in the queue", tid)
