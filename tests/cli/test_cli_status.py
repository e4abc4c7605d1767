"""control-room status"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from support import ADD_ARGS, data_lines, lineno, no_room_error

from control_room import errors
from control_room.ledger.line import HEADER, PREAMBLE
from control_room.room import scaffold
from control_room.room.layout import Room

Run = Callable[..., Result]


def test_status_on_one_screen(run: Run, inside: Room) -> None:
    result = run("status")
    assert (result.exit_code, result.stderr) == (0, "")
    lines = result.stdout.split("\n")
    assert lines[:8] == [
        f"room      {inside.root}",
        "STOP      no",
        "tasks     queue 0 · running 0 · done 0 · parked 0 · rejected 0 · cancelled 0",
        "routes    none yet",
        "spend     $0.00 today of $10.00 daily budget (0%)",
        "findings  0",
        "ledger    1 line; last:",
        lines[7],
    ]
    plan = scaffold.plan()
    n_files, n_dirs = sum(not i.is_dir for i in plan), sum(i.is_dir for i in plan)
    assert lines[7].startswith("  20")
    assert lines[7].endswith(f"  init  ok  created {n_files} files, {n_dirs} folders")
    assert lines[8:] == [""]


def test_status_json(run: Run, inside: Room) -> None:
    run("task", "add", "--id", "t1", *ADD_ARGS)
    run("stop", "--reason", "checking")
    result = run("status", "--json")
    assert (result.exit_code, result.stderr) == (0, "")
    data = json.loads(result.stdout)
    assert list(data) == ["room", "stop", "ledger_error", "warnings", "tasks", "routes", "daily_budget_usd",
                          "control_error", "spend_today_usd", "ledger_lines", "findings", "held", "last"]  # fmt: skip
    assert data["room"] == str(inside.root)
    assert data["stop"].startswith("STOP created ") and data["stop"].endswith(
        " by tester reason: checking"
    )
    assert data["tasks"] == {"queue": 1, "running": 0, "done": 0, "parked": 0, "rejected": 0,
                             "cancelled": 0}  # fmt: skip
    assert (data["routes"], data["daily_budget_usd"], data["control_error"]) == ({}, 10.0, None)
    assert (data["spend_today_usd"], data["ledger_lines"], data["findings"]) == (0.0, 3, 0)
    assert [(e["event"], e["task"], e["outcome"], e["writer"]) for e in data["last"]] == [
        ("init", "", "ok", "tester"),
        ("task-add", "t1", "queued", "tester"),
        ("stop", "", "stopped", "tester"),
    ]


def test_status_when_stopped(run: Run, inside: Room) -> None:
    (inside.root / "STOP").write_text("gone fishing\n")
    result = run("status")
    assert result.exit_code == 0
    assert result.stdout.split("\n")[1] == "STOP      YES - every cycle halts: gone fishing"


def test_status_with_a_broken_gate_still_shows_the_room(run: Run, inside: Room) -> None:
    inside.control.write_text("---\nmax_parallel: many\n---\n")
    result = run("status")
    assert result.exit_code == 0
    lines = result.stdout.split("\n")
    assert lines[4] == "spend     $0.00 today"
    assert lines[5] == (
        f"gate      BROKEN: {inside.control}: max_parallel must be a positive integer (got 'many')"
    )


def test_status_outside_a_room(run: Run, tmp_path: Path) -> None:
    result = run("status")
    assert (result.exit_code, result.stdout, result.stderr) == (3, "", no_room_error(tmp_path))


def test_status_of_a_folder_that_is_not_a_room(run: Run, tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    result = run("status", "--room", "plain")
    assert (result.exit_code, result.stdout) == (3, "")
    assert result.stderr == (
        "Error: plain: not a control room (no control-room/ folder); "
        "create one with `control-room init plain`\n"
    )


@pytest.mark.parametrize(
    "args",
    [["--room", "room", "status"], ["status", "--room", "room"]],
    ids=["before", "after"],
)
def test_room_option_before_and_after_the_command(run: Run, room: Room, args: list[str]) -> None:
    result = run(*args)
    assert (result.exit_code, result.stdout.split("\n")[0]) == (0, f"room      {room.root}")


def test_room_from_the_environment(run: Run, room: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONTROL_ROOM", str(room.root))
    result = run("status")
    assert (result.exit_code, result.stdout.split("\n")[0]) == (0, f"room      {room.root}")


def test_status_from_a_nested_folder(run: Run, room: Room) -> None:
    os.chdir(room.root / "swarm" / "queue")
    assert run("status").stdout.split("\n")[0] == f"room      {room.root}"


# a damaged ledger is flagged where people look ------------------------------------------------

NO_HEADER = (
    "control-room/LEDGER.md has no ledger header (the table header under its preamble): none of its "
    "lines is read; run `control-room init` to put the header back, keeping every line"
)


def warnings(run: Run) -> tuple[list[str], list[str]]:
    """The warning lines of `status`, and the warnings of `status --json`."""
    text = [ln[10:] for ln in run("status").stdout.split("\n") if ln.startswith("warning   ")]
    return text, json.loads(run("status", "--json").stdout)["warnings"]


def test_a_sound_ledger_gives_no_warning(run: Run, inside: Room) -> None:
    assert warnings(run) == ([], [])


def test_an_empty_ledger_is_a_warning_naming_the_file_and_the_fix(run: Run, inside: Room) -> None:
    inside.ledger.write_bytes(b"")
    text = (
        "control-room/LEDGER.md is empty: its header is gone and no line can be read; restore it "
        "(`git checkout control-room/LEDGER.md`), or run `control-room init` to write its header again"
    )
    assert warnings(run) == ([text], [text])
    assert run("status").stdout.split("\n")[2] == f"warning   {text}"  # right under STOP


def test_a_ledger_without_its_header_is_a_warning(run: Run, inside: Room) -> None:
    inside.ledger.write_text(inside.ledger.read_text().replace(HEADER + "\n", ""))
    assert warnings(run) == ([NO_HEADER], [NO_HEADER])


def test_a_broken_chain_is_a_warning_and_verify_agrees(run: Run, inside: Room) -> None:
    for k in range(3):
        assert run("stop", "--reason", f"r{k}").exit_code == 0
        assert run("resume").exit_code == 0
    assert warnings(run) == ([], [])  # checked once: the checkpoint is now at the end
    lines = data_lines(inside.ledger)
    assert "| stop |" in lines[3] and "| r1 |" in lines[3]
    lines[3] = lines[3].replace("| r1 |", "| r9 |")  # an edit by hand: same length, same place,
    saved = inside.ledger.with_name("LEDGER.md.new")  # saved as an editor does: a new file renamed
    saved.write_text(PREAMBLE + "".join(f"{ln}\n" for ln in lines))
    os.replace(saved, inside.ledger)
    stored = lines[3].split(" | ")[-1].rstrip(" |")
    assert run("stop", "--reason", "again").exit_code == 0  # and the ledger grows past the edit
    text, as_json = warnings(run)
    expected = (
        f"control-room/LEDGER.md:{lineno(4)}: edited: its content does not match its hash {stored}; "
        "`control-room ledger verify` lists every bad line"
    )
    assert (text, as_json) == ([expected], [expected])
    verified = run("ledger", "verify")
    assert verified.exit_code == errors.LEDGER_BAD
    assert verified.stderr.startswith(f"control-room/LEDGER.md:{lineno(4)}: edited: its content does not")
