"""Every event control-room writes to the ledger: its name, the columns it fills, its outcomes
and what it means. Writers pass one of these to ``ledger.append``; readers compare names with
them; docs/ledger.md's table of events is generated from ``EVENTS`` (a test checks it).

A new event is one constant here (``EVENTS`` collects them; see docs/architecture.md).
"""

from __future__ import annotations


class Event:
    """One kind of ledger line. (A plain class: ``status`` imports 34 of them.)"""

    __slots__ = ("columns", "name", "outcomes", "when")

    def __init__(self, name: str, outcomes: tuple[str, ...], columns: tuple[str, ...], when: str) -> None:
        self.name = name
        self.outcomes = outcomes  # what the outcome cell may say; the first is the default; () any
        self.columns = columns  # which of task, route, adapter, cost_usd, detail it fills
        self.when = when  # one line: when it is written

    def __repr__(self) -> str:
        return f"Event({self.name!r})"

    def named(self, name: str) -> Event:
        """This event under another name (``gpu-approval-needed`` from ``<gate>-approval-needed``)."""
        return Event(name, self.outcomes, self.columns, self.when)

    def check(self, outcome: str | None, filled: dict[str, object]) -> str:
        """The outcome to write: ``outcome``, or the default. A wrong outcome, or a column this
        event does not fill, is a bug in the writer."""
        extra = [c for c, v in filled.items() if v and c not in self.columns]
        if extra:
            raise ValueError(f"ledger event {self.name} does not fill {', '.join(extra)}")
        if outcome is None:
            return self.outcomes[0] if self.outcomes else ""
        if self.outcomes and outcome not in self.outcomes:
            raise ValueError(f"ledger event {self.name}: outcome {outcome!r} not in {self.outcomes}")
        return outcome


def _e(name: str, outcomes: tuple[str, ...], columns: str, when: str) -> Event:
    return Event(name, outcomes, tuple(columns.split()), when)


# The room
INIT = _e("init", ("ok",), "detail", "`init` created something")
STOP = _e("stop", ("stopped",), "detail", "`control-room stop` created STOP (`detail`: the reason)")
RESUME = _e("resume", ("resumed",), "", "`control-room resume` removed STOP")
WARNING = _e("warning", (), "task detail", "FIELD_GUIDE.md is over its line cap")
FIELD_GUIDE_ADD = _e(
    "field-guide-add",
    ("added",),
    "detail",
    "a lesson was appended to intelligence/FIELD_GUIDE.md (the MCP tool `field_guide_add`; `detail`: "
    "the lesson) ([mcp.md](mcp.md))",
)
HEADER_RESTORED = _e(
    "header-restored",
    ("restored",),
    "detail",
    "`init` put back the table header LEDGER.md had lost, keeping every line (`detail`: how many)",
)
DOCTOR_FIX = _e(
    "doctor-fix",
    ("fixed", "failed"),
    "detail",
    "`doctor --fix` repaired something safe: a missing folder, the ledger's header, a dead claim, a "
    "dead worktree (`detail`: the check and what was done) ([doctor.md](doctor.md))",
)

