"""Running tasks (SPEC §4, §5, §8).

- ``admission``: may a task enter the queue, may it run (one function for every way in)
- ``deps``: deps that can never get done, dependency cycles (for admission and readiness)
- ``index``: listing task folders fast, the queue's run order
- ``ready``: whether a queued task may run now, and why not (for the cycle, status, task list)
- ``pick``: the next ready task; holds logged once a day
- ``worktrees``: a git worktree per route; ``worktree_paths``: where one is, whether it is
  mid-rebase (files only, for ``ready``); ``integrate``: the merge queue; ``review``: lenses
- ``claims``: slots, claims, dead claims
- ``cycle``: one cycle, steps 1-4; ``runner``: steps 4-8; ``rounds``: how a round ends
- ``prompt``, ``report``, ``validator``: what the agent is told, what it said, the check
- ``orchestrator``: the orchestrator loop and its proposals
- ``fanout``: a queued task split into slices, the task their gather step
- ``sweep``: what ``cleanup`` removes, with finished routes' worktrees
- ``brake``: STOP; ``decisions``: what only a person decides; ``schedule``: cron and launchd
- ``doctor``: the room's checks and their safe repairs (``doctor_base``, ``doctor_room``,
  ``doctor_tools``)

May import: the base modules, ``store``, ``ledger``, ``room``, ``knowledge``, ``adapters``.
"""
