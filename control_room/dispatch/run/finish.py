"""Writing down a finished run (SPEC §4 steps 7-8): what failed, the commit of its work, its
results, the ledger line, and where the task goes (``destination``).

The order of writes is what makes a crash safe: results files first (meta.json), then the
ledger line, then the task's move out of ``swarm/running/``. A cycle killed at any point leaves
its task in ``running/`` with a claim that the next cycle recovers.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from control_room import crashpoint, errors, ledger, proc
from control_room.dispatch.queue.pick import Pick
from control_room.dispatch.review.which import check_lenses, serves
from control_room.dispatch.round import claims, validator
from control_room.dispatch.round.outcome import CycleResult, fail_round
from control_room.dispatch.round.report import Report, claims_success
from control_room.dispatch.run import destination
from control_room.dispatch.worktrees import place
from control_room.knowledge import history, routes
from control_room.ledger import events, result
from control_room.ledger.result import RunResult, fingerprint
from control_room.room import swarm
from control_room.room.layout import Room
from control_room.room.settings import Settings
from control_room.room.tasks import Task
from control_room.store import records
from control_room.store.files import flush, read_bytes
from control_room.timeutil import now_iso
from control_room.words import count

if TYPE_CHECKING:
    from control_room.adapters import Outcome


class Ran:
    """One finished run of a claimed task, as the runner read it back, not yet written down.
    (A plain class: a dataclass costs every cycle ~3 M instructions to build.)"""

    __slots__ = ("answer", "meta", "outcome", "picked", "rep", "res", "results", "val")

    def __init__(
        self,
        picked: Pick,
        results: Path,
        meta: dict[str, Any],
        res: proc.Result,
        outcome: Outcome,
        rep: Report,
        val: proc.Result | None,
        answer: str,
    ) -> None:
        self.picked = picked
        self.results = results  # its results folder
        self.meta = meta  # meta.json so far (the runner's part: task, round, argv, prompt size)
        self.res = res  # the agent's process
        self.outcome = outcome  # what the adapter read from it
        self.rep = rep  # its report, checked
        self.val = val  # the validator's process (None: it could not start)
        self.answer = answer  # what the agent said (proposals are read from it)

    @property
    def task(self) -> Task:
        return self.picked.task

    @property
    def round(self) -> int:
        return int(self.task.get("rounds", 0)) + 1

    @property
    def workdir(self) -> Path:
        return Path(self.meta["workdir"])


def finish(room: Room, settings: Settings, ran: Ran) -> CycleResult:
    """Write the run down: its failures (or the commit of its work), meta.json, its ledger
    lines, and the task's move: a failed round, or where a pass goes."""
    failures = _failures(settings, ran)
    if not failures and settings.repo and not serves(ran.task):
        _commit(room, settings, ran, failures)
    run = _record(ran, failures)
    task = ran.task
    # the run's results, durable before the line that says what they hold (one commit for all)
    flush([*(ran.results / n for n in RESULTS), room.swarm / "outbox" / f"{task['id']}.md"])
    cost = ran.outcome.cost_usd or 0.0
    if cost > float(task["max_cost_usd"]):
        ledger.append(
            room.ledger,
            events.COST_OVERRUN,
            task=task["id"],
            route=task.get("route", ""),
            adapter=ran.picked.plan.adapter.name,
            detail=f"spent ${cost:.4f}, above the task's max_cost_usd ${task['max_cost_usd']}",
        )
    if failures and not serves(task):  # a review's verdict is no attempt at the work
        run.fingerprint = fingerprint(run.failed, _change(ran.workdir) if settings.repo else "")
    _log_result(room, ran.picked, "fail" if failures else "pass", cost, run)
    crashpoint.hit("result.logged")
    if failures:
        return failed(room, settings, task, run.failed, cost)
    plan = ran.picked.plan
    done = Written(task, plan.adapter.name, plan.role_meta.get("writes_tasks") is True, ran.workdir,
                   ran.answer, ran.rep, _summary(ran))  # fmt: skip
    return passed(room, settings, done, cost)


def _failures(settings: Settings, ran: Ran) -> list[str]:
    """What failed, in the order a person reads it: the agent, its report, the validator."""
    task, outcome, rep, val = ran.task, ran.outcome, ran.rep, ran.val
    failures = []
    if ran.res.timed_out:  # the adapter's words say why, where it knows (codex: while reconnecting)
        limit = float(task["wall_clock_s"])
        failures.append(outcome.error or f"the agent was killed at its {limit:g}s time limit")
    elif not outcome.ok:
        failures.append(outcome.error or f"{ran.picked.plan.adapter.name} failed")
    if not rep.ok:
        failures.append(
            "broken report: " + "; ".join(f"line {v.line}: {v.message}" for v in rep.violations[:3])
        )
    elif serves(task):  # a review or an arbiter: its report must be a verdict
        from control_room.dispatch.review import queueing  # a review's only: the rest of the review wing

        not_a_verdict = queueing.check_report(task, rep)
        if not_a_verdict:
            failures.append(not_a_verdict)
    if (val is None or not val.ok) and not serves(task):
        # a review's validator re-runs the reviewed task's check: it judges the reviewer's claims
        # (an unsupported one is flagged in ``_record``), not whether the review is one
        failures.append(validator.failure(val, settings))
    return failures


