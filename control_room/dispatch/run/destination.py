"""Where a task that passed goes next (SPEC §4 step 8, §11, §12): one decision, one table.

| the run that passed | state | then |
|---|---|---|
| a review or an arbiter (it serves another task) | ``done/`` | its verdict settles the task it serves |
| a task some lenses review | ``passed/`` | one review task per lens; it waits for them |
| with ``repo:``, work on its branch | ``passed/`` | the merge queue (``integrate``) |
| with ``repo:``, no change against the base | ``done/`` | its worktree is tidied away |
| anything else | ``done/`` | nothing |

Passing is not Done: ``done/`` holds what passed, and a person marks it Done. A role that
``writes_tasks`` (the orchestrator) also has its proposals read, wherever it goes. Failed rounds
go back to the queue or to ``parked/`` (``round/outcome.py``), not through here.
"""

from __future__ import annotations

VERDICT = "verdict"  # a review's or an arbiter's verdict settles the task it serves
REVIEWS = "reviews"  # review tasks are queued, one per lens
MERGE = "merge"  # it waits for the merge queue
NOTHING_TO_MERGE = "nothing to merge"  # with a repo, but its branch holds no change
NOTHING = "nothing"


class Destination:
    """Where a passing task goes. (A plain class: a dataclass costs every cycle ~3 M
    instructions to build.)"""

    __slots__ = ("proposals", "state", "then")

    def __init__(self, state: str, then: str, proposals: bool = False) -> None:
        self.state = state  # the swarm folder it moves to
        self.then = then  # what follows: one of the names above
        self.proposals = proposals  # read its answer's proposed tasks (a role that writes_tasks)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Destination) and (self.state, self.then, self.proposals) == (
            other.state,
            other.then,
            other.proposals,
        )

    def __hash__(self) -> int:
        return hash((self.state, self.then, self.proposals))

    def __repr__(self) -> str:
        return f"Destination({self.state!r}, {self.then!r}, proposals={self.proposals})"

    @property
    def merge(self) -> bool:
        """Whether it is ready for the merge queue now (``auto_integrate`` takes it)."""
        return self.then == MERGE


def decide(*, serves: bool, lenses: bool, repo: bool, ahead: bool, writes_tasks: bool = False) -> Destination:
    """Where a passing task goes: ``serves``, it is a review or an arbiter; ``lenses``, lenses
    review it; ``repo``, the room has a target repository; ``ahead``, its branch holds work the
    base lacks; ``writes_tasks``, its role proposes tasks."""
    if serves:
        then, state = VERDICT, "done"
    elif lenses:
        then, state = REVIEWS, "passed"
    elif repo and ahead:
        then, state = MERGE, "passed"
    elif repo:
        then, state = NOTHING_TO_MERGE, "done"
    else:
        then, state = NOTHING, "done"
    return Destination(state, then, writes_tasks)
