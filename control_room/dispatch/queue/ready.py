"""Whether a queued task may run now, and if not, why (SPEC §4 step 3).

One answer for every asker: the cycle (``pick``), ``status`` and ``task list`` all call
``Readiness.why``, so what they say never disagrees. In order, a task

- is **refused** (it never will run: the next cycle rejects it) when its route is killed, or a
  dep is in ``rejected/`` or in no state folder (``deps.refusal``);
- **waits** for its deps (every one in ``done/``, or merged in ``to-test/``), for a running
  task that owns an overlapping path, (with a repo) for the task of its route that runs or
  waits for the merge queue, or for a person to finish the rebase (merge, cherry-pick, revert)
  they left half done in its worktree, for a person (its route, or the task itself, in a death
  loop), for a gate's approval, for the daily budget (today's spend plus what running tasks
  may still spend), or for its adapter to cool down after its provider refused, when no
  adapter of its ``fallback`` is free (``cooling``).

Only what a listing can afford is read: one listing per state folder, taken on first need
(``swarm.Folders``), the running tasks' files (``max_parallel`` of them), the cached CONTROL.md
values, today's spend from the ledger summary and the death loops from the history (both
cached and incremental), one stat per route for a tombstone and, with a repo, a few per task
for its worktree (``place.half_done``: files, no git). No adapter is loaded: whether
an agent's CLI is installed is the cycle's own last check (``pick``).
"""

from __future__ import annotations

import contextlib
import copy
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from control_room.dispatch.queue import deps
from control_room.dispatch.worktrees import place
from control_room.knowledge import graveyard, history
from control_room.ledger import events, follow
from control_room.ledger.events import Event
from control_room.ledger.stats import spent_on, tokens_on
from control_room.room import cooldowns, swarm
from control_room.room.layout import Room
from control_room.room.settings import Settings
from control_room.room.tasks import owns_overlap
from control_room.store import cache, records
from control_room.timeutil import today

# claimed: by another machine; worktree: a person left its worktree mid-rebase (merge, ...);
# cooling: its adapter (and every fallback) cools down after its provider refused
KINDS = ("refused", "dep", "paths", "held", "gate", "budget", "claimed", "worktree", "cooling")


class Wait:
    """Why a queued task does not run now: ``kind`` (one of ``KINDS``), ``why`` for people
    (``waits for dep t0 (queue)``), and for a hold a cycle logs once a day (a death loop, a
    gate, the budget) its ledger event and detail. (A plain class: a dataclass would cost
    ``status`` about 1 ms to define.)"""

    __slots__ = ("detail", "hold", "kind", "why")

    def __init__(self, kind: str, why: str, hold: Event | None = None, detail: str = "") -> None:
        self.kind, self.why, self.hold, self.detail = kind, why, hold, detail

    def __repr__(self) -> str:
        return f"Wait({self.kind!r}, {self.why!r})"

    @property
    def refused(self) -> bool:
        return self.kind == "refused"

    @property
    def shown(self) -> str:
        """As a listing shows it (``status``, ``task list``): a refusal says so first."""
        return f"refused: {self.why}" if self.refused else self.why


