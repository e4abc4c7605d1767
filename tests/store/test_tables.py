"""control_room.store.tables: markdown tables found by their key column, rows with their line numbers."""

from __future__ import annotations

from control_room.store import tables

DOC = """# Title

| route | verdict |
|---|---|
| fast-parse | alive |
| a\\|b | killed |

prose between

| n |
|---|
| 1 |
| 2 |
| 3 |
"""


def test_tables_rows_carry_their_one_based_line_numbers() -> None:
    found = [*tables.find_all(DOC, "route"), *tables.find_all(DOC, "n")]
    assert [t.header for t in found] == [["route", "verdict"], ["n"]]
    assert [t.header_line for t in found] == [3, 10]
    assert found[0].rows == [(5, ["fast-parse", "alive"]), (6, ["a|b", "killed"])]
    assert found[1].rows == [(12, ["1"]), (13, ["2"]), (14, ["3"])]
    lines = DOC.split("\n")
    for table in found:
        for line, _ in table.rows:
            assert lines[line - 1].startswith("| ")


def test_tables_records_use_lowercase_headers() -> None:
    (found,) = tables.find_all("| Route | Verdict |\n|---|---|\n| r1 | alive |\n", "route")
    assert [found.record(cells) for _, cells in found.rows] == [{"route": "r1", "verdict": "alive"}]


def test_tables_of_text_without_tables_is_empty() -> None:
    assert tables.find_all("# nothing\n\njust | a pipe\n", "route") == []
