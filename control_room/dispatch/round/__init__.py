"""One round's pieces (SPEC §4 steps 3 and 5-8, §5): what every wing that runs or ends a task
shares.

- ``claims``: slots, claim files, why a claim is dead, this clone's host id
- ``outcome``: how a claimed task leaves ``swarm/running/``: ``CycleResult``, a failed round,
  a dead dispatcher, back to the queue without a round
- ``prompt``: what an agent is told, in a fixed order, and how big it is; FIELD_GUIDE.md lessons
- ``report``: the report format's validator, the unsupported-claim heuristic
- ``validator``: the task's validator, run by the dispatcher itself

May import: the layers below ``dispatch``; no other wing.
"""