class Readiness:
    """What readiness depends on, taken once (a cycle's pick, a listing), and the one question."""

    def __init__(self, room: Room, settings: Settings, *, spent: float, held: dict[str, Any]) -> None:
        self.room, self.settings, self.held = room, settings, held
        self.folders = swarm.Folders(room)
        self.busy, self.routes, reserved = _running(room, self.folders)
        self.spend = spent + reserved  # what running tasks may still spend counts as spent
        self.budget = float(settings.daily_budget_usd)
        self.dead: dict[str, str | None] = {}  # route -> why its tasks are refused (graveyard)
        self.half: dict[str, Wait | None] = {}  # branch -> its worktree left mid-rebase (...)
        self._passed: dict[str, str] | None = None  # read on first need (a room with a repo)
        self.cooling = cooldowns.active(room)  # adapters cooling down: {} (one stat) nearly always
        self.tokens_left = tokens_left(room, settings)  # None: no daily token budget

    def renewed(self) -> Readiness:
        """This readiness with what a claim or a finished run moves taken again: the folders'
        listings, the running tasks (their paths, routes and reserve), the tasks waiting for
        the merge queue, then today's spend (read after the running tasks: a run that ends
        between the two reads is counted in one of them, never in neither). What a cycle asks
        under the claim lock, of a readiness it took before the lock (``pick.ahead``); the
        routes killed, the death loops, the cooling adapters and the token budget stay as
        they were taken a moment before, as any other change that lands just after."""
        new = copy.copy(self)
        new.folders = swarm.Folders(self.room)
        new.busy, new.routes, reserved = _running(self.room, new.folders)
        new.spend = spent_on(self.room.ledger, self.room.cache / "ledger-summary", today()) + reserved
        new._passed = None
        return new

    def why(self, task_id: str, s: dict[str, Any]) -> Wait | None:
        """None if the task (its index summary ``s``) may run now, else why not. (Called for
        every queued task by ``task list``: what nearly every task lacks is tested first.)"""
        route = s.get("route") or ""
        if route:
            try:
                killed = self.dead[route]
            except KeyError:
                killed = self.dead[route] = graveyard.refusal(self.room, route)
            if killed is not None:
                return Wait("refused", killed)
        waits_for = s.get("deps")
        if waits_for:
            done = self.folders.ids("done") | self.folders.ids("to-test")  # to-test: merged
            pending = [(d, self.folders.state_of(d)) for d in waits_for if d not in done]
            for dep, state in pending:
                refused = deps.refusal(dep, state)
                if refused is not None:
                    return Wait("refused", refused)
            if pending:
                named = ", ".join(f"{d} ({state})" for d, state in pending)
                return Wait("dep", f"waits for dep{'s' if len(pending) > 1 else ''} {named}")
        if self.busy and s.get("owns"):
            for path in s["owns"]:
                for running, theirs in self.busy:
                    if owns_overlap(path, theirs):
                        return Wait("paths", f"waits for running task {running}, which owns {theirs}")
        if route and self.settings.repo:  # one worktree per route, holding one task's work
            if route in self.routes:
                other = self.routes[route]
                return Wait("paths", f"waits for running task {other}: route {route} has one worktree")
            merging = self._merging().get(route)
            serves = (s.get("for_task"), s.get("reviews"), s.get("arbitrates"))
            if merging is not None and merging not in serves:  # its reviews and arbiter run
                return Wait(
                    "paths",
                    f"waits for {merging} to be merged (`control-room integrate {merging}`): "
                    f"route {route} has one worktree",
                )
        if self.settings.repo:  # a person's rebase (merge, ...) there: never run over it
            worktree = self._worktree({**s, "id": task_id})
            if worktree is not None:
                return worktree
        if self.held:
            held = self._held(route or f"task:{task_id}")
            if held is not None:
                return held
        if s.get("gate"):
            approval = self._approved(task_id, s)
            if approval is not None:
                return approval
        if self.spend + float(s.get("max_cost_usd", 0)) > self.budget:
            return self._budget(s)
        if self.tokens_left is not None and self.tokens_left <= 0:
            used, cap = (
                self.settings.daily_budget_tokens - self.tokens_left,
                self.settings.daily_budget_tokens,
            )
            return Wait(
                "budget",
                f"waits for the daily token budget: {used:,} tokens used today of {cap:,}",
                events.BUDGET_HOLD,
                f"{used:,} tokens used today, the daily_budget_tokens of {cap:,}",
            )
        if self.cooling:
            return self._cooling(s)
        return None

    def runs_on(self, s: Mapping[str, Any]) -> tuple[str, str | None] | None:
        """The adapter and model a ready task runs on: its own, or while that cools down the
        first of its fallbacks that does not (None: its own, nothing cools)."""
        if not self.cooling:
            return None
        from control_room.dispatch.queue import cooling  # the roles: only while an adapter cools

        link, _ = cooling.free(self.cooling, cooling.chain(self.room, self.settings, s))
        return link

    def _cooling(self, s: Mapping[str, Any]) -> Wait | None:
        from control_room.dispatch.queue import cooling  # the roles: only while an adapter cools

        links = cooling.chain(self.room, self.settings, s)
        link, held = cooling.free(self.cooling, links)
        if link is not None or held is None:
            return None
        more = f"; so do its fallbacks {', '.join(n for n, _ in links[1:])}" if len(links) > 1 else ""
        return Wait("cooling", f"waits: {held.says()}{more}")

    def _worktree(self, task: Mapping[str, Any]) -> Wait | None:
        """Whether the worktree ``task`` runs in is half done; asked once per branch (a route's
        tasks share one)."""
        branch = place.branch_of(task)
        if branch not in self.half:
            path = place.path_of(self.room, task)
            half = place.half_done(path)
            why = f"waits for its worktree {path.name}: in the middle of {half}; finish or abort it there"
            self.half[branch] = None if half is None else Wait("worktree", why)
        return self.half[branch]

    def _merging(self) -> dict[str, str]:
        """Each route with a task in ``passed/`` (waiting for the merge queue) -> that task."""
        if self._passed is None:
            self._passed = {}
            for tid in sorted(self.folders.ids("passed")):
                task, _ = swarm.read_task(swarm.task_file(self.room, "passed", tid))
                if task.get("route"):
                    self._passed.setdefault(str(task["route"]), tid)
        return self._passed

    def _held(self, key: str) -> Wait | None:
        loop = self.held.get(key)
        if loop is None:
            return None
        detail = (
            f"{key} is in a death loop ({loop['n']} identical failures); "
            f"`control-room route resume {key} --because ...` to release it"
        )
        why = f"waits for `control-room route resume {key}`: a death loop ({loop['n']} identical failures)"
        return Wait("held", why, events.ROUTE_HELD, detail)

    def _approved(self, task_id: str, s: dict[str, Any]) -> Wait | None:
        # with a repo, `merge` holds the merge, not the run (dispatch/merge/integrate.py)
        merge = "merge" if self.settings.repo else ""
        missing = [g for g in s["gate"] if g != merge and not self.settings.approved(task_id, g)]
        if not missing:
            return None
        gates = ", ".join(missing)
        return Wait(
            "gate",
            f"waits for gate{'s' if len(missing) > 1 else ''} {gates}: `control-room approve {task_id}`",
            events.approval_needed(missing[0]),
            f"gate {gates} needs `control-room approve {task_id}`",
        )

    def _budget(self, s: dict[str, Any]) -> Wait:
        cost, budget = float(s.get("max_cost_usd", 0)), self.budget
        detail = (
            f"${self.spend:.2f} spent or reserved by running tasks today; this task may cost "
            f"${cost:.2f} more, over the ${budget:.2f} daily budget"
        )
        why = f"waits for the daily budget: ${self.spend:.2f} used or reserved + ${cost:.2f} > ${budget:.2f}"
        return Wait("budget", why, events.BUDGET_HOLD, detail)