# Tasks
TASK_ADD = _e(
    "task-add",
    ("queued",),
    "task route adapter detail",
    "`task add`, an orchestrator proposal (`detail` starts `proposed by <task>:`), the orchestrator task",
)
PROVIDER_FAULT = _e(
    "provider-fault",
    ("requeued",),
    "task route adapter detail",
    "the provider refused a run (rate limit, quota, overloaded, auth): the task is back in the queue, no "
    "round used, and the adapter cools down (`detail`: the kind, until when, the CLI's words) "
    "([faults.md](faults.md))",
)
KILL_PROPOSED = _e(
    "kill-proposed",
    ("proposed",),
    "task route detail",
    "failed rounds in a row made no progress (one fingerprint: the same change, failing the same way, "
    "CONTROL.md `max_identical_failures`): the task is parked and a kill of its route proposed to a "
    "person (`detail`: the cause and a reopen condition) ([findings.md](findings.md))",
)
REJECT = _e(
    "reject",
    ("rejected",),
    "task detail",
    "a queued file is not a valid task, reuses an id, is on a killed route or cannot run here; "
    "a running file found invalid at recovery",
)
CLAIM = _e(
    "claim", ("running",), "task route adapter detail", "a cycle claims a task (`round N, slot S, pid P`)"
)
RESULT = _e(
    "result",
    ("pass", "fail"),
    "task route adapter cost_usd detail",
    "a run ended; `detail` is a JSON object: round, exit, seconds, report, validator, unsupported, "
    "model, role, serves (a review's or an arbiter's: the task it judges), input_tokens, output_tokens, "
    "decision, failed ([digest.md](digest.md#what-it-reads-the-result-line))",
)
COST_OVERRUN = _e(
    "cost-overrun", ("over",), "task route adapter detail", "a run cost more than its task's `max_cost_usd`"
)
UNSUPPORTED_CLAIM = _e(
    "unsupported-claim",
    ("unsupported",),
    "task route adapter detail",
    'written before 0.2 (now `"unsupported": true` on the `result` line); still read',
)
PARK = _e("park", ("parked",), "task route detail", "`max_rounds` failed rounds, or `task park`")
RECOVER = _e(
    "recover",
    ("recovered",),
    "task route detail",
    "a dead claim was recovered: the cycle running it died; the task is back in the queue without "
    "using a round (`dispatcher death N of M`), or parked after `max_dispatcher_deaths`; in a shared "
    "room, another machine's claim whose lease ran out, taken over here "
    "([many-machines.md](many-machines.md))",
)
REQUEUE = _e(
    "requeue",
    ("queued",),
    "task route detail",
    "a fault of the room after the claim (disk full, a folder turned read-only) put the task back, "
    "no round used",
)
INTERRUPTED = _e(
    "interrupted",
    ("requeued",),
    "task route adapter detail",
    "Ctrl-C, SIGTERM or SIGHUP while a task ran: its process group was ended and the task is back in "
    "the queue, no round used",
)
STOPPED = _e(
    "stopped",
    ("requeued",),
    "task route adapter detail",
    "STOP appeared while a task ran; the task is back in the queue",
)
CLAIM_LOST = _e(
    "claim-lost",
    ("discarded",),
    "task detail",
    "a shared room: another machine took over a task this machine ran (its lease, wall clock plus "
    "`grace_s`, ran out first); this machine's result is set aside ([many-machines.md](many-machines.md))",
)
SYNC_CONFLICT = _e(
    "sync-conflict",
    ("kept-remote",),
    "detail",
    "a shared room: a sync found a file both machines changed that no merge driver merges; the remote's "
    "version was kept, ours stays in git history ([many-machines.md](many-machines.md))",
)
ADAPTER_MISSING = _e(
    "adapter-missing",
    ("held",),
    "task route adapter detail",
    "a ready task's CLI is not on PATH (once a day per task), or vanished at run time",
)
WORKTREE_ADD = _e(
    "worktree-add",
    ("ok",),
    "task route detail",
    "a route's worktree of the target repository was made ([worktrees.md](worktrees.md))",
)
WORKTREE_REBUILT = _e(
    "worktree-rebuilt",
    ("ok",),
    "task route detail",
    "a route's worktree was made again: its folder vanished or its branch was deleted",
)
WORKTREE_REMOVE = _e(
    "worktree-remove",
    ("ok",),
    "task route detail",
    "a finished route's worktree and its merged branch were removed ([integration.md](integration.md))",
)
INTEGRATE = _e(
    "integrate",
    ("merged", "conflict", "refused", "failed", "unfit"),
    "task route adapter detail",
    "the merge queue took a passed task: `merged` (the base fast-forwarded), `conflict` (the rebase "
    "conflicted: a failed round, or it waits for a resolver task), `refused` (a diff outside `owns`: a "
    "failed round; a megafile: it waits for a decompose task), `failed` (the validator failed after "
    "the rebase: a failed round), `unfit` (its worktree was mid-rebase or held uncommitted changes: a "
    "failed round); `adapter`: the task's last run's ([integration.md](integration.md))",
)
MEGAFILE = _e(
    "megafile",
    ("refused",),
    "task route detail",
    "integration refused a change that takes a file past `megafile_lines` or grows one past it "
    "([integration.md](integration.md#megafiles))",
)
REVIEW_QUEUED = _e(
    "review-queued",
    ("queued",),
    "task route detail",
    "a passed task's review tasks were queued, one per lens (`detail`: the lenses and task ids) "
    "([review.md](review.md))",
)
REVIEW = _e(
    "review",
    ("accept", "reject", "accepted", "rejected"),
    "task route adapter detail",
    "one lens's verdict on a task (`accept`, `reject`; `adapter`: the reviewer's), or the verdict of "
    "all its lenses (`accepted`: it may integrate; `rejected`: a failed round) ([review.md](review.md))",
)
ARBITRATION = _e(
    "arbitration",
    ("queued", "A", "B"),
    "task route detail",
    "reviews disagreed: an arbiter task was queued with the positions anonymised, or it decided "
    "by evidence (`A`, `B`: which side, and what that side said) ([review.md](review.md#arbitration))",
)
ESCALATED = _e(
    "escalated",
    ("parked",),
    "task route detail",
    "the arbiter said `escalate`, or a second arbitration was needed: the task is parked for a "
    "person with both positions side by side ([review.md](review.md#arbitration))",
)
NOTIFY = _e(
    "notify",
    ("sent", "failed"),
    "task detail",
    "CONTROL.md `notify:` was run for an event a person must hear of (`detail`: its id and kind, "
    "and why it failed) ([notifications.md](notifications.md))",
)
ADAPTER_CHECK = _e(
    "adapter-check",
    ("ok", "fail"),
    "adapter cost_usd detail",
    "`adapters --check`: a one-turn hello through an adapter; what it answered or what is wrong, and "
    "what it cost ([adapters.md](adapters.md))",
)
BUDGET_HOLD = _e(
    "budget-hold",
    ("held",),
    "task route detail",
    "the daily budget holds a task (once a day per task; `BUDGET_HOLD` before 0.3.0)",
)
APPROVAL_NEEDED = _e(
    "<gate>-approval-needed",
    ("held",),
    "task route detail",
    "a task waits for `control-room approve` of its gate, e.g. `gpu-approval-needed` (once a day per "
    "task; `GPU_APPROVAL_NEEDED` before 0.3.0)",
)
ROUTE_HELD = _e(
    "route-held",
    ("held",),
    "task route detail",
    "a death loop on its route holds a task (once a day per task; `ROUTE_HELD` before 0.3.0)",
)
APPROVE = _e("approve", ("approved",), "task detail", "`control-room approve`, one line per gate")
DONE = _e(
    "done",
    ("done",),
    "task route detail",
    "`control-room done`: a person marked a passed (or merged) task Done",
)
RETRY = _e("retry", ("queued",), "task route detail", "`task retry`")
CANCEL = _e("cancel", ("cancelled",), "task route detail", "`task cancel`")
PIN = _e(
    "pin", ("pinned",), "task", "`task pin`: `cleanup` keeps the task's results ([cleanup.md](cleanup.md))"
)
UNPIN = _e("unpin", ("unpinned",), "task", "`task unpin`")
CLEANUP = _e(
    "cleanup",
    ("removed",),
    "task detail",
    "`cleanup` removed a finished task's results folder, `run-K/` archive or outbox snapshot, or a "
    "finished route's worktree (`detail`: the path, its size, why: age or low disk; for a worktree, "
    "its route and whether its branch went) ([cleanup.md](cleanup.md))",
)

