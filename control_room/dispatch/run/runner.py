"""Running a claimed task (SPEC §4 steps 4-8): prepare, run the adapter, validate, write.

The order of writes is what makes a crash safe: results files first, then the ledger line,
then the task's move out of ``swarm/running/``. A cycle killed at any point leaves its task in
``running/`` with a claim that the next cycle recovers.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from control_room import errors, interrupt, ledger, proc
from control_room.dispatch.merge import integrate
from control_room.dispatch.queue import orchestrator
from control_room.dispatch.queue.pick import Pick
from control_room.dispatch.review import materials, queueing, verdicts
from control_room.dispatch.round import claims, prompt, validator
from control_room.dispatch.round.outcome import CycleResult, fail_round, requeue
from control_room.dispatch.round.report import Report, claims_success
from control_room.dispatch.round.report import validate as validate_report
from control_room.dispatch.run import agent, preflight
from control_room.dispatch.shared import repo_remote
from control_room.dispatch.worktrees import place, worktree
from control_room.knowledge import digest, history, routes
from control_room.ledger import events
from control_room.ledger.result import RunResult
from control_room.room import results as results_folder
from control_room.room import swarm
from control_room.room.layout import Room
from control_room.room.settings import Settings
from control_room.room.tasks import Task
from control_room.store import records
from control_room.store.files import atomic_write
from control_room.timeutil import now_iso
from control_room.words import count

if TYPE_CHECKING:
    from control_room.adapters import Outcome


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
    if settings.repo:  # the route's worktree of the target repository, made or reused
        workdir = worktree.workdir(room, settings, task)
    else:
        workdir = preflight.workdir(room, settings)
        if not workdir.is_dir():  # checked before the claim: it vanished since, the room's fault
            raise errors.RoomInvalidError(f"{room.control}: workdir {workdir} does not exist")
    queueing.check_lenses(room, settings, task)  # a missing lens is the room's fault: before the run
    try:
        shown = materials.materials(room, settings, task)  # a review's or an arbiter's view
    except errors.InvalidError as exc:
        raise errors.RoomInvalidError(f"room invalid: {exc}") from None
    history = digest.route_history(room, task["route"]) if task.get("route") else ""
    runs_on = f"{adapter.name}, " + (f"model {plan.model}" if plan.model else "its default model")
    p = prompt.assemble(room, task, plan.role, settings, history=history, runs_on=runs_on, shown=shown)
    for w in p.warnings:
        ledger.append(room.ledger, events.WARNING, task=tid, detail=w)
    atomic_write(room.swarm / "outbox" / f"{tid}.md", p.text)
    atomic_write(results / "prompt.md", p.text)  # archived with the run's other files
    inv, env = agent.prepare(room, settings, plan, task, p.text, workdir, results)
    brief = inv.brief
    meta: dict[str, Any] = {
        "task": tid,
        "round": round_no,
        "adapter": adapter.name,
        "model": plan.model,
        "workdir": str(workdir),
        "started": now_iso(),
        **p.pressure(adapter.context_window),
    }

    def started(pid: int) -> None:
        info = claims.read_claim(room, tid) or {}
        info["agent_pgid"] = pid
        try:
            claims.write_claim(room, tid, info)
        except errors.ControlRoomError:
            pass  # recovery still works by pid, slot and deadline

    try:
        meta["argv"] = adapter.command(inv)
        limit = float(task["wall_clock_s"])
        tick = None if progress is None else (lambda t, n: progress(tid, adapter.name, t, limit, n))
        res = agent.execute(room, settings, adapter, inv, env, limit, on_start=started, on_tick=tick)
    except proc.ExecutableNotFound as exc:
        brief.unlink(missing_ok=True)
        requeue(room, task, events.ADAPTER_MISSING, f"{exc}; {adapter.install}", adapter=adapter.name)
        return CycleResult(
            errors.ADAPTER_MISSING,
            f"adapter {adapter.name} unavailable: {exc}; task {tid} back in the queue",
            tid,
        )
    if res.stopped:
        brief.unlink(missing_ok=True)
        return _stopped(room, picked, "while the agent ran")
    for stream in (res.stdout, res.stderr):
        if stream.error:  # the room's fault (the disk filled): the cycle un-claims the task
            raise errors.ControlRoomError(
                f"the agent's output could not be saved: {stream.error}", exit_code=errors.IO_ERROR
            )
    outcome = agent.read(adapter, inv, res)
    atomic_write(results / "report.md", outcome.final_message)
    # What the agent said: its final message, or its output where the adapter (the probe) wrote
    # the report itself. Proposals are read from here.
    answer = str(outcome.extra.get("answer", outcome.final_message))
    cuts = [n for n in res.notes if " cut at " in n]
    if cuts:  # said where a person reads the answer, not only in meta.json
        answer += "".join(
            f"\n\n[control-room: the agent's {n}; the rest was dropped (CONTROL.md capture_max_bytes)]"
            for n in cuts
        )
    atomic_write(results / "answer.md", answer)
    rep = validate_report(outcome.final_message)
    val = validator.run(room, settings, task, workdir, env, results)
    brief.unlink(missing_ok=True)
    queueing.discard_edits(room, settings, task, workdir)  # reviewers and arbiters never edit
    if val is not None and val.stopped:
        return _stopped(room, picked, "while its validator ran")
    # From here the run is written down whole (results, ledger line, move): Ctrl-C waits.
    with interrupt.deferred():
        done = _finish(room, settings, picked, results, meta, res, outcome, rep, val, answer)
    if done.code == errors.PASSED and settings.auto_integrate and done.merge:
        return _auto_integrate(room, settings, done.merge, done)
    return done


def _auto_integrate(room: Room, settings: Settings, ready: str, passed: CycleResult) -> CycleResult:
    """``auto_integrate: true``: the task that just passed (or whose reviews just accepted it)
    goes through the merge queue now, unless its ``merge`` gate waits for a person. The cycle's
    code is then the merge queue's."""
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


