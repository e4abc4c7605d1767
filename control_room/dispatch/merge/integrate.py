"""The merge queue (SPEC §11): from a passed task's worktree to the base branch, checked again.

With ``repo:`` set, a task that passes waits in ``swarm/passed/``. ``control-room integrate``
(or the cycle that passed it, with ``auto_integrate: true`` and no ``merge`` gate waiting for
approval) takes such tasks one at a time, under one lock (``control-room/.integrate.lock``):

1. refuse, changing nothing, while the main tree is mid-rebase/merge, is not on the base
   branch, or has uncommitted changes (the room's own files aside);
2. rebase the task's branch onto the base, in its worktree; a conflict is a failed round
   naming the files, or, with ``conflict_resolver:``, a resolver task queued on that worktree;
3. refuse a diff outside the task's ``owns`` (a failed round) and one that takes a file past
   ``megafile_lines`` (the task waits for a decompose task);
4. run the task's validator again, in the worktree, after the rebase: the agent's word and the
   pre-rebase run are claims; a failure is a failed round;
5. fast-forward the base branch (never a merge commit), move the task to ``swarm/to-test/``,
   and remove the worktree and branch of a route that has nothing left to run.

Each outcome is one ``integrate`` ledger line. A person marks a merged task Done.
"""

from __future__ import annotations

import re

from control_room import crashpoint, errors, git, ledger
from control_room.dispatch.merge import fitness, landed
from control_room.dispatch.queue import index
from control_room.dispatch.queue.environment import agent_env
from control_room.dispatch.review import queueing
from control_room.dispatch.round import claims, validator
from control_room.dispatch.round.outcome import CycleResult, fail_round
from control_room.dispatch.shared import repo_remote
from control_room.dispatch.worktrees import place, worktree
from control_room.errors import ConflictError, InvalidError, RoomInvalidError
from control_room.knowledge import routes
from control_room.ledger import events
from control_room.room import results as results_folder
from control_room.room import swarm
from control_room.room.layout import Room
from control_room.room.settings import Settings
from control_room.room.tasks import Task
from control_room.store import lock, records
from control_room.timeutil import now_iso

PENDING = ("queue", "running", "passed", "parked")  # a route with a task here keeps its worktree


def queue_order(room: Room) -> list[str]:
    """The ids in ``swarm/passed/``, oldest pass first."""
    found = []
    for tid in swarm.Folders(room).ids("passed"):
        task, _ = swarm.read_task(swarm.task_file(room, "passed", tid))
        found.append((str(task.get("passed_at", "")), tid))
    return [tid for _, tid in sorted(found)]


def integrate(room: Room, settings: Settings, task_id: str | None = None) -> list[CycleResult]:
    """Integrate ``task_id``, or every passed task in order; one result each. Raises
    ``RoomInvalidError`` (nothing merged, nothing moved) when the main tree is not fit."""
    if not settings.repo:
        raise InvalidError(
            f"{room.control}: no repo is set, so there is nothing to integrate into; "
            "set repo (and base_branch) in CONTROL.md ([integration.md])"
        )
    # one integration at a time, however many cycles: here, and on every machine of a shared room
    with lock.held(room.cr / ".integrate.lock"), repo_remote.merge_queue(room, settings):
        if task_id is not None:
            return [_one(room, settings, task_id, explicit=True)]
        return [_one(room, settings, tid, explicit=False) for tid in queue_order(room)]


def why_waiting(room: Room, settings: Settings, task: Task) -> str:
    """Why a task in ``passed/`` is not merged yet, in one line (``status``)."""
    tid = task["id"]
    if queueing.needs_verdict(task):
        arbiter = _arbiter(room, task)
        if arbiter is not None:
            return f"waits for {arbiter}"
        states = [(r, swarm.state_of(room, r) or "gone") for r in task["review_tasks"]]
        return "waits for its reviews: " + ", ".join(f"{r} ({st})" for r, st in states)
    if waits_for_gate(settings, task):
        return f"waits for gate merge: `control-room approve {tid}`"
    return f"waits for the merge queue: `control-room integrate {tid}`"


