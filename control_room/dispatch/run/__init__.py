"""One cycle (SPEC §4, §15): the top of dispatch, what ``control-room cycle`` calls.

- ``cycle``: STOP, preflight, slot, (a shared room's start), recover, pick, claim; faults
- ``preflight``: what a cycle needs before it claims
- ``runner``: one run of a claimed task: its work dir, the prompt, the agent, the validator
- ``finish``: the run written down: what failed, the commit of its work, meta.json, the ledger
  lines, the move
- ``unfinished``: a run written down whose cycle died before the move: finished, not run again
- ``destination``: where a task that passed goes (one table)
- ``provider``: a run the provider refused: back in the queue without a round, the adapter cooling
- ``spend``: the live spend cap: a run ended once its streamed usage passes its ``max_cost_usd``
- ``agent``: one run of an agent CLI (the runner's and ``adapters --check``'s)
- ``hello``: ``adapters --check``, a one-turn hello through an adapter

May import: every wing but ``doctor``.
"""
