"""The ledger (SPEC §6): an append-only, hash-chained markdown table.

- ``line``: columns, escaping, formatting and parsing of one line
- ``events``: every event written, its columns and outcomes
- ``result``: the structured detail of a ``result`` line
- ``write``: ``append``, the only writer; ``restore_header`` for ``init``
- ``read``: streaming forward, tailing backward
- ``follow``: derived states kept current with the ledger
- ``verify``: chain checks that name every bad line
- ``stats``: aggregates, full (``stats``) or incremental (``summary``)

May import: the base modules and ``store``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from control_room.ledger.write import append, writer_name

__all__ = ["append", "writer_name"]


def __getattr__(name: str) -> Any:
    # The writer is loaded on first use, so readers (`status`) do not pay for it (~3 ms).
    if name in __all__:
        from control_room.ledger import write  # see above

        found = getattr(write, name)
        globals()[name] = found  # later uses find it at once, without this function
        return found
    raise AttributeError(name)
