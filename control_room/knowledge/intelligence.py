"""Levers and branches (SPEC §7): ``intelligence/levers.md`` and ``intelligence/branches.md``.

Each page holds one markdown table ``| id | state | title | because |``, one row per lever or
branch, in one of three states: ``untested``, ``pending`` or ``killed``. Killed is first class:
the row stays, and its ``because`` says why.

People and agents edit these pages by hand, so:

- a write rewrites one row line (``set``) or inserts one (``add``) and keeps every other byte of
  the file; it goes through ``store.files.update``, which re-applies the change when someone
  saved the file meanwhile, so a concurrent hand edit is never lost;
- a write looks only at the row it touches: a broken row elsewhere does not block it;
- reading (``items``) checks every row and names the first broken one by file and line.

The table is a ``store.tables`` table keyed by ``id`` (the same parser as ROUTES.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from control_room import ledger
from control_room.errors import InvalidError, NotFoundError
from control_room.ledger import events
from control_room.room.layout import Room
from control_room.room.values import exists_already, is_id
from control_room.store import tables
from control_room.store.files import read_optional, update

KINDS = {"lever": "levers.md", "branch": "branches.md"}
STATES = ("untested", "pending", "killed")
COLUMNS = ("id", "state", "title", "because")
_TITLES = {"lever": "Levers", "branch": "Branches"}


def path(room: Room, kind: str) -> Path:
    return room.root / "intelligence" / KINDS[_kind(kind)]


def where(kind: str) -> str:
    """The page, relative to the room: what error messages name."""
    return f"intelligence/{KINDS[_kind(kind)]}"


def _kind(kind: str) -> str:
    if kind not in KINDS:
        raise InvalidError(f"unknown kind {kind!r} (valid: {', '.join(KINDS)})")
    return kind


def _check_state(state: str) -> None:
    if state not in STATES:
        raise InvalidError(f"state {state!r} is not one of {', '.join(STATES)}")


# parsing -----------------------------------------------------------------------------------


def _page(text: str, kind: str) -> tables.Table | None:
    """Find the page's table. A broken header or a second table is an error for every command:
    there is then no telling where a row belongs."""
    ours = tables.find_all(text, "id")
    for t in ours:
        if tuple(t.header) != COLUMNS:
            raise InvalidError(
                f"{where(kind)}:{t.header_line}: the table header must be "
                f"| {' | '.join(COLUMNS)} |, not | {' | '.join(t.header)} |"
            )
    if len(ours) > 1:
        raise InvalidError(
            f"{where(kind)}:{ours[1].header_line}: a second table of {kind}s (the first is on "
            f"line {ours[0].header_line}); keep exactly one table on this page"
        )
    return ours[0] if ours else None


def _row_problem(kind: str, line: int, cells: list[str]) -> str | None:
    """What is wrong with one row on its own (duplicates are checked across rows)."""
    at = f"{where(kind)}:{line}"
    if len(cells) != len(COLUMNS):
        hint = ""
        if len(cells) == 1:
            hint = " (a line right after the table is read as one of its rows: leave a blank line)"
        return (
            f"{at}: a row needs {len(COLUMNS)} cells (| {' | '.join(COLUMNS)} |), "
            f"this one has {len(cells)}{hint}"
        )
    row_id, state, _title, because = cells
    if not is_id(row_id):
        return f"{at}: id {row_id!r} must match [a-z0-9][a-z0-9._-]{{0,63}}"
    if state not in STATES:
        return f"{at}: state {state!r} is not one of {', '.join(STATES)}"
    if state == "killed" and not because:
        return f"{at}: {kind} {row_id} is killed with no reason: say why in its because cell"
    return None


def _one_line(text: str) -> str:
    """A cell's value as it reads back from the page: one line, runs of whitespace as one space
    (``table_row`` then escapes its pipes)."""
    return " ".join(text.split())


def _record(line: int, cells: list[str]) -> dict[str, Any]:
    return {**dict(zip(COLUMNS, cells, strict=True)), "line": line}


# reading -----------------------------------------------------------------------------------


def check(room: Room, kind: str) -> tuple[list[dict[str, Any]], list[str]]:
    """Every well-formed row, and a problem (``file:line: what``) for every broken one."""
    text = read_optional(path(room, kind))
    page = _page(text, kind) if text is not None else None
    if page is None:
        return [], []
    good: list[dict[str, Any]] = []
    problems: list[str] = []
    first_seen: dict[str, int] = {}
    for line, cells in page.rows:
        problem = _row_problem(kind, line, cells)
        if problem is None and cells[0] in first_seen:
            problem = f"{where(kind)}:{line}: duplicate id {cells[0]!r} (also on line {first_seen[cells[0]]})"
        if cells:
            first_seen.setdefault(cells[0], line)
        if problem:
            problems.append(problem)
        else:
            good.append(_record(line, cells))
    return good, problems


def items(room: Room, kind: str, state: str | None = None) -> list[dict[str, Any]]:
    """The rows of the page, each ``{id, state, title, because, line}``, in file order.

    A page with a broken row is an error naming the first one (and how many more there are),
    so that a listing never silently drops a lever.
    """
    _kind(kind)
    if state is not None:
        _check_state(state)
    good, problems = check(room, kind)
    if problems:
        more = len(problems) - 1
        raise InvalidError(problems[0] + (f" (and {more} more broken row{'s' * (more > 1)})" if more else ""))
    return [r for r in good if state is None or r["state"] == state]


# writing -----------------------------------------------------------------------------------


def add(room: Room, kind: str, id: str, title: str, because: str = "") -> dict[str, Any]:
    """Add an ``untested`` row after the table's last row (a page without the table gets one).

    Refuses an id already on the page, naming its line. Other rows are not checked.
    """
    _kind(kind)
    if not is_id(id):
        raise InvalidError(f"{kind} id {id!r} must match [a-z0-9][a-z0-9._-]{{0,63}}")
    cells = [id, "untested", _one_line(title), _one_line(because)]
    if not cells[2]:
        raise InvalidError(f"a {kind} needs a title")
    added: dict[str, Any] = {}

    def change(text: str) -> str:
        page = _page(text, kind)
        for line, old in page.find(id) if page is not None else []:
            state = old[1] if len(old) > 1 else "?"
            raise InvalidError(
                exists_already(kind, id, f"{where(kind)}:{line}")
                + f"; its state is {state}: change it with `control-room {kind} set {id} STATE`"
            )
        new_text, table = tables.add_row(text, page, [*cells], columns=COLUMNS, title=_TITLES[kind])
        added["line"] = table.rows[-1][0]
        return new_text

    p = path(room, kind)
    p.parent.mkdir(parents=True, exist_ok=True)
    update(p, change)
    detail = f"{id}: added as untested: {cells[2]}" + (f"; because: {cells[3]}" if cells[3] else "")
    ledger.append(room.ledger, events.intelligence(kind, "add"), outcome="untested", detail=detail)
    return _record(added["line"], cells)


def set_state(room: Room, kind: str, id: str, state: str, because: str = "") -> dict[str, Any]:
    """Set the state of one row; ``because`` (when given) replaces its because cell.

    A kill needs a reason. Only that row's line is rewritten; other rows are not checked, so
    a broken row elsewhere does not block this one. Returns the row, with ``was`` (the old
    state).
    """
    _kind(kind)
    _check_state(state)
    because = _one_line(because)
    if state == "killed" and not because:
        raise InvalidError(
            f"a kill needs a reason: give --because (what ruled {id} out, with the task id or "
            "tombstone that shows it)"
        )
    p = path(room, kind)
    if not p.exists():
        raise NotFoundError(f"no {kind} {id!r}: {where(kind)} is missing")
    result: dict[str, Any] = {}

    def change(text: str) -> str:
        page = _page(text, kind)
        found = page.find(id) if page is not None else []
        if page is None or not found:
            raise NotFoundError(f"no {kind} {id!r} in {where(kind)}")
        if len(found) > 1:
            raise InvalidError(
                f"{where(kind)}:{found[1][0]}: duplicate id {id!r} (also on line {found[0][0]}); "
                "fix the page by hand first"
            )
        line, cells = found[0]
        if len(cells) != len(COLUMNS):  # a wrong state or an empty because is repaired below
            raise InvalidError(_row_problem(kind, line, cells) or "")
        new = [id, state, _one_line(cells[2]), because or _one_line(cells[3])]
        new_text, _ = tables.set_row(text, page, line, [*new])
        result.update(_record(line, new), was=cells[1], old_because=cells[3])
        return new_text

    update(p, change)
    was = result["was"]
    detail = f"{id}: still {state}" if was == state else f"{id}: {was} -> {state}"
    if because and because != result["old_because"]:
        detail += f"; because: {because}"
    ledger.append(room.ledger, events.intelligence(kind, "set"), outcome=state, detail=detail)
    del result["old_because"]
    return result
