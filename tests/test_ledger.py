"""The ledger (SPEC §6): append, escaping, verify, tail, stats, summary, concurrent writers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import data_lines, ev

from control_room.ledger import append
from control_room.ledger import stats as stats_module
from control_room.ledger.line import (
    DETAIL_MAX,
    PREAMBLE,
    escape,
    parse,
    split_cells,
    unescape,
)
from control_room.ledger.read import tail
from control_room.ledger.stats import stats, summary
from control_room.ledger.verify import verify

HEAD = PREAMBLE.count("\n")  # the file line number of the separator: data line k is HEAD + k


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    path = tmp_path / "LEDGER.md"
    path.write_text(PREAMBLE, encoding="utf-8")
    return path


def lineno(k: int) -> int:
    """The file line number of the k-th data line (1-based k)."""
    return HEAD + k


def rewrite(path: Path, lines: list[str]) -> None:
    """Replace the data lines of the ledger at ``path``."""
    path.write_text(PREAMBLE + "".join(f"{ln}\n" for ln in lines), encoding="utf-8")


# append / parse -------------------------------------------------------------------------


def test_append_then_parse_round_trip(ledger: Path) -> None:
    entry = append(ledger, ev("result"), task="t1", route="r1", adapter="claude",
                   outcome="pass", cost_usd=0.125, detail="took 3 rounds")  # fmt: skip
    [line] = data_lines(ledger)
    assert parse(line) == entry
    assert (entry.writer, entry.event, entry.task, entry.route, entry.adapter) == (
        "tester", "result", "t1", "r1", "claude",
    )  # fmt: skip
    assert (entry.outcome, entry.cost_usd, entry.detail, entry.prev) == (
        "pass", "0.125", "took 3 rounds", "-",
    )  # fmt: skip
    assert len(entry.id) == 16 and len(entry.hash) == 12


def test_each_line_chains_to_the_previous_line_of_its_writer(ledger: Path) -> None:
    a1 = append(ledger, ev("e"), writer="a")
    b1 = append(ledger, ev("e"), writer="b")
    a2 = append(ledger, ev("e"), writer="a")
    b2 = append(ledger, ev("e"), writer="b")
    assert [a1.prev, b1.prev, a2.prev, b2.prev] == ["-", "-", a1.hash, b1.hash]


def test_writer_comes_from_the_environment(ledger: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONTROL_ROOM_WRITER", "ci box|7")
    assert append(ledger, ev("e")).writer == "ci-box-7"


def test_a_long_detail_is_cut_with_a_note(ledger: Path) -> None:
    entry = append(ledger, ev("e"), detail="x" * (DETAIL_MAX + 500))
    assert entry.detail == "x" * DETAIL_MAX + " [cut: 500 more chars]"
    assert parse(data_lines(ledger)[0]) == entry


def test_append_to_a_missing_ledger_is_a_no_room_error(tmp_path: Path) -> None:
    from control_room.errors import NoRoomError

    path = tmp_path / "LEDGER.md"
    with pytest.raises(NoRoomError) as err:
        append(path, ev("e"))
    assert str(err.value) == (
        f"{path} is missing; restore it (git checkout) or run `control-room init` "
        "to start a new one"
    )


# any text is one physical line ------------------------------------------------------------

NASTY = ["|", "\\", "\\|", "\n", "\r", "\r\n", "\x00", "\t", "\x0b", "\x0c", "\x1c", "\x85",
         "\u2028", "\u2029", "\ud800", "\udfff", " | ", "\\u0041", "\\n", "| x | y |", "  "]  # fmt: skip
any_char = st.characters(exclude_categories=())  # every code point, lone surrogates included
nasty_text = st.lists(st.one_of(st.text(any_char, max_size=20), st.sampled_from(NASTY)),
                      max_size=12).map("".join)  # fmt: skip  (well under DETAIL_MAX)


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


# verify ---------------------------------------------------------------------------------


def five_lines(ledger: Path) -> list[str]:
    for k in range(5):
        append(ledger, ev("e"), detail=f"detail-{k}")
    return data_lines(ledger)


def test_verify_a_clean_ledger(ledger: Path) -> None:
    five_lines(ledger)
    report = verify(ledger)
    assert (report.ok, report.lines, report.writers, report.problems) == (
        True, 5, {"tester"}, [],
    )  # fmt: skip


def test_verify_an_empty_ledger_is_ok(ledger: Path) -> None:
    report = verify(ledger)
    assert (report.ok, report.lines, report.header_found) == (True, 0, True)


def test_verify_a_file_without_header_is_not_ok(tmp_path: Path) -> None:
    path = tmp_path / "LEDGER.md"
    path.write_text("# not a ledger\n")
    report = verify(path)
    assert (report.ok, report.header_found, report.problems) == (False, False, [])


def test_verify_names_an_edited_line(ledger: Path) -> None:
    lines = five_lines(ledger)
    stored = parse(lines[2]).hash  # type: ignore[union-attr]
    lines[2] = lines[2].replace("detail-2", "detail-X")
    rewrite(ledger, lines)
    report = verify(ledger)
    assert [(p.line, p.kind, p.why) for p in report.problems] == [
        (lineno(3), "edited", f"its content does not match its hash {stored}")
    ]


def test_verify_names_the_line_after_a_deleted_line(ledger: Path) -> None:
    lines = five_lines(ledger)
    gone = parse(lines[2]).hash  # type: ignore[union-attr]
    rewrite(ledger, lines[:2] + lines[3:])
    report = verify(ledger)
    assert [(p.line, p.kind, p.why) for p in report.problems] == [
        (lineno(3), "deleted",
         f"the line of writer tester it follows (hash {gone}) is missing from the ledger"),
    ]  # fmt: skip
    assert report.lines == 4


def test_verify_names_swapped_lines_as_reordered(ledger: Path) -> None:
    lines = five_lines(ledger)
    lines[1], lines[2] = lines[2], lines[1]
    rewrite(ledger, lines)
    report = verify(ledger)
    assert [(p.line, p.kind) for p in report.problems] == [
        (lineno(2), "reordered"), (lineno(3), "reordered"), (lineno(4), "reordered"),
    ]  # fmt: skip
    assert report.problems[0].why == f"it follows line {lineno(3)}, which comes after it"
    assert report.problems[1].why == (
        f"it follows line {lineno(1)}, but line {lineno(2)} of writer tester came between "
        "(moved or duplicated)"
    )


def test_verify_names_a_torn_last_line(ledger: Path) -> None:
    five_lines(ledger)
    data = ledger.read_bytes()
    ledger.write_bytes(data[:-20])  # cut the newline and the end of the last line
    report = verify(ledger)
    assert [(p.line, p.kind, p.why) for p in report.problems] == [
        (lineno(5), "torn", "the last line has no newline")
    ]


def test_append_after_a_torn_line_starts_a_new_line(ledger: Path) -> None:
    five_lines(ledger)
    ledger.write_bytes(ledger.read_bytes()[:-20])
    entry = append(ledger, ev("after"))
    lines = data_lines(ledger)
    assert len(lines) == 6 and parse(lines[5]) == entry
    assert [(p.line, p.kind) for p in verify(ledger).problems] == [(lineno(5), "torn")]


def test_verify_interleaved_writers(ledger: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for k in range(6):
        monkeypatch.setenv("CONTROL_ROOM_WRITER", "laptop" if k % 2 else "server")
        append(ledger, ev("e"), detail=str(k))
    append(ledger, ev("e"), writer="ci")
    report = verify(ledger)
    assert (report.ok, report.lines, report.writers) == (True, 7, {"laptop", "server", "ci"})


def test_verify_a_union_merge_of_two_machines(tmp_path: Path, ledger: Path) -> None:
    append(ledger, ev("init"), writer="laptop")
    append(ledger, ev("e"), writer="server")
    append(ledger, ev("e"), writer="laptop")
    base = ledger.read_bytes()
    mine, theirs = tmp_path / "mine.md", tmp_path / "theirs.md"
    mine.write_bytes(base)
    theirs.write_bytes(base)
    for k in range(3):
        append(mine, ev("e"), detail=f"laptop {k}", writer="laptop")
        append(theirs, ev("e"), detail=f"server {k}", writer="server")
    # git's union merge keeps the base, then our new lines, then theirs
    merged = base + mine.read_bytes()[len(base) :] + theirs.read_bytes()[len(base) :]
    ledger.write_bytes(merged)
    report = verify(ledger)
    assert (report.ok, report.lines, report.writers) == (True, 9, {"laptop", "server"})
    # and the machine that pulls the merge keeps chaining onto it
    append(ledger, ev("e"), writer="server")
    assert verify(ledger).ok is True


# tail and stats ---------------------------------------------------------------------------


def test_tail_returns_the_last_lines_in_order(ledger: Path) -> None:
    lines = five_lines(ledger)
    assert tail(ledger, 3) == lines[2:]
    assert tail(ledger, 1) == lines[4:]
    assert tail(ledger, 50) == lines
    assert tail(ledger, 0) == []


def test_tail_of_an_empty_ledger(ledger: Path) -> None:
    assert tail(ledger, 5) == []


@pytest.fixture
def spending(ledger: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Four events over two days, two adapters, two routes."""
    import control_room.ledger.write as write

    rows = [
        ("2025-01-01T10:00:00Z", dict(adapter="claude", route="r1", outcome="pass", cost_usd=0.1)),
        ("2025-01-01T23:59:59Z", dict(adapter="claude", route="r2", outcome="fail", cost_usd=0.2)),
        ("2025-01-02T00:00:00Z", dict(adapter="codex", route="r1", outcome="pass", cost_usd=1.25)),
        ("2025-01-02T08:00:00Z", dict()),
    ]
    for when, fields in rows:
        monkeypatch.setattr(write, "now_iso", lambda t=None, when=when: when)
        append(ledger, ev("result"), **fields)  # type: ignore[arg-type]
    return ledger


