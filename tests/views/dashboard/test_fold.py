"""control_room.views.dashboard.fold: day counters, metric points, review lines, kept current, depth."""

from __future__ import annotations

from typing import Any

import pytest
from support import rewrite

from control_room import ledger
from control_room.ledger import events
from control_room.ledger.result import RunResult
from control_room.room.layout import Room
from control_room.store import cache
from control_room.views.dashboard import fold


def _result(
    room: Room, task: str, outcome: str, metrics: dict[str, float] | None = None, cost: float = 0.0
) -> None:
    run = RunResult(round=1, exit=0, decision="d", validator="passed", metrics=metrics)
    ledger.append(
        room.ledger,
        events.RESULT,
        task=task,
        adapter="probe",
        outcome=outcome,
        cost_usd=cost,
        detail=run.detail(),
    )


def _line(time: str, event: str, task: str = "", outcome: str = "", cost: str = "0", detail: str = "") -> str:
    """A ledger line written by hand (the fold reads cells, not hashes)."""
    return f"| {time} | id | w | {event} | {task} |  |  | {outcome} | {cost} | {detail} | - | 000000000000 |"


def _state(room: Room) -> dict[str, Any]:
    with cache.held({}):
        return fold.state(room)


def test_the_fold_counts_days_metrics_and_reviews(room: Room) -> None:
    ledger.append(room.ledger, events.TASK_ADD, task="t1", adapter="probe", detail="x")
    ledger.append(room.ledger, events.TASK_ADD, task="t2", adapter="probe", detail="x")
    _result(room, "t1", "pass", {"speedup": 1.5}, cost=0.25)
    _result(room, "t2", "fail", {"speedup": 0.5, "ms": 40.0})
    ledger.append(
        room.ledger, events.REVIEW, task="t1", adapter="probe", outcome="reject", detail="<b>no</b>"
    )
    ledger.append(room.ledger, events.PARK, task="t2", detail="max rounds")
    memory: dict[str, bytes] = {}
    with cache.held(memory):
        st = fold.state(room)
    [(day, counts)] = [(d, c) for d, c in st["days"].items() if c[fold.LINES] > 1]
    assert counts[fold.SPEND] == 0.25
    assert counts[fold.PASSES : fold.LINES] == [1, 1, 2, 2]
    assert fold.queue_depth(st["days"])[-1] == (day, 0)
    assert sorted(st["metrics"]) == ["ms", "speedup"]
    assert [(task, v) for _, task, v in st["metrics"]["speedup"]] == [("t1", 1.5), ("t2", 0.5)]
    assert [r[1:] for r in st["reviews"]["t1"]] == [["review", "reject", "probe", "<b>no</b>"]]
    assert not (room.cache / "dashboard").exists()  # kept in memory, not written
    assert str(room.cache / "dashboard") in memory


def test_queue_depth_never_goes_below_zero() -> None:
    days = {
        "2026-01-02": [0.0, 0, 0, 0, 3, 3],
        "2026-01-01": [0.0, 0, 0, 2, 0, 2],
        "2026-01-03": [0.0, 0, 0, 1, 0, 1],
    }
    assert fold.queue_depth(days) == [("2026-01-01", 2), ("2026-01-02", 0), ("2026-01-03", 1)]


def test_queue_depth_of_an_empty_ledger_is_empty() -> None:
    assert fold.queue_depth({}) == []


def test_lines_are_counted_by_their_utc_day(room: Room) -> None:
    rewrite(
        room.ledger,
        [
            _line("2026-03-01T23:59:59Z", "task-add", "t1", "queued"),
            _line("2026-03-01T23:59:59Z", "warning", "t1", cost="0.5"),
            _line("2026-03-02T00:00:00Z", "result", "t1", "fail", "1.25", "{}"),
            _line("2026-03-04T08:00:00Z", "result", "t1", "pass", "0.25", "{}"),
        ],
    )
    st = _state(room)
    assert st["days"] == {
        "2026-03-01": [0.5, 0, 0, 1, 0, 2],
        "2026-03-02": [1.25, 0, 1, 0, 0, 1],
        "2026-03-04": [0.25, 1, 0, 0, 1, 1],
    }
    assert st["lines"] == 4 and st["metrics"] == {} and st["reviews"] == {}
    assert fold.queue_depth(st["days"]) == [("2026-03-01", 1), ("2026-03-02", 1), ("2026-03-04", 0)]


