"""The ledger (SPEC §6): an append-only, hash-chained markdown table.

- ``line``: columns, escaping, formatting and parsing of one line
- ``events``: every event written, its columns and outcomes
- ``result``: the structured detail of a ``result`` line
- ``write``: ``append``, the only writer
- ``read``: streaming forward, tailing backward
- ``follow``: derived states kept current with the ledger
- ``verify``: chain checks that name every bad line
- ``stats``: aggregates, full (``stats``) or incremental (``summary``)

May import: the base modules and ``store``.
"""

from control_room.ledger.write import append, writer_name

__all__ = ["append", "writer_name"]
