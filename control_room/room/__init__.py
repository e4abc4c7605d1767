"""The room: what a room is on disk and the models its files hold (SPEC §2, §3, §8).

- ``layout``: where a room's files are, finding a room, the task state folders
- ``scaffold``: ``init``, what a new room holds
- ``settings``: CONTROL.md, parsed once into a typed ``Settings``
- ``tasks``: the task schema and its validation
- ``swarm``: task files and their moves between state folders
- ``values``: id and number checks shared by tasks and settings

May import: the base modules (``errors``, ``timeutil``, ``proc``), ``store``, ``ledger``.
"""