def _finish(
    room: Room,
    settings: Settings,
    picked: Pick,
    results: Path,
    meta: dict[str, Any],
    res: proc.Result,
    outcome: Outcome,
    rep: Report,
    val: proc.Result | None,
    answer: str,
) -> CycleResult:
    task, plan = picked.task, picked.plan
    adapter = plan.adapter
    tid = task["id"]
    round_no = int(task.get("rounds", 0)) + 1
    failures = []
    if res.timed_out:  # the adapter's words say why, where it knows (codex: while reconnecting)
        limit = float(task["wall_clock_s"])
        failures.append(outcome.error or f"the agent was killed at its {limit:g}s time limit")
    elif not outcome.ok:
        failures.append(outcome.error or f"{adapter.name} failed")
    if not rep.ok:
        failures.append(
            "broken report: " + "; ".join(f"line {v.line}: {v.message}" for v in rep.violations[:3])
        )
    elif queueing.serves(task):  # a review or an arbiter: its report must be a verdict
        not_a_verdict = queueing.check_report(task, rep)
        if not_a_verdict:
            failures.append(not_a_verdict)
    val_ok = val is not None and val.ok
    if not val_ok:
        failures.append(validator.failure(val, settings))
    if not failures and settings.repo and not queueing.serves(task):  # the work: a commit on its branch
        try:
            meta["commit"] = worktree.commit(
                Path(meta["workdir"]), _message(task, plan.adapter.name, round_no)
            )
        except errors.ControlRoomError as exc:
            failures.append(str(exc))
        if meta.get("commit") and settings.repo_remote:  # other machines see the route's work
            unpushed = repo_remote.push_branch(Path(meta["workdir"]), settings, place.branch_of(task))
            if unpushed is not None:
                why = f"{place.branch_of(task)} not pushed to {settings.repo_remote}: {unpushed}"
                ledger.append(room.ledger, events.WARNING, task=task["id"], detail=why)
    unsupported = rep.ok and not val_ok and claims_success(rep)
    meta.update(
        {
            "ended": now_iso(),
            "exit_code": res.exit_code,
            "timed_out": res.timed_out,
            "duration_s": round(res.duration_s, 3),
            "notes": res.notes,
            "input_tokens": outcome.input_tokens,
            "output_tokens": outcome.output_tokens,
            "cost_usd": outcome.cost_usd,
            "agent_ok": outcome.ok,
            "agent_error": outcome.error,
            "report": {
                "ok": rep.ok,
                "decision": rep.decision,
                "violations": [[v.line, v.message] for v in rep.violations],
            },
            "validator": validator.meta(val),
            "metrics": validator.metrics(val),
            "verdict": "pass" if not failures else "fail",
            "failures": failures,
            "unsupported_claim": unsupported,
        }
    )
    records.write(results / "meta.json", meta)
    cost = outcome.cost_usd or 0.0
    tokens = (
        f", tokens {outcome.input_tokens or 0}/{outcome.output_tokens or 0}" if outcome.input_tokens else ""
    )
    summary = (
        f"round {round_no}; agent exit {res.exit_code} in {res.duration_s:.1f}s{tokens}; "
        f"report {'ok' if rep.ok else 'broken'}; validator {validator.word(val)}; "
        f"prompt {meta['prompt_bytes']} B ~{meta['prompt_tokens_est']} tokens "
        f"({meta['context_pressure']:.1%} of context)"
    )
    run = RunResult(
        decision=rep.decision,
        failed="; ".join(failures),
        unsupported=unsupported,
        round=round_no,
        exit=res.exit_code,
        seconds=res.duration_s,
        report="ok" if rep.ok else "broken",
        validator=validator.word(val),
        model=plan.model or "default",  # no model set: the adapter CLI's own default
        role=plan.role,
        input_tokens=outcome.input_tokens,
        output_tokens=outcome.output_tokens,
        metrics=validator.metrics(val),
    )
    if cost > float(task["max_cost_usd"]):
        ledger.append(
            room.ledger,
            events.COST_OVERRUN,
            task=tid,
            route=task.get("route", ""),
            adapter=adapter.name,
            detail=f"spent ${cost:.4f}, above the task's max_cost_usd ${task['max_cost_usd']}",
        )
    if failures:
        return _finish_fail(room, settings, picked, run, cost=cost)
    _log_result(room, picked, "pass", cost, run)
    # with a repo, a pass with work on its branch waits for the merge queue, and a pass with
    # lenses waits for its reviews; otherwise (no repo, an orchestrator, a task that changed
    # nothing, no review) it is done
    chosen = queueing.check_lenses(room, settings, task)
    served = queueing.serves(task)  # a review or an arbiter: never merged, never reviewed
    merge = bool(settings.repo) and not served and worktree.ahead(room, settings, Path(meta["workdir"]))
    passed: Task = {**task, "passed_at": now_iso()}
    swarm.move(room, tid, "running", "passed" if merge or chosen else "done", task=passed)
    claims.release(room, tid)
    if plan.role_meta.get("writes_tasks") is True:
        orchestrator.accept(room, settings, tid, answer)
    _after(room, settings, task, "pass", cost)
    ready = tid if merge and not chosen else None
    if chosen:
        ids = queueing.queue_reviews(room, settings, passed, chosen, "passed")
        waits = f"; waits for {count(len(ids), 'review')}: {', '.join(ids)}"
    elif merge:
        waits = "; waits in swarm/passed/ for `control-room integrate`"
    elif settings.repo and not served:
        waits = "; nothing to merge: its branch holds no change against the base"
        integrate.tidy(room, settings, task)
    else:
        waits = ""
    if served:  # a verdict: what the reviewed task's reviews now add up to
        said, ready = verdicts.after_pass(room, settings, passed, rep, adapter.name)
        waits += f"; {said}"
    return CycleResult(errors.PASSED, f"passed: {tid} ({summary}){waits}", tid, merge=ready)


