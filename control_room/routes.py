"""ROUTES.md, the board: one table row per route, edited by people and kept current by cycles."""

from __future__ import annotations

from collections import Counter
from typing import Any

from control_room.room import Room

COLUMNS = ("route", "verdict", "title", "attempts", "spend_usd", "last_result", "falsifier")
VERDICTS = ("untested", "alive", "promising", "killed", "merged")


def rows(room: Room) -> list[dict[str, Any]]:
    """The routes in ROUTES.md, each with the line it sits on."""
    from control_room.store.files import read_text
    from control_room.store.markdown import table_with

    try:
        text = read_text(room.routes)
    except FileNotFoundError:
        return []
    table = table_with(text, "route")
    if table is None:
        return []
    keys = [h.strip().lower() for h in table.header]
    return [{**dict(zip(keys, r.cells)), "line": r.line} for r in table.rows]


def verdict_counts(room: Room) -> dict[str, int]:
    """Routes per verdict; cached against ROUTES.md so `status` need not parse markdown."""
    from control_room.store import cache

    def compute() -> dict[str, int]:
        return dict(Counter((r.get("verdict") or "untested").lower() for r in rows(room)))

    return cache.derived(room.cache / "routes.json", room.routes, compute)
