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


def _money(v: float) -> str:
    return f"{v:.4f}".rstrip("0").rstrip(".") or "0"


def record_run(room: Room, route: str, task_id: str, verdict: str, cost: float) -> None:
    """After a run: attempts + 1, spend + cost, last result, and ``untested`` becomes ``alive``.

    Only that route's row is rewritten (a missing row is added); the rest of the file,
    including a person's concurrent edits, is kept.
    """
    from control_room.store.files import update
    from control_room.store.markdown import table_row, table_with
    from control_room.timeutil import today

    def change(text: str) -> str:
        lines = text.splitlines(keepends=True)
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
        table = table_with(text, "route")
        if table is None:
            lines += ["\n", "| " + " | ".join(COLUMNS) + " |\n", "|" + "---|" * len(COLUMNS) + "\n"]
            header, at = list(COLUMNS), len(lines)
            row = None
        else:
            header = [h.strip().lower() for h in table.header]
            row = next((r for r in table.rows if r.cells and r.cells[0] == route), None)
            at = (table.rows[-1].line if table.rows else table.header_line + 1)
        cells = list(row.cells) if row else [""] * len(header)
        cells += [""] * (len(header) - len(cells))
        rec = dict(zip(header, cells))
        rec["route"] = route
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
        new = table_row([rec.get(h, "") for h in header]) + "\n"
        if row is not None:
            lines[row.line - 1] = new
        else:
            lines.insert(at, new)
        return "".join(lines)

    update(room.routes, change)
