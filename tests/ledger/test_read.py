"""control_room.ledger.read: tail returns the last data lines, in order, read backwards."""

from __future__ import annotations

from pathlib import Path

from support import five_lines

from control_room.ledger.read import backward, has_header, tail


def test_tail_returns_the_last_lines_in_order(ledger: Path) -> None:
    lines = five_lines(ledger)
    assert tail(ledger, 3) == lines[2:]
    assert tail(ledger, 1) == lines[4:]
    assert tail(ledger, 50) == lines
    assert tail(ledger, 0) == []


def test_tail_of_an_empty_ledger(ledger: Path) -> None:
    assert tail(ledger, 5) == []


def test_has_header(ledger: Path, tmp_path: Path) -> None:
    assert has_header(ledger)
    lines = ledger.read_text().splitlines(keepends=True)
    headless = tmp_path / "headless.md"
    headless.write_text("".join(ln for ln in lines if not ln.startswith("| time | id |")))
    assert not has_header(headless)
    empty = tmp_path / "empty.md"
    empty.write_bytes(b"")
    assert not has_header(empty)


def test_backward_gives_every_physical_line_last_first(tmp_path: Path) -> None:
    path = tmp_path / "cycle.log"
    path.write_bytes(b"one\ntwo\nthree")  # the last line torn: no newline
    assert list(backward(path)) == ["three", "two", "one"]
    path.write_bytes(b"one\ntwo\n")
    assert list(backward(path)) == ["", "two", "one"]


def test_backward_of_a_missing_file_gives_nothing(tmp_path: Path) -> None:
    assert list(backward(tmp_path / "nothing.log")) == []