def _arbiter(room: Room, task: Task) -> str | None:
    """``its arbiter ID (STATE)`` while the arbiter its reviews' disagreement queued (the id
    ``verdicts`` gave it, in the task's ``arbiter``) has not decided: what the task waits for
    then, not its reviews, which are done. None when there is none, or it decided."""
    arbiter = task.get("arbiter")
    state = swarm.state_of(room, arbiter) if arbiter else None
    return f"its arbiter {arbiter} ({state})" if arbiter and state not in (None, "done") else None


def waits_for_gate(settings: Settings, task: Task) -> bool:
    """A ``merge`` gate not yet approved holds the task in ``passed/``."""
    return "merge" in task.get("gate", []) and not settings.approved(task["id"], "merge")


def _one(room: Room, settings: Settings, tid: str, *, explicit: bool) -> CycleResult:
    state, path = swarm.locate(room, tid)
    if state != "passed":
        raise ConflictError(f"cannot integrate {tid}: it is in swarm/{state}/, not in swarm/passed/")
    task, problems = swarm.read_task(path)
    if problems:
        raise InvalidError(f"cannot integrate {tid}: {path} is not a valid task: {'; '.join(problems)}")
    if queueing.needs_verdict(task):  # fail closed: no verdict, no merge
        arbiter = _arbiter(room, task)
        reviews = ", ".join(task["review_tasks"])
        why = f"{tid} waits for {arbiter}" if arbiter else f"{tid} waits for its reviews: {reviews}"
        if explicit:
            raise ConflictError(
                f"cannot integrate {tid}: it waits for {arbiter}"
                if arbiter
                else f"cannot integrate {tid}: it waits for its reviews ({reviews})"
            )
        return CycleResult(errors.OK, why, tid)
    if waits_for_gate(settings, task):
        why = f"{tid} waits for gate merge: `control-room approve {tid}`"
        if explicit:
            raise ConflictError(f"cannot integrate {tid}: it {why[len(tid) + 1 :]}")
        return CycleResult(errors.OK, why, tid)
    repo = worktree.repo_of(room, settings)
    assert repo is not None
    base = fitness.main_tree_fit(room, settings, repo)
    if settings.repo_remote:
        repo_remote.catch_up(repo, settings, base)
    head = landed.landed(room, repo, task, base)
    if head is not None:  # a crash cut its merge between the line and the move: the move is left
        swarm.move(
            room, tid, "passed", "to-test", task={**task, "merged_at": now_iso(), "merged_commit": head}
        )
        tidy(room, settings, task)
        return CycleResult(
            errors.PASSED, f"merged: {tid} (merged at {head[:12]} before a crash); in swarm/to-test/", tid
        )
    wt = place.path_of(room, task)
    # before workdir: a rebase left half done detaches the branch, and workdir would make the
    # worktree again (a branch gone) instead of this round failing as unfit
    half = fitness.half_done(wt)
    if half is not None:
        return _fail(room, settings, task, "unfit", f"its worktree {wt} was left in the middle of {half}")
    wt = worktree.workdir(room, settings, task)  # made again (with its ledger line) if it vanished
    branch = place.branch_of(task)
    left = worktree.dirty(wt)
    if left:
        return _fail(
            room, settings, task, "unfit", f"uncommitted changes in its worktree: {fitness.names(left)}"
        )
    code, out, err = git.run(wt, "rebase", "-q", base, committer=claims.host(room))
    if code != 0:
        conflicted = git.run(wt, "diff", "--name-only", "--diff-filter=U")[1].split()
        git.run(wt, "rebase", "--abort")
        return _conflict(room, settings, task, branch, base, conflicted, err or out)
    changed = fitness.changed(wt, base)
    outside = fitness.outside_owns(task, [p for p, _, _ in changed])
    if outside:
        return _fail(
            room,
            settings,
            task,
            "refused",
            f"its diff touches paths outside its owns: {fitness.names(outside)}",
        )
    if settings.megafile_lines:  # every merge, a helper's too: a decompose that did nothing
        big = fitness.megafiles(wt, base, changed, settings.megafile_lines)
        if big:
            return _megafile(room, settings, task, big)
    results = results_folder.folder(room, tid)
    val = validator.run(
        room, settings, task, wt, agent_env(room, settings, task), results, stem="post-rebase"
    )
    if val is None or not val.ok:
        if val is not None and val.stopped:
            return CycleResult(
                errors.STOPPED, f"stopped: STOP appeared while {tid}'s validator ran again", tid
            )
        why = "after the rebase onto " + base + ", " + validator.failure(val, settings)
        return _fail(room, settings, task, "failed", why)
    before = git.run(repo, "rev-parse", "HEAD")[1].strip()
    code, out, err = git.run(repo, "merge", "--ff-only", "-q", branch)
    if code != 0:  # the base moved since the rebase: not the task's fault; try again
        raise RoomInvalidError(
            f"room invalid: {base} in {repo} cannot fast-forward to {branch} ({(err or out).strip()}); "
            f"nothing was merged: run `control-room integrate {tid}` again"
        )
    head = git.run(repo, "rev-parse", "HEAD")[1].strip()
    crashpoint.hit("integrate.merged")  # the base fast-forwarded; no line, the task in passed/
    if settings.repo_remote:
        unpushed = repo_remote.push_base(repo, settings, base)
        if unpushed is not None:  # the remote's base moved: undo our fast-forward, merge nothing
            git.run(repo, "reset", "-q", "--keep", before)
            raise RoomInvalidError(
                f"room invalid: {base} could not be pushed to {settings.repo_remote} ({unpushed}); "
                f"nothing was merged: run `control-room integrate {tid}` again"
            )
    size = f"{len(changed)} file{'s' if len(changed) != 1 else ''}"
    detail = (
        f"{branch} onto {base}: {size}; validator passed after the rebase; "
        f"{base} fast-forwarded to {head[:12]}"
    )
    _merged(room, task, detail, head)
    crashpoint.hit("integrate.moved")  # in swarm/to-test/; its worktree not tidied yet
    note = ""
    served = task.get("for_task")
    if served and swarm.task_file(room, "queue", served).exists():  # it waited for this helper
        other, _ = swarm.read_task(swarm.task_file(room, "queue", served))
        _merged(room, other, f"merged with {tid}, which served it: {detail}", head, src="queue")
        note = f"; {served} merged with it"
    tidy(room, settings, task)
    return CycleResult(errors.PASSED, f"merged: {tid} ({detail}){note}; in swarm/to-test/", tid)


