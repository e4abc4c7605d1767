"""control_room.knowledge.scorecard: the fold reads only the lines appended since the last call;
``--since`` as the first hour it counts."""

from __future__ import annotations

import pytest

from control_room import errors, ledger
from control_room.knowledge import scorecard
from control_room.ledger import events
from control_room.ledger.result import RunResult
from control_room.room.layout import Room

NOW = 1764590400.0  # 2025-12-01T12:00:00Z


def result_line(room: Room, task: str, round: int) -> None:
    detail = RunResult(decision="d", round=round, seconds=60, model="m", role="engineer").detail()
    ledger.append(room.ledger, events.RESULT, task=task, adapter="probe", outcome="pass", detail=detail)


def test_a_second_call_reads_only_the_new_lines(room: Room) -> None:
    result_line(room, "a", 1)
    _, read = scorecard.state(room)
    assert read == room.ledger.stat().st_size  # no checkpoint: all of it
    assert scorecard.state(room)[1] == 0
    before = room.ledger.stat().st_size
    result_line(room, "b", 2)
    st, read = scorecard.state(room)
    assert read == room.ledger.stat().st_size - before
    assert scorecard.card(room)["total"]["mean_rounds_to_pass"] == {"mean": 1.5, "of": 2}
    (room.cache / "scorecard").unlink()
    assert scorecard.state(room)[0] == st  # rebuilt from the start: the same state


def test_a_rewritten_ledger_is_folded_again_from_the_start(room: Room) -> None:
    result_line(room, "a", 1)
    result_line(room, "b", 1)
    assert scorecard.card(room)["total"]["runs"] == 2
    lines = room.ledger.read_text().splitlines(keepends=True)
    room.ledger.write_text("".join(lines[:-1]))  # the last line gone: the checkpoint's bytes moved
    assert scorecard.card(room)["total"]["runs"] == 1


@pytest.mark.parametrize(
    ("since", "hour"),
    [
        ("2025-11-30", "2025-11-30T00"),
        ("2025-11-30T09:45:00Z", "2025-11-30T09"),
        ("2025-11-30T09", "2025-11-30T09"),
        ("90m", "2025-12-01T10"),
        ("7d", "2025-11-24T12"),
        (" 12h ", "2025-12-01T00"),
    ],
)
def test_cutoff_is_the_first_hour_counted(since: str, hour: str) -> None:
    assert scorecard.cutoff(since, NOW) == hour


@pytest.mark.parametrize("since", ["", "soon", "2025-02-30", "2025-11-30T25:00", "0s"])
def test_cutoff_refuses_what_is_not_a_date_or_a_duration(since: str) -> None:
    with pytest.raises(errors.InvalidError, match=r"^--since .*: not a date, a time or a duration"):
        scorecard.cutoff(since, NOW)
