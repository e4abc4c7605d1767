"""control_room.ledger.read: tail returns the last data lines, in order, read backwards."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import ev, five_lines

from control_room.ledger import append, read
from control_room.ledger.line import HEADER, SEPARATOR, Entry, parse, render, split_cells
from control_room.ledger.read import (
    TAIL_BLOCK,
    backward,
    has_header,
    last_hash,
    table_lines,
    tail,
    torn_and_last_hash,
)


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


def _plain_last_hash(path: Path, writer: str) -> str | None:
    """What last_hash must answer: the last parsed line of ``writer`` after the header."""
    found = None
    for _, line, _ in table_lines(path):
        entry = parse(line)
        if entry is not None and entry.writer == writer:
            found = entry.hash
    return found


def test_last_hash_finds_each_writers_last_line_across_blocks(
    ledger: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(read, "SEARCH_BLOCK", 700)  # a few lines per block: lines cut at every edge
    names = ["alpha", "beta", "probe", "gamma"]
    for k in range(60):
        # "probe" also appears as another writer's adapter and in details: only its own lines count
        append(ledger, ev("e"), writer=names[k % 3], adapter="probe", detail=f"beta gamma | probe | {k}")
    with open(ledger, "a", encoding="utf-8") as f:
        f.write("| a hand-written line | beta | not a ledger row |\n| torn")
    size = ledger.stat().st_size
    fd = os.open(ledger, os.O_RDONLY)
    try:
        for name in names:
            assert last_hash(fd, size, name) == _plain_last_hash(ledger, name), name
        assert last_hash(fd, size, "gamma") is None
        assert last_hash(fd, size, "zeta") is None
    finally:
        os.close(fd)


# torn_and_last_hash: what append needs of the file's end, from its last KiB when it can ----------

a_line = st.one_of(
    st.builds(
        lambda w, d, h: render(Entry("2026-01-31T12:00:00Z", "0" * 16, w, "e", detail=d, prev=h))[0],
        st.sampled_from(["w", "v", "writer", "w|x"]),
        st.text(max_size=400),  # escaped control characters make some lines longer than a KiB
        st.sampled_from(["-", "0123456789ab"]),
    ),
    st.sampled_from([HEADER, SEPARATOR, "", "| garbage |", "plain words"]),
)


@settings(max_examples=400, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(a_line, max_size=12), cut=st.integers(0, 30), writer=st.sampled_from(["w", "writer"]))
def test_torn_and_last_hash_says_what_reading_backwards_says(
    tmp_path: Path, lines: list[str], cut: int, writer: str
) -> None:
    data = "".join(f"{ln}\n" for ln in lines).encode()
    data = data[: max(0, len(data) - cut)]  # a torn tail, sometimes
    path = tmp_path / "L.md"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    try:
        said = torn_and_last_hash(fd, len(data), writer)
        assert said == (bool(data) and not data.endswith(b"\n"), last_hash(fd, len(data), writer))
    finally:
        os.close(fd)


def test_last_hash_stops_at_the_header(ledger: Path) -> None:
    text = ledger.read_text()
    ledger.write_text(text.replace("# LEDGER", "# LEDGER\n\nwritten by | alpha | in the preamble |"))
    fd = os.open(ledger, os.O_RDONLY)
    try:
        assert last_hash(fd, ledger.stat().st_size, "alpha") is None
        append(ledger, ev("e"), writer="alpha")
        assert last_hash(fd, ledger.stat().st_size, "alpha") == _plain_last_hash(ledger, "alpha") is not None
    finally:
        os.close(fd)


def _row(writer: str, detail: str = "", prev: str = "-") -> str:
    return render(Entry("2026-01-31T12:00:00Z", "0" * 16, writer, "e", detail=detail, prev=prev))[0]


def test_the_end_of_a_line_longer_than_the_block_read_is_not_a_line(tmp_path: Path) -> None:
    """A line whose last KiB alone would read as one of ``w``'s: the line is not, so the answer
    is the line before, found by reading backwards."""
    before = _row("w", "before")
    row = _row("w", "x" * (TAIL_BLOCK - 1 - len(_row("w"))))
    long_line = "z" * 500 + row  # its last TAIL_BLOCK bytes, newline included, are `row` exactly
    assert len(row) == TAIL_BLOCK - 1
    path = tmp_path / "L.md"
    path.write_text(f"{before}\n{long_line}\n")
    fd = os.open(path, os.O_RDONLY)
    try:
        assert split_cells(row) is not None and len(split_cells(row) or []) == 12  # alone, it would do
        assert torn_and_last_hash(fd, path.stat().st_size, "w") == (False, before.split(" | ")[-1][:-2])
    finally:
        os.close(fd)


def test_a_writer_named_writer_has_no_line_in_the_header(tmp_path: Path) -> None:
    path = tmp_path / "L.md"
    path.write_text(f"{_row('writer')}\n{HEADER}\n")
    fd = os.open(path, os.O_RDONLY)
    try:
        assert torn_and_last_hash(fd, path.stat().st_size, "writer") == (False, None)
    finally:
        os.close(fd)


def test_entries_since_reads_back_to_the_header_or_the_time(ledger: Path) -> None:
    lines = five_lines(ledger)
    with open(ledger, "a", encoding="utf-8") as f:
        f.write("not a ledger line\n")
    newest_first = [parse(ln) for ln in reversed(lines)]
    assert list(read.entries_since(ledger)) == newest_first
    assert list(read.entries_since(ledger, "9999")) == []  # every line older than that
    assert list(read.entries_since(ledger.with_name("missing.md"))) == []
