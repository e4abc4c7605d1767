"""ROUTES.md, the board: one table row per route, edited by people and kept current by cycles.

The table is parsed with markdown-it-py. The parse is memoised in ``.cache/routes.json``
beside the exact text it was parsed from, and a cycle that rewrites one row stores the result
for the text it wrote, so commands only import the markdown parser after a person edited the
file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from control_room.room.layout import Room

COLUMNS = ("route", "verdict", "title", "attempts", "spend_usd", "last_result", "falsifier")
VERDICTS = ("untested", "alive", "promising", "killed", "merged")


def _table(room: Room, text: str) -> dict[str, Any] | None:
    """{"header": [...], "header_line": n, "rows": [[line, cells], ...]} or None: no table."""
    from control_room.store import cache

    memo = cache.load(room.cache / "routes")
    if isinstance(memo, dict) and memo.get("text") == text:
        return memo["table"]  # type: ignore[no-any-return]
    from control_room.store.markdown import table_with

    t = table_with(text, "route")
    table = (
        None
        if t is None
        else {
            "header": [h.strip().lower() for h in t.header],
            "header_line": t.header_line,
            "rows": [[r.line, r.cells] for r in t.rows],
        }
    )
    _remember(room, text, table)
    return table


def _remember(room: Room, text: str, table: dict[str, Any] | None) -> None:
    from control_room.store import cache

    cache.save(room.cache / "routes", {"text": text, "table": table})


def _text(room: Room) -> str:
    from control_room.store.files import read_text

    try:
        return read_text(room.routes)
    except FileNotFoundError:
        return ""


def rows(room: Room) -> list[dict[str, Any]]:
    """The routes in ROUTES.md, each with the line it sits on."""
    table = _table(room, _text(room))
    if table is None:
        return []
    return [{**dict(zip(table["header"], cells)), "line": line} for line, cells in table["rows"]]


def verdict_counts(room: Room) -> dict[str, int]:
    """Routes per verdict."""
    return dict(Counter((r.get("verdict") or "untested").lower() for r in rows(room)))


def _money(v: float) -> str:
    return f"{v:.4f}".rstrip("0").rstrip(".") or "0"


def _upsert(room: Room, route: str, mutate: Callable[[dict[str, str], bool], None]) -> None:
    """Rewrite one route's row (or add it at the end of the table) through ``mutate(record,
    existed)``; the rest of the file, including a person's concurrent edits, is kept."""
    from control_room.store.files import update
    from control_room.store.markdown import table_row

    def change(text: str) -> str:
        lines = text.splitlines(keepends=True)
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
        table = _table(room, text)
        if table is None:
            lines += [
                "\n" if lines else "",
                "| " + " | ".join(COLUMNS) + " |\n",
                "|" + "---|" * len(COLUMNS) + "\n",
            ]
            table = {"header": list(COLUMNS), "header_line": len(lines) - 1, "rows": []}
        header = table["header"]
        found = next((r for r in table["rows"] if r[1] and r[1][0] == route), None)
        cells = list(found[1]) if found else []
        cells += [""] * (len(header) - len(cells))
        rec = dict(zip(header, cells))
        rec["route"] = route
        mutate(rec, found is not None)
        new_cells = [rec.get(h, "") for h in header]
        new_line = table_row(new_cells) + "\n"
        rows_after = [list(r) for r in table["rows"]]
        if found is not None:
            lines[found[0] - 1] = new_line
            rows_after[table["rows"].index(found)] = [found[0], new_cells]
        else:
            at = table["rows"][-1][0] if table["rows"] else table["header_line"] + 1
            lines.insert(at, new_line)
            rows_after.append([at + 1, new_cells])
        new_text = "".join(lines)
        # Cells as markdown-it would read them back: one line, pipes unescaped.
        rows_after = [[n, [" ".join(c.split()) for c in cs]] for n, cs in rows_after]
        _remember(room, new_text, {**table, "rows": rows_after})
        return new_text

    update(room.routes, change)


def record_run(room: Room, route: str, task_id: str, verdict: str, cost: float) -> None:
    """After a run: attempts + 1, spend + cost, last result, and ``untested`` becomes ``alive``."""
    from control_room.timeutil import today

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


def add(room: Room, route: str, title: str, falsifier: str = "") -> None:
    """A new route on the board, ``untested``."""
    from control_room import ledger
    from control_room.errors import InvalidError
    from control_room.room.tasks import is_id
    from control_room.views import context

    if not is_id(route):
        raise InvalidError(f"{route!r} is not a route id (ids match [a-z0-9][a-z0-9._-]{{0,63}})")
    existing = _find(room, route)
    if existing is not None:
        raise InvalidError(f"route {route} exists already (control-room/ROUTES.md:{existing['line']})")

    def mutate(rec: dict[str, str], existed: bool) -> None:
        if existed:
            raise InvalidError(f"route {route} exists already")
        rec.update(verdict="untested", title=title, attempts="0", spend_usd="0", falsifier=falsifier)

    _upsert(room, route, mutate)
    ledger.append(room.ledger, "route-add", route=route, outcome="untested", detail=title)
    context.refresh(room)


def set_verdict(room: Room, route: str, verdict: str) -> None:
    def mutate(rec: dict[str, str], _existed: bool) -> None:
        rec["verdict"] = verdict

    _upsert(room, route, mutate)


def _find(room: Room, route: str) -> dict[str, Any] | None:
    return next((r for r in rows(room) if r.get("route") == route), None)


def get(room: Room, route: str) -> dict[str, Any]:
    from control_room.errors import NotFoundError

    found = _find(room, route)
    if found is None:
        raise NotFoundError(f"no route {route} in control-room/ROUTES.md")
    return found


def problems(room: Room) -> list[str]:
    """What a hand edit broke in ROUTES.md, each naming its line; cycles go on with the rest."""
    from control_room.room.tasks import is_id
    from control_room.store.markdown import row_cells

    table = _table(room, text := _text(room))
    if table is None:
        return [
            f"control-room/ROUTES.md: no table whose first column is `route` (expected | {' | '.join(COLUMNS)} |)"
        ]
    raw = text.splitlines()
    out, seen = [], {}
    width = len(table["header"])
    for line, cells in table["rows"]:
        where = f"control-room/ROUTES.md:{line}"
        physical = raw[line - 1] if line - 1 < len(raw) else ""
        got = row_cells(physical)
        if len(got) != width:
            out.append(f"{where}: {len(got)} cells, the header has {width}")
        route = cells[0] if cells else ""
        if not is_id(route):
            out.append(f"{where}: {route!r} is not a route id")
        elif route in seen:
            out.append(f"{where}: route {route} appears twice (first on line {seen[route]})")
        else:
            seen[route] = line
        verdict = dict(zip(table["header"], cells)).get("verdict", "").lower()
        if verdict and verdict not in VERDICTS:
            out.append(f"{where}: verdict {verdict!r} is not one of {', '.join(VERDICTS)}")
    return out