def test_retry_opens_a_task_and_reject_and_cancel_close_one(room: Room) -> None:
    day = "2026-03-01"
    rewrite(
        room.ledger,
        [
            _line(f"{day}T00:00:00Z", "task-add", "t1", "queued"),
            _line(f"{day}T00:00:01Z", "retry", "t1", "queued"),
            _line(f"{day}T00:00:02Z", "reject", "t2", "rejected"),
            _line(f"{day}T00:00:03Z", "cancel", "t1", "cancelled"),
            _line(f"{day}T00:00:04Z", "park", "t1", "parked"),
            _line(f"{day}T00:00:05Z", "claim", "t1", "running"),
        ],
    )
    assert _state(room)["days"] == {day: [0.0, 0, 0, 2, 3, 6]}


def test_a_cost_a_person_mangled_counts_nothing(room: Room) -> None:
    rewrite(
        room.ledger,
        [
            _line("2026-03-01T00:00:00Z", "warning", cost="lots"),
            _line("2026-03-01T00:00:01Z", "warning", cost="0.75"),
        ],
    )
    assert _state(room)["days"] == {"2026-03-01": [0.75, 0, 0, 0, 0, 2]}


def test_a_stray_line_is_not_folded(room: Room) -> None:
    rewrite(
        room.ledger,
        [
            _line("2026-03-01T00:00:00Z", "task-add", "t1", "queued"),
            "| a person's note | not | a ledger line |",
            "not even a row",
        ],
    )
    st = _state(room)
    assert st["lines"] == 1 and st["days"] == {"2026-03-01": [0.0, 0, 0, 1, 0, 1]}


def test_review_arbitration_and_escalated_lines_are_kept_per_task_unescaped(room: Room) -> None:
    ledger.append(room.ledger, events.REVIEW, task="t|1", adapter="probe", outcome="accept", detail="a | b")
    ledger.append(room.ledger, events.ARBITRATION, task="t|1", outcome="A", detail="side A\nsaid so")
    ledger.append(room.ledger, events.ESCALATED, task="t2", outcome="parked", detail="both")
    ledger.append(room.ledger, events.REVIEW_QUEUED, task="t2", outcome="queued", detail="not a review")
    reviews = _state(room)["reviews"]
    assert sorted(reviews) == ["t2", "t|1"]
    assert [r[1:] for r in reviews["t|1"]] == [
        ["review", "accept", "probe", "a | b"],
        ["arbitration", "A", "", "side A\nsaid so"],
    ]
    assert [r[1:] for r in reviews["t2"]] == [["escalated", "parked", "", "both"]]
    assert all(len(r[0]) == 20 and r[0].endswith("Z") for r in reviews["t|1"])  # the line's time


def test_only_the_newest_review_lines_are_kept(room: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fold, "REVIEW_LINES", 2)
    for k in range(4):
        ledger.append(room.ledger, events.REVIEW, task="t1", outcome="reject", detail=f"r{k}")
    assert [r[4] for r in _state(room)["reviews"]["t1"]] == ["r2", "r3"]


def test_only_the_newest_metric_points_are_kept(room: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fold, "METRIC_POINTS", 2)
    for k in range(7):
        _result(room, f"t{k}", "pass", {"ms": float(k)})
    points = _state(room)["metrics"]["ms"]
    assert [(task, v) for _, task, v in points] == [("t5", 5.0), ("t6", 6.0)]


def test_a_result_without_metrics_adds_no_point(room: Room) -> None:
    _result(room, "t1", "pass")
    ledger.append(room.ledger, events.WARNING, task="t1", detail='"metrics" in a warning is not a result')
    assert _state(room)["metrics"] == {}


def test_a_fold_brought_up_to_date_equals_a_fresh_one(room: Room) -> None:
    memory: dict[str, bytes] = {}
    with cache.held(memory):
        _result(room, "t1", "pass", {"ms": 3.0}, cost=0.5)
        first = fold.state(room)
        ledger.append(room.ledger, events.REVIEW, task="t1", outcome="accept", detail="ok")
        _result(room, "t2", "fail", {"ms": 4.0}, cost=0.25)
        updated = fold.state(room)
    assert updated["lines"] == first["lines"] + 2
    assert updated["size"] == room.ledger.stat().st_size
    fresh = _state(room)
    assert updated == fresh


def test_the_checkpoint_is_a_cache_file_outside_held_memory(room: Room) -> None:
    _result(room, "t1", "pass", {"ms": 3.0})
    st = fold.state(room)
    assert (room.cache / "dashboard").is_file()
    assert cache.load(room.cache / "dashboard")["kind"] == fold.KIND
    assert st["metrics"]["ms"][0][1:] == ["t1", 3.0]
