"""dispatch.person.brake: STOP made once saying who and why, removed once, each with one ledger line."""

from __future__ import annotations

import re

from support import TIME, data_lines, entries

from control_room.dispatch.person import brake
from control_room.ledger.line import parse
from control_room.room.layout import Room


def lines(room: Room) -> list[tuple[str, str, str]]:
    """(event, outcome, detail) of every stop and resume line, in order."""
    found = [parse(line) for line in data_lines(room.ledger)]
    return [(e.event, e.outcome, e.detail) for e in found if e is not None and e.event in ("stop", "resume")]


def test_stop_creates_stop_saying_who_and_why_once(room: Room) -> None:
    assert room.stopped() is False
    assert brake.stop(room, "over budget") is True
    assert room.stopped() is True
    text = room.stop.read_text()
    assert re.fullmatch(rf"STOP created {TIME} by tester\nreason: over budget\n", text)
    assert lines(room) == [("stop", "stopped", "over budget")]
    assert brake.stop(room, "again") is False  # the first STOP is kept, and logged once
    assert room.stop.read_text() == text and len(entries(room, "stop")) == 1


def test_stop_without_a_reason_says_only_who(room: Room) -> None:
    assert brake.stop(room) is True
    assert re.fullmatch(rf"STOP created {TIME} by tester\n", room.stop.read_text())
    assert lines(room) == [("stop", "stopped", "")]


def test_a_stop_made_by_hand_is_respected_and_not_logged(room: Room) -> None:
    room.stop.write_text("mine\n")
    assert brake.stop(room, "x") is False
    assert room.stop.read_text() == "mine\n" and lines(room) == []


def test_a_dangling_stop_link_brakes_too(room: Room) -> None:
    room.stop.symlink_to(room.root / "nowhere")
    assert brake.stop(room) is False and lines(room) == []
    assert brake.resume(room) is True and not room.stop.is_symlink()
    assert lines(room) == [("resume", "resumed", "")]


def test_resume_removes_stop_once(room: Room) -> None:
    assert brake.resume(room) is False  # nothing to remove: no line
    assert lines(room) == []
    brake.stop(room, "lunch")
    assert brake.resume(room) is True
    assert not room.stop.exists() and room.stopped() is False
    assert brake.resume(room) is False
    assert lines(room) == [("stop", "stopped", "lunch"), ("resume", "resumed", "")]


def test_a_long_reason_is_cut_to_one_line_and_the_stop_made_anyway(room: Room) -> None:
    assert brake.stop(room, "smoke\nFORGED: line\x1b[2J " * 100)
    reason = room.stop.read_text(encoding="utf-8").splitlines()[1:]
    assert reason == ["reason: " + ("smoke FORGED: line " * 100)[: brake.REASON_MAX - 1] + "…"]
    (line,) = entries(room, "stop")
    assert line.detail == reason[0][len("reason: ") :]