def tokens_left(room: Room, settings: Settings) -> int | None:
    """What is left today of CONTROL.md ``daily_budget_tokens`` (None where it is 0: none)."""
    if not settings.daily_budget_tokens:
        return None
    used = tokens_on(room.ledger, room.cache / "ledger-tokens", today())
    return settings.daily_budget_tokens - used


def readiness(room: Room, settings: Settings) -> Readiness:
    """Readiness as of now, from the caches: today's spend (the ledger summary) and the death
    loops (the history)."""
    spent = spent_on(room.ledger, room.cache / "ledger-summary", today())
    return Readiness(room, settings, spent=spent, held=history.held(room, settings))


@contextlib.contextmanager
def folded_meanwhile(room: Room, settings: Settings) -> Iterator[None]:
    """On a first run over a big ledger (no summary of it cached: a fresh clone, a deleted
    cache, an upgrade), the ledger states ``readiness`` reads are folded by a forked child
    while the block runs, and cached; ``readiness`` after the block reads them from there.

    The block is a queue's first scan, which keeps the second core busy for only part of its
    time; the states are a read of a day of the ledger or more (``follow``), else done after
    it. The child writes nothing but those caches (atomic writes, as any two processes that
    fold at once) and ends at once on a signal. Anywhere else (a summary cached, a small
    ledger, caches held in memory, or no child forked: ``interrupt.fork``): nothing."""
    pid = _fold_in_child(room, settings) if _cold(room) else 0
    try:
        yield
    finally:
        if pid:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)


def _cold(room: Room) -> bool:
    """Whether ``readiness`` would fold a big ledger with nothing cached of it (asked by every
    cycle: one ``stat`` of the summary when it is cached)."""
    if cache.holding() or (room.cache / "ledger-summary").exists():
        return False
    try:
        return os.path.getsize(room.ledger) > follow.SMALL
    except OSError:
        return False


def _fold_in_child(room: Room, settings: Settings) -> int:
    """Fork a child that folds ``readiness``'s states, caches them and exits; its pid (0: none)."""
    from control_room import interrupt  # signal: only for a big ledger's first run (status has none)

    try:
        pid = interrupt.fork()  # a signal ends the child, never runs the cycle's handlers in it
    except OSError:
        return 0
    if pid == 0:
        try:
            readiness(room, settings)
        finally:
            os._exit(0)  # no exit handlers, no buffers flushed twice
    return pid


def _running(room: Room, folders: swarm.Folders) -> tuple[list[tuple[str, str]], dict[str, str], float]:
    """(each path a running task owns, with its id; each route a task runs on -> that task;
    what running tasks may still spend)."""
    owned: list[tuple[str, str]] = []
    routes: dict[str, str] = {}
    reserved = 0.0
    for task_id in sorted(folders.ids("running")):
        owns, route, cost = _running_task(swarm.task_file(room, "running", task_id))
        owned += [(task_id, p) for p in owns]
        if route:
            routes.setdefault(route, task_id)
        reserved += cost
    return owned, routes, reserved


def _running_task(path: Path) -> tuple[list[str], str, float]:
    """A running task's ``owns``, route and ``max_cost_usd``; read again only when its file
    changed (``records.read_object_kept``): a cycle asks twice, each of eight racing loops
    every cycle. Read as JSON, not through the whole schema (``swarm.read_task``): the file was
    checked when its cycle claimed it, and a field not of its kind (a person's edit since) reads
    as unset; eight racing loops read each other's tasks, each one new to them."""
    task = records.read_object_kept(path) or {}
    owns, route, cost = task.get("owns"), task.get("route"), task.get("max_cost_usd")
    return (
        [p for p in owns if isinstance(p, str)] if isinstance(owns, list) else [],
        route if isinstance(route, str) else "",
        float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else 0.0,
    )
