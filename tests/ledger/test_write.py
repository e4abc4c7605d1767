"""control_room.ledger.write: append chains each writer's lines, after a torn line and under load."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support import data_lines, ev, five_lines, lineno

from control_room.ledger import append
from control_room.ledger.line import parse
from control_room.ledger.verify import verify


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


def test_append_to_a_missing_ledger_is_a_no_room_error(tmp_path: Path) -> None:
    from control_room.errors import NoRoomError

    path = tmp_path / "LEDGER.md"
    with pytest.raises(NoRoomError) as err:
        append(path, ev("e"))
    assert str(err.value) == (
        f"{path} is missing; restore it (git checkout) or run `control-room init` "
        "to start a new one"
    )


def test_append_after_a_torn_line_starts_a_new_line(ledger: Path) -> None:
    five_lines(ledger)
    ledger.write_bytes(ledger.read_bytes()[:-20])
    entry = append(ledger, ev("after"))
    lines = data_lines(ledger)
    assert len(lines) == 6 and parse(lines[5]) == entry
    assert [(p.line, p.kind) for p in verify(ledger).problems] == [(lineno(5), "torn")]


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
