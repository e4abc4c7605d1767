"""Running tasks (SPEC §3-§5, §8, §11-§15), in wings: one subpackage per concept.

The wings, lowest first; a wing may import the wings before it in this list, never one after
(``tests/house/imports.py`` ``DISPATCH_WINGS``, checked by ``tests/house/test_layers.py``):

- ``round/``: one round's pieces: claims and slots, how a round ends, the prompt, the report,
  the validator
- ``person/``: what only a person decides (approve, Done, retry, park, cancel), STOP, and what a
  person is told (notifications)
- ``schedule/``: cron, launchd and systemd entries, and installing them
- ``shared/``: many machines: sync through the room's remote, claim refs, claiming, lost claims,
  the target repository's remote
- ``worktrees/``: a git worktree per route, and where one is
- ``queue/``: admission, deps, the task index, readiness, the pick, fan-out, the orchestrator
- ``plan/``: plan import and export
- ``review/``: lenses, review tasks, verdicts and arbitration
- ``merge/``: the merge queue, and cleanup's sweep of finished worktrees
- ``run/``: one cycle: preflight, recover, pick and claim, the agent's run, where it goes
- ``doctor/``: the room's checks and their safe repairs

Nothing lives at this level but this map.

May import: the base modules, ``store``, ``ledger``, ``room``, ``knowledge``, ``adapters``.
"""
