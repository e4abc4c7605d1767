"""The room: what a room is on disk and the models its files hold (SPEC §2, §3, §8).

- ``layout``: where a room's files are, finding a room, the task state folders
- ``scaffold``: ``init``, what a new room holds
- ``settings``: CONTROL.md, parsed once into a typed ``Settings``
- ``tasks``: the task schema and its validation
- ``shell``: commands run without a shell; a command string that needs one is refused
- ``swarm``: task files and their moves between state folders
- ``roles``: ``agents/<role>.md``, what a task's role says
- ``results``: a task's results folder and its archived runs
- ``values``: id and number checks shared by tasks, settings and knowledge; the one wording
  for a taken id

May import: the base modules (``errors``, ``timeutil``, ``proc``), ``store``, ``ledger``.
"""
