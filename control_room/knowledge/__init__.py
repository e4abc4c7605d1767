"""What the room has learned (SPEC §7).

- ``routes``: ROUTES.md, the board
- ``graveyard``: tombstones of killed routes
- ``history``: the ledger folded per route: counts, streaks, death loops, unsupported claims
- ``digest``: DIGEST.md and a route's history in prompts, rendered from ``history``
- ``scorecard``: the ledger folded per adapter, model and role (``control-room scorecard``)
- ``findings``: death loops and unsupported claims, and releasing a held route
- ``intelligence``: levers and branches

May import: the base modules, ``store``, ``ledger``, ``room``.
"""
