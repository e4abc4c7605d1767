"""How a count reads in output: ``1 run``, ``2 runs``, ``1,000 lines``."""

from __future__ import annotations


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` (with thousands separators) and ``noun``, plural unless ``n`` is one."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"