def test_stats_sums_spend_and_outcomes_exactly(spending: Path) -> None:
    def b(events: int, outcomes: dict[str, int], spend: float) -> dict[str, object]:
        return {"events": events, "outcomes": outcomes, "spend_usd": spend}

    assert stats(spending) == {
        "total": b(4, {"pass": 2, "fail": 1}, 1.55),
        "by_day": {
            "2025-01-01": b(2, {"pass": 1, "fail": 1}, 0.3),
            "2025-01-02": b(2, {"pass": 1}, 1.25),
        },
        "by_adapter": {
            "-": b(1, {}, 0.0),
            "claude": b(2, {"pass": 1, "fail": 1}, 0.3),
            "codex": b(1, {"pass": 1}, 1.25),
        },
        "by_route": {
            "-": b(1, {}, 0.0),
            "r1": b(2, {"pass": 2}, 1.35),
            "r2": b(1, {"fail": 1}, 0.2),
        },
    }


# summary (incremental) --------------------------------------------------------------------


def counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The event ids of the lines the summary folds in from now on."""
    seen: list[str] = []
    real = stats_module._count

    def count(state, cells):  # type: ignore[no-untyped-def]
        seen.append(cells[1])
        real(state, cells)

    monkeypatch.setattr(stats_module, "_count", count)
    return seen


def test_summary_counts_lines_events_and_spend(spending: Path, tmp_path: Path) -> None:
    s = summary(spending, tmp_path / "cache.json")
    assert (s["lines"], s["events"], s["spend_by_day"]) == (
        4, {"result": 4}, {"2025-01-01": 0.3, "2025-01-02": 1.25},
    )  # fmt: skip
    assert s["size"] == spending.stat().st_size


def test_summary_reads_only_the_new_bytes(
    ledger: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache_file = tmp_path / "cache.json"
    five_lines(ledger)
    first = summary(ledger, cache_file)
    assert first["lines"] == 5
    for k in range(10):
        append(ledger, ev("spend"), cost_usd=0.5, detail=f"more {k}")
    seen = counting(monkeypatch)
    second = summary(ledger, cache_file)
    new_ids = [line.split(" | ")[1] for line in data_lines(ledger)[5:]]
    assert seen == new_ids  # exactly the 10 new lines, nothing else
    assert second["size"] == ledger.stat().st_size > first["size"]
    assert (second["lines"], second["events"]) == (15, {"e": 5, "spend": 10})
    seen.clear()
    assert summary(ledger, cache_file) == second and seen == []  # nothing new: nothing read
    assert summary(ledger, tmp_path / "fresh.json") == second  # equals a rebuild from scratch


def test_summary_rebuilds_after_the_file_shrank(
    ledger: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache_file = tmp_path / "cache.json"
    lines = five_lines(ledger)
    assert summary(ledger, cache_file)["lines"] == 5
    rewrite(ledger, lines[:3])
    seen = counting(monkeypatch)
    s = summary(ledger, cache_file)
    assert s["lines"] == 3 and s["size"] == ledger.stat().st_size
    assert len(seen) == 3  # every line folded in again, from the start
    assert s == summary(ledger, tmp_path / "fresh.json")


def test_summary_rebuilds_after_an_edit_before_the_checkpoint(
    ledger: Path, tmp_path: Path
) -> None:
    cache_file = tmp_path / "cache.json"
    for k in range(5):
        append(ledger, ev("spend"), cost_usd=0.5, detail=f"d{k}")
    assert summary(ledger, cache_file)["events"] == {"spend": 5}
    lines = data_lines(ledger)
    lines[1] = lines[1].replace("| spend |", "| refund |")  # a hand edit, longer line
    rewrite(ledger, lines)
    append(ledger, ev("spend"), cost_usd=0.5)
    s = summary(ledger, cache_file)
    assert (s["lines"], s["events"]) == (6, {"spend": 5, "refund": 1})
    assert s == summary(ledger, tmp_path / "fresh.json")


# many processes at once -----------------------------------------------------------------

WORKER = """
import os, sys, time
from pathlib import Path
from control_room.ledger import append
from control_room.ledger.events import Event
ev = Event("bench", (), ("task", "detail"), "a test line")
path, writer, proc, go = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
while not os.path.exists(go):
    time.sleep(0.001)
for i in range(500):
    append(path, ev, task=proc, detail=f"{proc} {i}", writer=writer)
"""


def test_eight_processes_appending_at_once(ledger: Path, tmp_path: Path) -> None:
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(ledger), f"w{p % 4}", f"p{p}", str(go)],
            stderr=subprocess.PIPE,
        )
        for p in range(8)
    ]
    go.touch()  # two processes share each writer name, so their chains interleave too
    errors = [proc.communicate(timeout=300)[1] for proc in procs]
    assert [proc.returncode for proc in procs] == [0] * 8, errors

    lines = data_lines(ledger)
    assert len(lines) == 4000
    entries = [parse(line) for line in lines]
    assert all(e is not None for e in entries)
    assert len({e.id for e in entries}) == 4000  # type: ignore[union-attr]
    for p in range(8):  # each process's lines are whole and in its own order
        mine = [e.detail for e in entries if e.task == f"p{p}"]  # type: ignore[union-attr]
        assert mine == [f"p{p} {i}" for i in range(500)]
    report = verify(ledger)
    assert (report.ok, report.lines, report.writers) == (True, 4000, {"w0", "w1", "w2", "w3"})
