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


def run_line(room: Room, task: str, adapter: str, model: str, role: str, round: int = 1) -> None:
    detail = RunResult(decision="d", round=round, seconds=60, model=model, role=role).detail()
    ledger.append(room.ledger, events.RESULT, task=task, adapter=adapter, outcome="pass", detail=detail)


def integrate_line(room: Room, task: str, adapter: str, outcome: str, detail: str = "d") -> None:
    ledger.append(room.ledger, events.INTEGRATE, task=task, adapter=adapter, outcome=outcome, detail=detail)


def post(card: dict[str, object], section: str, name: str) -> dict[str, int]:
    key = "role" if section == "by_role" else "model"
    rows = card[section]
    assert isinstance(rows, list)
    [row] = [r for r in rows if r[key] == name]
    got: dict[str, int] = row["post_rebase_validator_failures"]
    return got


def test_post_rebase_validator_failures_count_for_the_tasks_last_run(room: Room) -> None:
    """``failed`` integrate lines over ``failed`` + ``merged`` ones, in the group of the task's
    last run before the line; conflict, refused and unfit re-ran nothing; a task merged with the
    helper that served it is the helper's run."""
    run_line(room, "t1", "claude", "sonnet", "engineer")
    integrate_line(
        room, "t1", "claude", "merged", "route/r1 onto main: 1 file; validator passed after the rebase"
    )
    run_line(room, "t2", "claude", "sonnet", "engineer")
    integrate_line(room, "t2", "claude", "failed", "after the rebase onto main, validator exited 1")
    run_line(room, "t2", "codex", "gpt-5", "engineer", round=2)  # its next round ran elsewhere
    integrate_line(room, "t2", "codex", "merged")
    run_line(room, "t3", "codex", "gpt-5", "engineer")
    for outcome in ("conflict", "refused", "unfit"):
        integrate_line(room, "t3", "codex", outcome)
    integrate_line(room, "t3", "codex", "failed")
    run_line(room, "resolve-t4", "claude", "opus", "resolver")
    integrate_line(room, "resolve-t4", "claude", "merged")
    integrate_line(
        room, "t4", "claude", "merged", "merged with resolve-t4, which served it: route/r4 onto main"
    )
    integrate_line(room, "t-never", "probe", "failed")  # no run on the ledger: its adapter, unknown model
    sc = scorecard.card(room)
    assert post(sc, "by_model", "sonnet") == {"count": 1, "of": 2}
    assert post(sc, "by_model", "gpt-5") == {"count": 1, "of": 2}
    assert post(sc, "by_model", "opus") == {"count": 0, "of": 1}
    assert [(r["adapter"], r["model"], r["runs"]) for r in sc["by_model"]][-1] == ("probe", "unknown", 0)
    assert post(sc, "by_model", "unknown") == {"count": 1, "of": 1}
    assert post(sc, "by_role", "engineer") == {"count": 2, "of": 4}
    assert post(sc, "by_role", "resolver") == {"count": 0, "of": 1}
    assert post(sc, "by_role", "unknown") == {"count": 1, "of": 1}
    assert sc["total"]["post_rebase_validator_failures"] == {"count": 3, "of": 6}
    assert sc["total"]["runs"] == 5  # integrate lines are not runs
    (room.cache / "scorecard").unlink()
    assert scorecard.card(room) == sc  # a fold from the start gives the same
