"""One cycle (SPEC §4, §15): the top of dispatch, what ``control-room cycle`` calls.

- ``cycle``: STOP, preflight, slot, (a shared room's start), recover, pick, claim; faults
- ``preflight``: what a cycle needs before it claims
- ``runner``: one run of a claimed task: prepare, the agent, validate, write down
- ``agent``: one run of an agent CLI (the runner's and ``adapters --check``'s)
- ``hello``: ``adapters --check``, a one-turn hello through an adapter

May import: every wing but ``doctor``.
"""