FANOUT = _e(
    "fanout",
    ("split",),
    "task route detail",
    "`task fanout`: a queued task split into slices, child tasks each with its own brief; the task "
    "waits for them and is their gather step (`detail`: the slices) ([fanout.md](fanout.md))",
)

PLAN_IMPORT = _e(
    "plan-import",
    ("imported", "stopped"),
    "detail",
    "`plan import`: a markdown plan's routes and tasks written (`detail`: the plan's file name, how many "
    "tasks were added, updated, unchanged, and those kept as they are, with why); `stopped`: a task "
    "changed during the import, and `detail` says what was written before ([plans.md](plans.md))",
)

# Routes and knowledge
ROUTE_ADD = _e(
    "route-add",
    ("untested",),
    "route detail",
    "`route add`, `task add --new-route` and the first orchestrator task (`detail` ends `(for task "
    "<id>)`) ([routes.md](routes.md))",
)
ROUTE_KILL = _e("route-kill", ("killed",), "route detail", "`route kill` ([graveyard.md](graveyard.md))")
ROUTE_REOPEN = _e(
    "route-reopen", ("reopened",), "route detail", "`route reopen` ([graveyard.md](graveyard.md))"
)
ROUTE_RESUME = _e(
    "route-resume", ("released",), "task route detail", "`route resume`: a death-loop hold released"
)
DEATH_LOOP = _e(
    "death-loop",
    ("held",),
    "task route detail",
    "a route (or `task:<id>`) reached `death_loop_n` identical failures; once per loop "
    "([findings.md](findings.md))",
)
_STATES = ("untested", "pending", "killed")
LEVER_ADD = _e("lever-add", _STATES, "detail", "`lever add` ([intelligence.md](intelligence.md))")
LEVER_SET = _e("lever-set", _STATES, "detail", "`lever set` ([intelligence.md](intelligence.md))")
BRANCH_ADD = _e("branch-add", _STATES, "detail", "`branch add` ([intelligence.md](intelligence.md))")
BRANCH_SET = _e("branch-set", _STATES, "detail", "`branch set` ([intelligence.md](intelligence.md))")

