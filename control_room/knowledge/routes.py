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
from control_room.ledger import events, result
from control_room.ledger.line import Entry
from control_room.ledger.read import entries
from control_room.room.layout import Room
from control_room.room.values import check_id, exists_already, is_id
from control_room.store import tables
from control_room.store.files import read_optional, update
from control_room.timeutil import today

COLUMNS = ("route", "verdict", "title", "attempts", "spend_usd", "last_result", "falsifier")
COUNTED = ("attempts", "spend_usd", "last_result")  # the cells cycles keep (``record_run``)
# How dispatch/ words the ledger lines that look like a failed round but are not one (no
# ``record_run`` follows them), so ``recount`` can tell them apart:
WAITS = "waits for "  # integrate: back to the queue for helper tasks, no round used (detail starts so)
_WAITS_BEFORE = "; waits for "  # the same, as integrate worded it before (at the end): older ledgers
REVIEWED_FAILURE = "after a failed round:"  # review: the reviews of a round that had failed already
_FAILED_ROUND = ("conflict", "refused", "failed", "unfit")  # integrate's outcomes that fail a round
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


def _count(rec: dict[str, str], task_id: str, verdict: str, cost: float, day: str) -> None:
    """One run into a row's counted cells (``record_run`` and ``recount`` alike)."""
    try:
        rec["attempts"] = str(int(rec.get("attempts") or 0) + 1)
    except ValueError:
        rec["attempts"] = "1"
    try:
        rec["spend_usd"] = _money(float(rec.get("spend_usd") or 0) + cost)
    except ValueError:
        rec["spend_usd"] = _money(cost)
    rec["last_result"] = f"{verdict} {task_id} {day}"


def record_run(room: Room, route: str, task_id: str, verdict: str, cost: float) -> None:
    """After a run: attempts + 1, spend + cost, last result, and ``untested`` becomes ``alive``.

    Every call follows the ledger line it is counted from (``counted``), so ``recount`` can
    compute the same cells from the ledger alone."""

    def mutate(rec: dict[str, str], _existed: bool) -> None:
        _count(rec, task_id, verdict, cost, today())
        if (rec.get("verdict") or "untested").lower() == "untested":
            rec["verdict"] = "alive"

    _upsert(room, route, mutate)


def counted(entry: Entry) -> tuple[str, float] | None:
    """(verdict, cost) that ``record_run`` was given after this ledger line; None when no
    ``record_run`` follows it. They are: ``result`` (the runner's step 8: its outcome and cost;
    not a review's or an arbiter's run, which names the task it ``serves``),
    ``integrate`` that failed the round (``_FAILED_ROUND``, not one that waits for a helper task)
    and ``review`` ``rejected`` (not the reviews of a round that had already failed), each of a
    route; the last two count a ``fail`` that cost nothing."""
    if not entry.route:
        return None
    if entry.event == events.RESULT.name:  # a review's or an arbiter's run is no run of the route
        return None if result.read(entry.detail).serves else (entry.outcome, entry.cost)
    if entry.event == events.INTEGRATE.name and entry.outcome in _FAILED_ROUND:
        waits = entry.detail.startswith(WAITS) or _WAITS_BEFORE in entry.detail
        return None if waits else ("fail", 0.0)
    if entry.event == events.REVIEW.name and entry.outcome == "rejected":
        return None if entry.detail.startswith(REVIEWED_FAILURE) else ("fail", 0.0)
    return None


def tally(room: Room) -> dict[str, dict[str, str]]:
    """Each route's counted cells as ``record_run`` would have left them, from the ledger alone
    (a route's count starts from nothing, as ``route add`` starts it)."""
    out: dict[str, dict[str, str]] = {}
    if not room.ledger.is_file():
        return out
    for entry in entries(room.ledger):
        fed = counted(entry)
        if fed is not None:
            _count(out.setdefault(entry.route, {}), entry.task, fed[0], fed[1], entry.time[:10])
    return out


def recount(room: Room) -> list[str]:
    """Recompute ``attempts``, ``spend_usd`` and ``last_result`` of every row from the ledger
    (after a merge of two clones' ROUTES.md, or a hand edit that broke them); a row whose route
    the ledger never counted keeps its cells, and a route the ledger counts but the table lacks
    is not added back (a person removed it). Writes ROUTES.md only when a cell changed; returns
    the routes whose cells changed. A view refresh: no ledger line."""
    counts = tally(room)
    memo = room.cache / "routes"
    changed: list[str] = []

    def change(text: str) -> str:
        changed.clear()
        table = _table(room, text)
        if table is None:
            return text
        for line, cells in table.rows:
            rec = table.record(cells)
            want = counts.get(rec.get("route", ""))
            if want is None or all(rec.get(c, "") == want[c] for c in COUNTED if c in table.header):
                continue
            rec.update(want)
            text, table = tables.set_row(text, table, line, [rec.get(h, "") for h in table.header])
            changed.append(rec["route"])
        if changed:
            tables.remember(memo, text, "route", table)
        return text

    if room.routes.exists():
        update(room.routes, change)
    return changed


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