def _message(task: Task, adapter: str, round_no: int) -> str:
    """The commit message of a task's work: its objective's first line, then where it came from."""
    first = str(task["objective"]).strip().splitlines()[0][:72]
    route = f", route {task['route']}" if task.get("route") else ""
    where = f"control-room task {task['id']}{route}, round {round_no}, adapter {adapter}"
    return f"{task['id']}: {first}\n\n{where}\n"


def _log_result(room: Room, picked: Pick, outcome: str, cost: float, run: RunResult) -> None:
    task = picked.task
    ledger.append(
        room.ledger,
        events.RESULT,
        task=task["id"],
        route=task.get("route", ""),
        adapter=picked.plan.adapter.name,
        outcome=outcome,
        cost_usd=cost,
        detail=run.detail(),
    )


def _finish_fail(
    room: Room, settings: Settings, picked: Pick, run: RunResult, *, cost: float = 0.0
) -> CycleResult:
    task = picked.task
    tid = task["id"]
    why = run.failed
    _log_result(room, picked, "fail", cost, run)
    where = fail_round(room, settings, task, why, src="running")
    _after(room, settings, task, "fail", cost)
    back = swarm.task_file(room, "queue", tid)
    if settings.review_when == "always" and back.exists():  # its next round waits for reviews
        chosen = queueing.check_lenses(room, settings, task)
        if chosen:
            failed, _ = swarm.read_task(back)
            ids = queueing.queue_reviews(room, settings, failed, chosen, "queue")
            where += f"; it waits for {count(len(ids), 'review')} of this round: {', '.join(ids)}"
    return CycleResult(errors.FAILED, f"failed: {tid} ({why}); {where}", tid)


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


def _after(room: Room, settings: Settings, task: Task, verdict: str, cost: float) -> None:
    """Step 8, the model's part: ROUTES.md and a new death loop's announcement. The views
    (DIGEST.md, CURRENT_CONTEXT.md) are refreshed at the edge of the command."""
    if task.get("route"):
        routes.record_run(room, task["route"], task["id"], verdict, cost)
    for key, loop in history.held(room, settings).items():
        if not loop["announced"]:
            route = key if not key.startswith("task:") else ""
            ledger.append(
                room.ledger,
                events.DEATH_LOOP,
                task=key[5:] if not route else "",
                route=route,
                detail=f"{count(loop['n'], 'failure')} in a row with the same {loop['same']}: "
                f"{loop['cause']}; held until `control-room route resume {key} --because ...`",
            )
