"""The ledger (SPEC §6): an append-only, hash-chained markdown table.

- ``line``: columns, escaping, formatting and parsing of one line
- ``write``: ``append``, the only writer
- ``read``: streaming forward, tailing backward
- ``verify``: chain checks that name the first bad line
- ``stats``: aggregates, full (``stats``) or incremental (``summary``)
"""

from __future__ import annotations

from typing import Any

__all__ = ["append", "writer_name"]


def __getattr__(name: str) -> Any:
    # Lazy, so that readers (status) do not pay for the writer's imports.
    if name in __all__:
        from control_room.ledger import write

        return getattr(write, name)
    raise AttributeError(name)
