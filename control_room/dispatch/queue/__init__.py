"""The queue (SPEC §3, §4 step 3, §12 fan-out): what enters it, in what order, what is ready.

- ``admission``: may a task enter the queue, may it run (one function, three stages)
- ``resolve``: how a task will run (``Plan``: role, adapter, model, setup, max_turns) and the
  ``Invocation`` its adapter gets
- ``environment``: the environment of a run: the adapter's allow list, CONTROL.md ``env_allow``
- ``deps``: deps that can never get done, dependency cycles
- ``index``: listing task folders fast, the queue scan, the saved run order
- ``listing``: the run order a cycle walks, and a run loop's listing of the queue, kept a second
- ``ready``: whether a queued task may run now, and why not (cycle, status, task list)
- ``cooling``: which adapter of a task's ``fallback`` chain it runs on while some cool down
- ``pick``: the next ready task; holds logged once a day
- ``fanout``: a queued task split into slices, the task their gather step
- ``orchestrator``: the orchestrator loop and its proposals

May import: the wings ``round``, ``person``, ``schedule``, ``shared``, ``worktrees``.
"""