def _adapter(room: Room, tid: str) -> str:
    meta = records.read_object(results_folder.folder(room, tid) / "meta.json")
    return str(meta.get("adapter", "")) if meta else ""


def _line(room: Room, task: Task, outcome: str, detail: str) -> None:
    ledger.append(
        room.ledger,
        events.INTEGRATE,
        task=task["id"],
        route=task.get("route", ""),
        adapter=_adapter(room, task["id"]),
        outcome=outcome,
        detail=detail,
    )


def _merged(room: Room, task: Task, detail: str, head: str, *, src: str = "passed") -> None:
    _line(room, task, "merged", detail)
    swarm.move(room, task["id"], src, "to-test", task={**task, "merged_at": now_iso(), "merged_commit": head})


def _fail(room: Room, settings: Settings, task: Task, outcome: str, why: str) -> CycleResult:
    """A failed round: the task's own change did not survive the merge queue."""
    tid = task["id"]
    _line(room, task, outcome, why)
    where = fail_round(room, settings, task, f"integration: {why}", src="passed")
    if task.get("route"):
        routes.record_run(room, task["route"], tid, "fail", 0.0)
    return CycleResult(errors.FAILED, f"not merged: {tid} ({why}); {where}", tid)


def _conflict(
    room: Room,
    settings: Settings,
    task: Task,
    branch: str,
    base: str,
    files: list[str],
    said: str,
) -> CycleResult:
    lines = said.strip().splitlines()
    what = fitness.names(files) if files else (lines[-1] if lines else "files git did not name")
    why = (
        f"rebasing {branch} onto {base} conflicted in {what}; the rebase was undone. Rebase "
        f"{branch} onto {base} in the worktree and resolve them"
    )
    if not settings.conflict_resolver or task.get("for_task"):
        return _fail(room, settings, task, "conflict", why)
    helper = _helper(room, task["id"], "resolve")
    swarm.write_new(
        room,
        _helper_task(
            task,
            helper,
            role=settings.conflict_resolver,
            objective=(
                f"Rebase branch {branch} onto {base} in this worktree (`git rebase {base}`) and resolve "
                f"the conflicts in {what}, keeping what both sides meant. Finish the rebase: leave "
                f"no rebase in progress. The change being rebased serves task {task['id']}: "
                f"{task['objective']}"
            ),
            falsifier=(
                f"the conflicts cannot be resolved keeping both sides, or {task['id']}'s validator "
                "fails after it"
            ),
        ),
    )
    return _waits(room, task, helper, f"rebasing {branch} onto {base} conflicted in {what}", "conflict")


