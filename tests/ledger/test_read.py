"""control_room.ledger.read: tail returns the last data lines, in order, read backwards."""

from __future__ import annotations

from pathlib import Path

from support import five_lines

from control_room.ledger.read import tail


def test_tail_returns_the_last_lines_in_order(ledger: Path) -> None:
    lines = five_lines(ledger)
    assert tail(ledger, 3) == lines[2:]
    assert tail(ledger, 1) == lines[4:]
    assert tail(ledger, 50) == lines
    assert tail(ledger, 0) == []


def test_tail_of_an_empty_ledger(ledger: Path) -> None:
    assert tail(ledger, 5) == []
