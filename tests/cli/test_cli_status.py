"""control-room status"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from support import ADD_ARGS, no_room_error

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
    assert list(data) == ["room", "stop", "ledger_error", "tasks", "routes", "daily_budget_usd",
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
