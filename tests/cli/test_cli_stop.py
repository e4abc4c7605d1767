"""control-room stop / resume"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from support import data_lines, events, no_room_error

from control_room.ledger.line import parse
from control_room.room.layout import Room

Run = Callable[..., Result]


def test_stop_twice_then_resume_twice(run: Run, inside: Room) -> None:
    stop = inside.root / "STOP"
    first = run("stop", "--reason", "over budget")
    assert (first.exit_code, first.stderr) == (0, "")
    assert first.stdout == f"stopped: {stop} exists; every cycle halts until `control-room resume`\n"
    assert stop.read_text().endswith(" by tester\nreason: over budget\n")

    second = run("stop")
    assert (second.exit_code, second.stdout, second.stderr) == (
        0, f"already stopped: {stop} exists\n", "",
    )  # fmt: skip
    assert stop.read_text().endswith("reason: over budget\n")  # the first STOP is kept

    third = run("resume")
    assert (third.exit_code, third.stdout, third.stderr) == (
        0, "resumed: STOP removed; cycles run again\n", "",
    )  # fmt: skip
    assert not stop.exists()

    fourth = run("resume")
    assert (fourth.exit_code, fourth.stdout, fourth.stderr) == (
        0, "not stopped: there is no STOP file\n", "",
    )  # fmt: skip
    assert events(inside.ledger) == ["init", "stop", "resume"]
    stop_line = parse(data_lines(inside.ledger)[1])
    assert (stop_line.outcome, stop_line.detail) == ("stopped", "over budget")  # type: ignore[union-attr]


def test_a_stop_made_by_hand_is_respected(run: Run, inside: Room) -> None:
    (inside.root / "STOP").write_text("")
    assert run("stop").stdout == f"already stopped: {inside.root / 'STOP'} exists\n"
    assert events(inside.ledger) == ["init"]


def test_stop_shows_in_the_context(run: Run, inside: Room) -> None:
    run("stop", "--reason", "gpu bill")
    assert "- STOP: YES, every cycle halts: STOP created " in inside.context.read_text()
    run("resume")
    assert "- STOP: no\n" in inside.context.read_text()


@pytest.mark.parametrize("command", ["stop", "resume"])
def test_outside_a_room(run: Run, tmp_path: Path, command: str) -> None:
    result = run(command)
    assert (result.exit_code, result.stdout, result.stderr) == (3, "", no_room_error(tmp_path))
    assert not (tmp_path / "STOP").exists()


@pytest.mark.parametrize("where", ["before", "after"])
def test_room_option_before_and_after_the_command(run: Run, room: Room, where: str) -> None:
    args = ["--room", "room", "stop"] if where == "before" else ["stop", "--room", "room"]
    assert run(*args).exit_code == 0
    assert (room.root / "STOP").exists()
