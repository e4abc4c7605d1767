"""What the room has learned (SPEC §7).

- ``routes``: ROUTES.md, the board, and ``recount`` of its cycle cells from the ledger
- ``routes_merge``: git's merge driver for ROUTES.md, row by row
- ``graveyard``: tombstones of killed routes
- ``history``: the ledger folded per route: counts, streaks, death loops, unsupported claims
- ``digest``: DIGEST.md and a route's history in prompts, rendered from ``history``
- ``scorecard``: the ledger folded per adapter, model and role (``control-room scorecard``)
- ``findings``: death loops and unsupported claims, and releasing a held route
- ``intelligence``: levers and branches

May import: the base modules, ``store``, ``ledger``, ``room``.
"""
