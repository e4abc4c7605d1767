"""ROUTES.md, the board: one table row per route, edited by people and kept current by cycles.

The table is a ``store.tables`` table keyed by ``route``; its parse is memoised in
``.cache/routes`` against the exact text, and a cycle that rewrites one row stores the table
it wrote, so commands only import the markdown parser after a person edited the file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from control_room import ledger
from control_room.errors import InvalidError, NotFoundError
from control_room.ledger import events
from control_room.room.layout import Room
from control_room.room.values import check_id, exists_already, is_id
from control_room.store import tables
from control_room.store.files import read_optional, update
from control_room.timeutil import today

COLUMNS = ("route", "verdict", "title", "attempts", "spend_usd", "last_result", "falsifier")
VERDICTS = ("untested", "alive", "promising", "killed", "merged")
WHERE = "control-room/ROUTES.md"


def _table(room: Room, text: str) -> tables.Table | None:
    return tables.find(text, "route", room.cache / "routes")


def rows(room: Room) -> list[dict[str, Any]]:
    """The routes in ROUTES.md, each with the line it sits on."""
    table = _table(room, read_optional(room.routes) or "")
    if table is None:
        return []
    return [{**table.record(cells), "line": line} for line, cells in table.rows]


def find(room: Room, route: str) -> dict[str, Any] | None:
    """The row of ``route``, or None."""
    return next((r for r in rows(room) if r.get("route") == route), None)


def get(room: Room, route: str) -> dict[str, Any]:
    found = find(room, route)
    if found is None:
        raise NotFoundError(f"no route {route} in {WHERE}")
    return found


def verdict_counts(room: Room) -> dict[str, int]:
    """Routes per verdict."""
    return dict(Counter((r.get("verdict") or "untested").lower() for r in rows(room)))


def _money(v: float) -> str:
    return f"{v:.4f}".rstrip("0").rstrip(".") or "0"


def _upsert(room: Room, route: str, mutate: Callable[[dict[str, str], bool], None]) -> None:
    """Rewrite one route's row (or add it at the end of the table) through ``mutate(record,
    existed)``; the rest of the file, including a person's concurrent edits, is kept."""
    memo = room.cache / "routes"

    def change(text: str) -> str:
        table = _table(room, text)
        found = table.find(route)[:1] if table is not None else []
        rec = table.record(found[0][1]) if table is not None and found else dict.fromkeys(COLUMNS, "")
        rec["route"] = route
        mutate(rec, bool(found))
        if table is not None and found:
            new_text, new_table = tables.set_row(
                text, table, found[0][0], [rec.get(h, "") for h in table.header]
            )
        else:
            header = table.header if table is not None else list(COLUMNS)
            cells: list[object] = [rec.get(h, "") for h in header]
            new_text, new_table = tables.add_row(text, table, cells, columns=COLUMNS)
        tables.remember(memo, new_text, "route", new_table)
        return new_text

    update(room.routes, change)


def record_run(room: Room, route: str, task_id: str, verdict: str, cost: float) -> None:
    """After a run: attempts + 1, spend + cost, last result, and ``untested`` becomes ``alive``."""

    def mutate(rec: dict[str, str], _existed: bool) -> None:
        try:
            rec["attempts"] = str(int(rec.get("attempts") or 0) + 1)
        except ValueError:
            rec["attempts"] = "1"
        try:
            rec["spend_usd"] = _money(float(rec.get("spend_usd") or 0) + cost)
        except ValueError:
            rec["spend_usd"] = _money(cost)
        rec["last_result"] = f"{verdict} {task_id} {today()}"
        if (rec.get("verdict") or "untested").lower() == "untested":
            rec["verdict"] = "alive"

    _upsert(room, route, mutate)


def add(room: Room, route: str, title: str, falsifier: str = "", *, note: str = "") -> None:
    """A new route on the board, ``untested``; ``note`` (why it was added) goes into the ledger
    line after the title."""
    check_id(route, "route")
    existing = find(room, route)
    if existing is not None:
        raise InvalidError(exists_already("route", route, f"{WHERE}:{existing['line']}"))

    def mutate(rec: dict[str, str], existed: bool) -> None:
        if existed:  # added by someone else since ``find`` above
            raise InvalidError(exists_already("route", route, WHERE))
        rec.update(verdict="untested", title=title, attempts="0", spend_usd="0", falsifier=falsifier)

    _upsert(room, route, mutate)
    ledger.append(room.ledger, events.ROUTE_ADD, route=route, detail=title + (f" ({note})" if note else ""))


def set_verdict(room: Room, route: str, verdict: str) -> None:
    def mutate(rec: dict[str, str], _existed: bool) -> None:
        rec["verdict"] = verdict

    _upsert(room, route, mutate)


def problems(room: Room) -> list[str]:
    """What a hand edit broke in ROUTES.md, each naming its line; cycles go on with the rest."""
    table = _table(room, read_optional(room.routes) or "")
    if table is None:
        return [f"{WHERE}: no table whose first column is `route` (expected | {' | '.join(COLUMNS)} |)"]
    out: list[str] = []
    seen: dict[str, int] = {}
    width = len(table.header)
    for line, cells in table.rows:
        where = f"{WHERE}:{line}"
        if len(cells) != width:
            out.append(f"{where}: {len(cells)} cells, the header has {width}")
        route = cells[0] if cells else ""
        if not is_id(route):
            out.append(f"{where}: {route!r} is not a route id")
        elif route in seen:
            out.append(f"{where}: route {route} appears twice (first on line {seen[route]})")
        else:
            seen[route] = line
        verdict = table.record(cells).get("verdict", "").lower()
        if verdict and verdict not in VERDICTS:
            out.append(f"{where}: verdict {verdict!r} is not one of {', '.join(VERDICTS)}")
    return out