def _megafile(room: Room, settings: Settings, task: Task, big: list[tuple[str, int, int]]) -> CycleResult:
    limit = settings.megafile_lines
    files = ", ".join(f"{n} ({b} -> {a} lines)" for n, b, a in big)
    for name, before, after in big:
        ledger.append(
            room.ledger,
            events.MEGAFILE,
            task=task["id"],
            route=task.get("route", ""),
            outcome="refused",
            detail=f"{name}: {before} -> {after} lines, over megafile_lines {limit}",
        )
    if task.get("for_task"):  # a helper (a decompose, a resolver) queues no helper: a failed round
        return _fail(room, settings, task, "refused", f"it grows {files} past megafile_lines {limit}")
    helpers = []
    for name, _, after in big:
        helper = "decompose-" + re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-.")[:54]
        state = swarm.state_of(room, helper)
        if state not in ("queue", "running", "passed"):  # one decompose task per file at a time
            if state is not None:
                helper = _helper(room, helper, "again")
            folder = name.rsplit("/", 1)[0] if "/" in name else name
            swarm.write_new(
                room,
                _helper_task(
                    task,
                    helper,
                    role="engineer",
                    owns=[folder],
                    objective=(
                        f"Split {name} ({after} lines, over the room's megafile_lines {limit}) into smaller "
                        f"files beside it, each under {limit} lines, without changing behaviour."
                    ),
                    falsifier=(
                        f"{name} cannot be split without changing behaviour: {task['id']}'s validator fails"
                    ),
                ),
            )
        helpers.append(helper)
    return _waits(room, task, ",".join(helpers), f"it grows {files} past megafile_lines {limit}", "refused")


def _helper(room: Room, task_id: str, kind: str) -> str:
    """A free task id for a helper of ``task_id``: ``<kind>-<id>``, then ``-2``, ``-3``..."""
    return swarm.free_id(room, f"{kind}-{task_id}"[:60])


def _helper_task(
    task: Task, helper: str, *, role: str, objective: str, falsifier: str, owns: list[str] | None = None
) -> Task:
    """A helper task (a resolver, a decompose task) of ``task``: what it takes from the task it
    serves: its route (so its worktree), caps, validator (the same check must pass) and kill
    condition; it runs before anything else."""
    made: Task = {
        "id": helper,
        "objective": objective,
        "falsifier": falsifier,
        "validator": task["validator"],
        "max_cost_usd": task["max_cost_usd"],
        "wall_clock_s": task["wall_clock_s"],
        "kill_condition": task["kill_condition"],
        "role": role,
        "priority": int(task.get("priority", 0)) + 100,
        "for_task": task["id"],
        "created": now_iso(),
    }
    if task.get("route"):
        made["route"] = task["route"]
    if owns is not None:
        made["owns"] = owns
    return made


def _waits(room: Room, task: Task, helpers: str, why: str, outcome: str) -> CycleResult:
    """Back to the queue without using a round, waiting for its helper task(s)."""
    tid = task["id"]
    names = helpers.split(",")
    deps = [*task.get("deps", []), *(h for h in names if h not in task.get("deps", []))]
    _line(room, task, outcome, f"{routes.WAITS}{', '.join(names)}: {why}")  # not a failed round
    swarm.move(room, tid, "passed", "queue", task={**task, "deps": deps})
    return CycleResult(
        errors.FAILED, f"not merged: {tid} ({why}); queued {', '.join(names)}, and {tid} waits for it", tid
    )


def tidy(room: Room, settings: Settings, task: Task) -> None:
    """Remove the worktree and branch of a route (or route-less task) that has nothing left
    to run: no task on its branch queued, running, passed or parked (a parked task's work is
    kept for the person who decides)."""
    mine = place.branch_of(task)
    for state in PENDING:
        for listed in index.scan(room, state, reject=False):
            s = listed.summary
            if listed.id != task["id"] and place.branch_of({**s, "id": listed.id}) == mine:
                return
    what = f"route {task['route']} has nothing left to run" if task.get("route") else "its task is merged"
    worktree.remove(room, settings, task, what)