def _commit(room: Room, settings: Settings, ran: Ran, failures: list[str]) -> None:
    """The work of a passing run: a commit on its branch (a failure if it cannot be made),
    pushed to ``repo_remote:`` so other machines see it (a warning if not)."""
    from control_room.dispatch.shared import repo_remote  # with a target repository only: git's wings
    from control_room.dispatch.worktrees import worktree  # (the same)

    task = ran.task
    try:
        message = _message(task, ran.picked.plan.adapter.name, ran.round)
        ran.meta["commit"] = worktree.commit(ran.workdir, message, claims.host(room))
    except errors.ControlRoomError as exc:
        failures.append(str(exc))
    if ran.meta.get("commit") and settings.repo_remote:
        unpushed = repo_remote.push_branch(ran.workdir, settings, place.branch_of(task))
        if unpushed is not None:
            why = f"{place.branch_of(task)} not pushed to {settings.repo_remote}: {unpushed}"
            ledger.append(room.ledger, events.WARNING, task=task["id"], detail=why)


RESULTS = ("prompt.md", "report.md", "answer.md", "meta.json")  # written by the runner, made durable here


def _record(ran: Ran, failures: list[str]) -> RunResult:
    """meta.json, written whole; and the ``result`` line's detail."""
    res, outcome, rep, val, plan = ran.res, ran.outcome, ran.rep, ran.val, ran.picked.plan
    check = val.argv if val is not None else []
    unsupported = rep.ok and not (val is not None and val.ok) and claims_success(rep, check)
    ran.meta.update(
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
    records.write(ran.results / "meta.json", ran.meta, durable=False)
    return RunResult(
        decision=rep.decision,
        failed="; ".join(failures),
        unsupported=unsupported,
        round=ran.round,
        exit=res.exit_code,
        seconds=res.duration_s,
        report="ok" if rep.ok else "broken",
        validator=validator.word(val),
        model=plan.model or "default",  # no model set: the adapter CLI's own default
        role=plan.role,
        serves=str(serves(ran.task) or ""),
        input_tokens=outcome.input_tokens,
        output_tokens=outcome.output_tokens,
        metrics=validator.metrics(val),
        estimated=bool(ran.meta.get("cost_estimated")),
    )


def _summary(ran: Ran) -> str:
    """The run in one line, for the cycle's message."""
    res, outcome, meta = ran.res, ran.outcome, ran.meta
    tokens = (
        f", tokens {outcome.input_tokens or 0}/{outcome.output_tokens or 0}" if outcome.input_tokens else ""
    )
    return (
        f"round {ran.round}; agent exit {res.exit_code} in {res.duration_s:.1f}s{tokens}; "
        f"report {'ok' if ran.rep.ok else 'broken'}; validator {validator.word(ran.val)}; "
        f"prompt {meta['prompt_bytes']} B ~{meta['prompt_tokens_est']} tokens "
        f"({meta['context_pressure']:.1%} of context)"
    )


class Written:
    """A passing run as its ``result`` line wrote it down: what ``passed`` needs to move its
    task (from the run, or read back from its results when a crash cut the cycle after the line)."""

    __slots__ = ("adapter", "answer", "rep", "summary", "task", "workdir", "writes_tasks")

    def __init__(
        self,
        task: Task,
        adapter: str,
        writes_tasks: bool,
        workdir: Path,
        answer: str,
        rep: Report,
        summary: str,
    ) -> None:
        self.task, self.adapter, self.writes_tasks, self.workdir = task, adapter, writes_tasks, workdir
        self.answer, self.rep, self.summary = answer, rep, summary


def passed(room: Room, settings: Settings, ran: Written, cost: float) -> CycleResult:
    """Move a passing task where ``destination.decide`` says, and do what follows there."""
    task = ran.task
    tid = task["id"]
    chosen = check_lenses(room, settings, task)
    served = bool(serves(task))
    ahead = bool(settings.repo) and not served and _ahead(room, settings, ran.workdir)
    goes = destination.decide(
        serves=served,
        lenses=bool(chosen),
        repo=bool(settings.repo),
        ahead=ahead,
        writes_tasks=ran.writes_tasks,
    )
    moved: Task = {**task, "passed_at": now_iso()}
    swarm.move(room, tid, "running", goes.state, task=moved)
    crashpoint.hit("passed.moved")  # what follows the move not done yet: the claim says so
    if goes.proposals:
        from control_room.dispatch.queue import orchestrator  # an orchestrator's pass only (~8 ms to load)

        orchestrator.accept(room, settings, tid, ran.answer)
    _after(room, settings, task, "pass", cost)
    ready = tid if goes.merge else None
    waits = ""
    if goes.then == destination.REVIEWS:
        from control_room.dispatch.review import queueing  # a reviewed task's only

        warned: list[str] = []
        ids = queueing.queue_reviews(room, settings, moved, chosen, "passed", warned)
        waits = f"; waits for {count(len(ids), 'review')}: {', '.join(ids)}"
        waits += "".join(f"; warning: {w}" for w in warned)
    elif goes.then == destination.MERGE:
        waits = "; waits in swarm/passed/ for `control-room integrate`"
    elif goes.then == destination.NOTHING_TO_MERGE:
        waits = "; nothing to merge: its branch holds no change against the base"
        from control_room.dispatch.merge import integrate  # with a target repository only

        integrate.tidy(room, settings, task)
    elif goes.then == destination.VERDICT:  # what the reviewed task's reviews now add up to
        from control_room.dispatch.review import verdicts  # a review's or an arbiter's pass only

        said, ready = verdicts.after_pass(room, settings, moved, ran.rep, ran.adapter)
        waits = f"; {said}"
    # Last: a claim file whose task has left running/ while its cycle is dead tells recovery
    # that what follows the move may not be done (``unfinished.follow_up``)
    claims.release(room, tid)
    return CycleResult(errors.PASSED, f"passed: {tid} ({ran.summary}){waits}", tid, merge=ready)


def _ahead(room: Room, settings: Settings, workdir: Path) -> bool:
    """Whether the route's branch holds commits its base does not (with a target repository)."""
    from control_room.dispatch.worktrees import worktree  # with a target repository only

    return worktree.ahead(room, settings, workdir)


def failed(room: Room, settings: Settings, task: Task, why: str, cost: float) -> CycleResult:
    """A failed round: back to the queue with what failed (its reviews first, with
    ``review_when: always``), or parked after the last."""
    tid = task["id"]
    key = task.get("route") or f"task:{tid}"
    st, _ = history.state(room)
    streak = history.stuck(st, key, settings.max_identical_failures)
    stuck = ""
    if streak is not None:  # the same change failing the same way: no progress
        stuck = (
            f"after {count(streak['n'], 'failed round')} in a row with one fingerprint ({streak['cause']})"
        )
        ledger.append(
            room.ledger,
            events.KILL_PROPOSED,
            task=tid,
            route=task.get("route", ""),
            detail=f"{stuck}: {result.cut(why)}; reopen if: a change that fails another way, or a new "
            "approach to its falsifier",
        )
    where = fail_round(room, settings, task, why, src="running", stuck=stuck)
    crashpoint.hit("failed.moved")  # what follows the move not done yet: the claim says so
    _after(room, settings, task, "fail", cost)
    back = swarm.task_file(room, "queue", tid)
    if settings.review_when == "always" and back.exists():  # its next round waits for reviews
        chosen = check_lenses(room, settings, task)
        if chosen:
            from control_room.dispatch.review import queueing  # a reviewed task's only

            failed, _ = swarm.read_task(back)
            warned: list[str] = []
            ids = queueing.queue_reviews(room, settings, failed, chosen, "queue", warned)
            where += f"; it waits for {count(len(ids), 'review')} of this round: {', '.join(ids)}"
            where += "".join(f"; warning: {w}" for w in warned)
    claims.release(room, tid)  # last, as a pass's (``passed``)
    return CycleResult(errors.FAILED, f"failed: {tid} ({why}); {where}", tid)


UNTRACKED_MAX = 500  # untracked files whose content a fingerprint reads, at most (1 MB each)


def _change(workdir: Path) -> str:
    """What a failed round left in its worktree, for its fingerprint: the diff against HEAD and
    each untracked file's name and content ("" when git cannot say)."""
    from control_room import git  # with a target repository only

    code, diff, _ = git.run(workdir, "diff", "HEAD", "--no-color", "--no-ext-diff")
    code2, untracked, _ = git.run(workdir, "ls-files", "-z", "--others", "--exclude-standard")
    if code != 0 or code2 != 0:
        return ""
    parts = [diff]
    for name in sorted(n for n in untracked.split("\0") if n)[:UNTRACKED_MAX]:
        try:
            content = read_bytes(workdir / name, 1 << 20)
        except OSError:
            content = b""
        parts.append(f"{name}\0{content.decode('utf-8', 'replace')}")
    return "\0".join(parts)


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


def _after(room: Room, settings: Settings, task: Task, verdict: str, cost: float) -> None:
    """Step 8, the model's part: ROUTES.md and a new death loop's announcement. The views
    (DIGEST.md, CURRENT_CONTEXT.md) are refreshed at the edge of the command."""
    if task.get("route") and not serves(task):  # a review is no run of the route's own
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