# The orchestrator
PROPOSAL_REFUSED = _e(
    "proposal-refused",
    ("refused",),
    "task detail",
    "an orchestrator proposal failed admission or `max_new_tasks` ([orchestrator.md](orchestrator.md))",
)
ORCHESTRATE_REFUSED = _e(
    "orchestrate-refused",
    ("refused",),
    "task route detail",
    "`on_empty_queue: orchestrate` could not queue the orchestrator task",
)
ORCHESTRATE_HELD = _e(
    "orchestrate-held",
    ("held",),
    "task route detail",
    "an orchestrator task is parked, so no new one is queued (once a day)",
)

# Schedules
SCHEDULE_INSTALL = _e(
    "schedule-install",
    ("installed",),
    "detail",
    "`schedule --install`: a cron block, launchd plist or systemd timer now fires cycles of the room "
    "(`detail`: kind, where, every, cycles per firing) ([scheduling.md](scheduling.md))",
)
SCHEDULE_UNINSTALL = _e(
    "schedule-uninstall",
    ("removed",),
    "detail",
    "`schedule --uninstall`: what `--install` put there was removed (`detail`: kind, where)",
)

# Every event above, in the order written here (docs/ledger.md's table follows it): a new
# event is one constant above this line.
EVENTS: tuple[Event, ...] = tuple(v for v in list(globals().values()) if isinstance(v, Event))


def approval_needed(gate: str) -> Event:
    """The hold event of one gate: ``gpu-approval-needed`` for ``gpu``."""
    return APPROVAL_NEEDED.named(f"{gate.lower()}-approval-needed")


# Names written before 0.3.0, when three events were upper snake case: ledgers keep them, and a
# reader that compares names reads them through ``canonical``. This is the one place that knows.
RENAMED = {"BUDGET_HOLD": BUDGET_HOLD.name, "ROUTE_HELD": ROUTE_HELD.name}
_OLD_APPROVAL = "_APPROVAL_NEEDED"  # GPU_APPROVAL_NEEDED -> gpu-approval-needed


def canonical(name: str) -> str:
    """An event name as control-room writes it today: an old name (``BUDGET_HOLD``,
    ``ROUTE_HELD``, ``<GATE>_APPROVAL_NEEDED``) becomes its lower-kebab name; others are kept."""
    if name in RENAMED:
        return RENAMED[name]
    if name.endswith(_OLD_APPROVAL) and name[: -len(_OLD_APPROVAL)]:
        return f"{name[: -len(_OLD_APPROVAL)].lower()}-approval-needed"
    return name


def intelligence(kind: str, verb: str) -> Event:
    """``lever-add``, ``lever-set``, ``branch-add`` or ``branch-set``."""
    table = {("lever", "add"): LEVER_ADD, ("lever", "set"): LEVER_SET}
    table |= {("branch", "add"): BRANCH_ADD, ("branch", "set"): BRANCH_SET}
    return table[kind, verb]
