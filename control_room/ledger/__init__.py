"""The ledger (SPEC §6): an append-only, hash-chained markdown table.

- ``line``: columns, escaping, formatting and parsing of one line
- ``write``: ``append``, the only writer
- ``read``: streaming forward, tailing backward
- ``verify``: chain checks that name the first bad line
- ``stats``: aggregates, full (``stats``) or incremental (``summary``)
"""

from control_room.ledger.write import append, writer_name
from control_room.ledger.line import PREAMBLE, Entry

__all__ = ["PREAMBLE", "Entry", "append", "writer_name"]
