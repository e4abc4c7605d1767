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
    join_cells,
    parse,
    render,
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


def test_a_plain_cell_is_kept_as_it_is_and_every_other_character_escaped() -> None:
    """Printable ASCII but ``|`` and ``\\`` skips the table: the table agrees, char by char."""
    assert escape("round 1; exit 0 in 1.2s") == "round 1; exit 0 in 1.2s"
    assert [escape(chr(c)) for c in range(0x20)] == [
        {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}.get(c, f"\\u{c:04x}") for c in range(0x20)
    ]
    assert (escape("a|b"), escape("a\\b"), escape("\x7f"), escape("\x85"), escape("é")) == (
        "a\\|b", "a\\\\b", "\\u007f", "\\u0085", "é",
    )  # fmt: skip
    assert (escape(None), escape(7), escape("")) == ("", "7", "")


@settings(max_examples=300)
@given(cells=st.lists(nasty_text, min_size=1, max_size=9))
def test_join_cells_is_each_cell_escaped_then_joined(cells: list[str]) -> None:
    assert join_cells(tuple(cells)) == " | ".join(map(escape, cells))


def test_join_cells_escapes_a_cell_that_is_not_text() -> None:
    assert join_cells(("a", 7, None)) == "a | 7 | "  # type: ignore[arg-type]


def test_a_line_as_append_writes_it_is_the_line_render_gives(ledger: Path) -> None:
    entry = append(ledger, ev("e"), task="t|1", detail="tab\there; é")
    assert data_lines(ledger) == [render(entry)[0]] and render(entry)[1] == entry.hash
