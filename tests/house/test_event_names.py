"""Ledger readers name events through ``ledger.events``, never as string literals: a renamed
or misspelt event then fails at import instead of silently matching nothing."""

from __future__ import annotations

import ast
from pathlib import Path

import control_room
from control_room.ledger import events

PACKAGE = Path(control_room.__file__).parent
NAMES = {e.name for e in events.EVENTS}


def _readers() -> list[Path]:
    """Modules that read the event cell of ledger lines."""
    return sorted(p for p in PACKAGE.rglob("*.py") if "Col.EVENT" in p.read_text(encoding="utf-8"))


def _event_names_spelt(source: str) -> list[str]:
    """``line: 'name'`` for each string literal that is an event's name, except a path part
    (``room.cache / "notify"`` names a file)."""
    tree = ast.parse(source)
    paths = {id(n.right) for n in ast.walk(tree) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div)}
    return [
        f"{node.lineno}: {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value in NAMES
        and id(node) not in paths
    ]


def test_no_ledger_reader_spells_an_event_name() -> None:
    readers = _readers()
    assert len(readers) >= 6  # history, scorecard, stats, notify, the dashboard's fold and pages
    hits = [
        f"{p.relative_to(PACKAGE)}:{h}" for p in readers for h in _event_names_spelt(p.read_text("utf-8"))
    ]
    assert hits == []


def test_the_check_sees_a_literal() -> None:
    source = 'def f(cells, room):\n    return cells[Col.EVENT] in ("park", "x") or room / "park"\n'
    assert _event_names_spelt(source) == ["2: 'park'"]
