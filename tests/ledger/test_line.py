"""control_room.ledger.line: any text escapes to one physical line that parses back; a long detail is cut."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import data_lines, ev

from control_room.ledger import append
from control_room.ledger.line import (
    DETAIL_MAX,
    PREAMBLE,
    escape,
    parse,
    split_cells,
    unescape,
)
from control_room.ledger.verify import verify


def test_a_long_detail_is_cut_with_a_note(ledger: Path) -> None:
    entry = append(ledger, ev("e"), detail="x" * (DETAIL_MAX + 500))
    assert entry.detail == "x" * DETAIL_MAX + " [cut: 500 more chars]"
    assert parse(data_lines(ledger)[0]) == entry


# any text is one physical line ------------------------------------------------------------

NASTY = ["|", "\\", "\\|", "\n", "\r", "\r\n", "\x00", "\t", "\x0b", "\x0c", "\x1c", "\x85",
         "\u2028", "\u2029", "\ud800", "\udfff", " | ", "\\u0041", "\\n", "| x | y |", "  "]  # fmt: skip
any_char = st.characters(exclude_categories=())  # every code point, lone surrogates included
nasty_text = st.lists(st.one_of(st.text(any_char, max_size=20), st.sampled_from(NASTY)), max_size=12).map(
    "".join
)  # fmt: skip  (well under DETAIL_MAX)


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(task=nasty_text, outcome=nasty_text, detail=nasty_text)
def test_any_text_is_one_physical_line_that_parses_back(
    tmp_path: Path, task: str, outcome: str, detail: str
) -> None:
    path = tmp_path / "LEDGER.md"
    path.write_text(PREAMBLE, encoding="utf-8")
    entry = append(path, ev("note"), task=task, outcome=outcome, detail=detail)
    raw = path.read_bytes()[len(PREAMBLE.encode()) :]
    assert raw.count(b"\n") == 1 and raw.endswith(b"\n")
    line = raw[:-1].decode("utf-8")
    assert len(line.splitlines()) == 1  # not even \u2028, \x85 or \x0c split it
    assert parse(line) == entry
    assert (entry.task, entry.outcome, entry.detail) == (task, outcome, detail)
    report = verify(path)
    assert (report.ok, report.lines, report.problems) == (True, 1, [])


@settings(max_examples=500)
@given(text=nasty_text)
def test_escape_unescape_round_trip(text: str) -> None:
    cell = escape(text)
    assert unescape(cell) == text
    assert len(cell.splitlines()) <= 1 and "\n" not in cell
    cell.encode("utf-8")  # lone surrogates are escaped, so the cell is always valid UTF-8


@settings(max_examples=300)
@given(cells=st.lists(nasty_text, min_size=1, max_size=6))
def test_split_cells_recovers_escaped_cells(cells: list[str]) -> None:
    row = "| " + " | ".join(escape(c) for c in cells) + " |"
    assert split_cells(row) == [escape(c) for c in cells]
