"""control-room ledger verify / tail / stats"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from support import data_lines, ev, no_room_error

from control_room import ledger
from control_room.ledger.line import PREAMBLE, parse
from control_room.room.layout import Room

Run = Callable[..., Result]
REL = "control-room/LEDGER.md"


@pytest.fixture
def inside(room: Room) -> Room:
    os.chdir(room.root)
    for k in range(4):
        ledger.append(room.ledger, ev("note"), task=f"t{k}", detail=f"detail {k}")
    return room


def lineno(k: int) -> int:
    """File line number of the k-th data line (1-based)."""
    return PREAMBLE.count("\n") + k


def test_verify_a_clean_ledger(run: Run, inside: Room) -> None:
    result = run("ledger", "verify")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == "ledger ok: 5 lines from 1 writer, every chain intact\n"


def test_verify_after_a_hand_edit(run: Run, inside: Room) -> None:
    text = inside.ledger.read_text()
    stored = parse(data_lines(inside.ledger)[2]).hash  # type: ignore[union-attr]
    inside.ledger.write_text(text.replace("| detail 1 |", "| detail one |"))
    result = run("ledger", "verify")
    assert (result.exit_code, result.stdout) == (6, "")
    assert result.stderr == (
        f"{REL}:{lineno(3)}: edited: its content does not match its hash {stored}\n"
        "ledger BAD: 1 bad line of 5\n"
    )


def test_verify_json_after_a_deletion(run: Run, inside: Room) -> None:
    lines = data_lines(inside.ledger)
    gone = parse(lines[1]).hash  # type: ignore[union-attr]
    inside.ledger.write_text(PREAMBLE + "".join(f"{ln}\n" for ln in lines[:1] + lines[2:]))
    result = run("ledger", "verify", "--json")
    assert result.exit_code == 6
    assert json.loads(result.stdout) == {
        "ok": False, "lines": 4, "writers": ["tester"], "header_found": True,
        "problems": [{"line": lineno(2), "kind": "deleted", "why": "the line of writer tester "
                      f"it follows (hash {gone}) is missing from the ledger"}],
    }  # fmt: skip


def test_verify_a_file_that_is_not_a_ledger(run: Run, inside: Room) -> None:
    inside.ledger.write_text("# notes\n")
    result = run("ledger", "verify")
    assert (result.exit_code, result.stdout) == (6, "")
    assert result.stderr == (
        f"{REL}: no ledger table header found, so none of its lines is read; "
        "`control-room init` puts the header back, keeping every line\n"
    )


def test_verify_lists_at_most_twenty_problems(run: Run, inside: Room) -> None:
    for k in range(30):
        ledger.append(inside.ledger, ev("note"), detail=f"more {k}")
    inside.ledger.write_text(inside.ledger.read_text().replace("| note |", "| n0te |"))
    result = run("ledger", "verify")
    err = result.stderr.split("\n")
    assert result.exit_code == 6
    assert len(err) == 20 + 3 and err[-1] == ""
    assert err[20:22] == ["... and 14 more", "ledger BAD: 34 bad lines of 35"]


def test_tail(run: Run, inside: Room) -> None:
    result = run("ledger", "tail", "-n", "2")
    assert (result.exit_code, result.stderr) == (0, "")
    out = result.stdout.split("\n")
    assert len(out) == 3 and out[2] == ""
    assert out[0].endswith("  note  t2  detail 2") and out[1].endswith("  note  t3  detail 3")


def test_tail_raw_prints_the_lines_as_they_are(run: Run, inside: Room) -> None:
    result = run("ledger", "tail", "--raw", "-n", "3")
    assert result.stdout == "".join(f"{ln}\n" for ln in data_lines(inside.ledger)[-3:])


def test_tail_json(run: Run, inside: Room) -> None:
    rows = json.loads(run("ledger", "tail", "--json", "-n", "1").stdout)
    assert [(r["event"], r["task"], r["detail"], r["writer"]) for r in rows] == [
        ("note", "t3", "detail 3", "tester")
    ]


def test_ledger_alone_is_tail(run: Run, inside: Room) -> None:
    assert run("ledger").stdout == run("ledger", "tail").stdout
    assert len(run("ledger").stdout.split("\n")) == 5 + 1


def test_stats_json(run: Run, inside: Room) -> None:
    ledger.append(inside.ledger, ev("result"), adapter="claude", route="r1", outcome="pass",
                  cost_usd=0.25)  # fmt: skip
    ledger.append(inside.ledger, ev("result"), adapter="claude", route="r1", outcome="fail",
                  cost_usd=0.5)  # fmt: skip
    data = json.loads(run("ledger", "stats", "--json").stdout)
    assert data["total"] == {"events": 7, "outcomes": {"ok": 1, "pass": 1, "fail": 1},
                             "spend_usd": 0.75}  # fmt: skip
    assert data["by_adapter"] == {
        "-": {"events": 5, "outcomes": {"ok": 1}, "spend_usd": 0.0},
        "claude": {"events": 2, "outcomes": {"pass": 1, "fail": 1}, "spend_usd": 0.75},
    }
    assert data["by_route"]["r1"] == {"events": 2, "outcomes": {"pass": 1, "fail": 1},
                                      "spend_usd": 0.75}  # fmt: skip


def test_stats_text(run: Run, inside: Room) -> None:
    ledger.append(inside.ledger, ev("result"), adapter="codex", outcome="pass", cost_usd=1.5)
    out = run("ledger", "stats").stdout.split("\n")
    assert out[0] == "6 events, $1.5000 spent"
    assert f"  {'codex':<20}        1 event   ${1.5:>10,.4f}  pass 1" in out  # 1 event, columns kept
    assert f"  {'-':<20}        5 events  ${0:>10,.4f}  ok 1" in out


@pytest.mark.parametrize(
    "args",
    [["ledger"], ["ledger", "verify"], ["ledger", "tail"], ["ledger", "stats"]],
    ids=["ledger", "verify", "tail", "stats"],
)
def test_outside_a_room(run: Run, tmp_path: Path, args: list[str]) -> None:
    result = run(*args)
    assert (result.exit_code, result.stdout, result.stderr) == (3, "", no_room_error(tmp_path))


@pytest.mark.parametrize(
    "args",
    [["--room", "room", "ledger", "verify"], ["ledger", "--room", "room", "verify"],
     ["ledger", "verify", "--room", "room"]],
    ids=["before-ledger", "after-ledger", "after-verify"],
)  # fmt: skip
def test_room_option_anywhere(run: Run, room: Room, args: list[str]) -> None:
    result = run(*args)
    assert (result.exit_code, result.stdout) == (
        0, "ledger ok: 1 line from 1 writer, every chain intact\n",
    )  # fmt: skip
