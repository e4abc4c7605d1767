"""dispatch.person.decisions: approve, Done, retry, park, cancel: moves, files, lines, refusals."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from support import TIME, entries, events, task, task_json, unsealed, where

from control_room import errors
from control_room.dispatch.person import decisions
from control_room.room import settings as settings_file
from control_room.room.layout import Room


def put(room: Room, state: str, tid: str, reason: str | None = None, **fields: Any) -> dict[str, Any]:
    """A task file in ``state`` (and its reason file)."""
    t = task(tid, **fields)
    (room.state_dir(state) / f"{tid}.json").write_text(json.dumps(t))
    if reason is not None:  # rejected/NAME.reason, else ID.reason
        name = f"{tid}.json.reason" if state == "rejected" else f"{tid}.reason"
        (room.state_dir(state) / name).write_text(reason)
    return t


def lines_of(room: Room, event: str) -> list[tuple[str, str, str, str]]:
    """(task, route, outcome, detail) of each ledger line of ``event``."""
    return [(e.task, e.route, e.outcome, e.detail) for e in entries(room, event)]


def reason(room: Room, state: str, tid: str) -> str:
    return (room.state_dir(state) / f"{tid}.reason").read_text()


# approve ----------------------------------------------------------------------------------------


def test_approve_records_each_gate_once_in_control_md(room: Room) -> None:
    put(room, "queue", "g", gate=["gpu", "merge"])
    assert decisions.approve(room, "g", ["gpu"], "alice") == ["gpu"]
    assert decisions.approve(room, "g", [], "bob") == ["merge"]  # no gate named: every gate of the task
    approvals = settings_file.load(room).approvals
    assert [(a["task"], a["gate"], a["by"]) for a in approvals] == [
        ("g", "gpu", "alice"),
        ("g", "merge", "bob"),
    ]
    assert all(re.fullmatch(TIME, a["at"]) for a in approvals)
    assert lines_of(room, "approve") == [
        ("g", "", "approved", "gate gpu by alice"),
        ("g", "", "approved", "gate merge by bob"),
    ]
    control = room.control.read_bytes()
    assert decisions.approve(room, "g", [], "carol") == []  # approved already: nothing written
    assert room.control.read_bytes() == control and len(entries(room, "approve")) == 2


def test_approve_refuses_a_gate_the_task_lacks_and_a_task_without_gates(room: Room) -> None:
    put(room, "queue", "g", gate=["gpu"])
    put(room, "queue", "plain")
    control = room.control.read_bytes()
    with pytest.raises(errors.InvalidError) as unknown:
        decisions.approve(room, "g", ["gpu", "merge"], "alice")
    assert str(unknown.value) == "task g has no gate merge (its gates: gpu)"
    with pytest.raises(errors.InvalidError) as none:
        decisions.approve(room, "plain", [], "alice")
    assert str(none.value) == "task plain has no gate to approve"
    with pytest.raises(errors.InvalidError) as named:
        decisions.approve(room, "plain", ["gpu"], "alice")
    assert str(named.value) == "task plain has no gate gpu (its gates: none)"
    with pytest.raises(errors.InvalidError) as broken:  # found by the fuzz tests: on two lines, before
        decisions.approve(room, "g", ["a\u2028b"], "alice")
    assert str(broken.value) == "task g has no gate a\\u2028b (its gates: gpu)"
    with pytest.raises(errors.NotFoundError) as missing:
        decisions.approve(room, "nope", [], "alice")
    assert str(missing.value) == f"no task nope in {room.swarm}"
    assert room.control.read_bytes() == control and entries(room, "approve") == []


# Done -------------------------------------------------------------------------------------------


def test_mark_done_stamps_a_passed_task_in_done(room: Room) -> None:
    before = put(room, "done", "t", route="fast")
    updated = decisions.mark_done(room, "t", "alice")
    assert re.fullmatch(TIME, updated["done_at"]) and updated["done_by"] == "alice"
    assert task_json(room, "done", "t") == updated
    mine = {k: v for k, v in before.items() if k != "seal"}
    assert unsealed(updated) == {**mine, "done_at": updated["done_at"], "done_by": "alice"}
    assert lines_of(room, "done") == [("t", "fast", "done", "marked Done by alice")]
    with pytest.raises(errors.ConflictError) as twice:
        decisions.mark_done(room, "t", "bob")
    assert str(twice.value) == f"t was marked Done already, at {updated['done_at']} by alice"
    assert task_json(room, "done", "t")["done_by"] == "alice" and len(entries(room, "done")) == 1


def test_mark_done_moves_a_merged_task_from_to_test(room: Room) -> None:
    put(room, "to-test", "m", "merged\n", merged_commit="abc")
    decisions.mark_done(room, "m", "alice")
    assert where(room, "m") == ["done"] and task_json(room, "done", "m")["merged_commit"] == "abc"
    assert not (room.state_dir("to-test") / "m.reason").exists()


def test_mark_done_refuses_a_task_not_merged_or_not_finished(room: Room) -> None:
    put(room, "passed", "p")
    put(room, "queue", "q")
    with pytest.raises(errors.ConflictError) as unmerged:
        decisions.mark_done(room, "p", "alice")
    assert str(unmerged.value) == (
        "cannot mark Done p: it passed but is not merged yet (swarm/passed/); `control-room integrate p` "
        "first"
    )
    with pytest.raises(errors.ConflictError) as queued:
        decisions.mark_done(room, "q", "alice")
    assert (
        str(queued.value) == "cannot mark Done q: it is in swarm/queue/, not in swarm/done/ or swarm/to-test/"
    )
    assert (where(room, "p"), where(room, "q"), entries(room, "done")) == (["passed"], ["queue"], [])


# retry ------------------------------------------------------------------------------------------


def test_retry_queues_a_parked_task_with_a_fresh_round_count(room: Room) -> None:
    before = put(room, "parked", "t", "Parked after 2 failed rounds.\n", route="slow")
    (room.state_dir("parked") / "t.json").write_text(
        json.dumps({**before, "rounds": 2, "last_failure": "validator exited 3", "dispatcher_deaths": 1})
    )
    assert decisions.retry(room, "t") == "parked"
    assert task_json(room, "queue", "t") == before  # rounds, last failure and deaths forgotten
    assert sorted(p.name for p in room.state_dir("parked").iterdir()) == []  # its reason went with it
    assert not (room.state_dir("queue") / "t.reason").exists()
    assert lines_of(room, "retry") == [("t", "slow", "queued", "from swarm/parked/ by a person")]


def test_retry_of_a_done_task_forgets_that_it_passed(room: Room) -> None:
    before = put(room, "done", "d")
    (room.state_dir("done") / "d.json").write_text(
        json.dumps(
            {**before, "passed_at": "2026-01-01T00:00:00Z", "done_at": "2026-01-02T00:00:00Z", "done_by": "a"}
        )
    )
    assert decisions.retry(room, "d") == "done"
    assert task_json(room, "queue", "d") == before


@pytest.mark.parametrize("state", ["rejected", "cancelled"])
def test_retry_from_rejected_or_cancelled(room: Room, state: str) -> None:
    put(room, state, "t", "why\n")
    assert decisions.retry(room, "t") == state
    assert where(room, "t") == ["queue"]
    assert lines_of(room, "retry") == [("t", "", "queued", f"from swarm/{state}/ by a person")]


def test_retry_refuses_a_queued_task_and_a_broken_one(room: Room) -> None:
    put(room, "queue", "q")
    with pytest.raises(errors.ConflictError) as queued:
        decisions.retry(room, "q")
    assert str(queued.value) == (
        "cannot retry q: it is in swarm/queue/, not in swarm/parked/ or swarm/rejected/ or swarm/cancelled/ "
        "or swarm/done/"
    )
    put(room, "parked", "b", falsifier="")
    with pytest.raises(errors.InvalidError) as broken:
        decisions.retry(room, "b")
    path = room.state_dir("parked") / "b.json"
    assert str(broken.value).startswith(f"cannot retry b: {path} is not a valid task: ")
    assert (where(room, "q"), where(room, "b"), entries(room, "retry")) == (["queue"], ["parked"], [])


# park and cancel --------------------------------------------------------------------------------


def test_park_moves_a_queued_task_with_the_persons_reason(room: Room) -> None:
    put(room, "queue", "q", route="r1")
    decisions.park(room, "q", "waiting for the new benchmark")
    assert where(room, "q") == ["parked"]
    assert re.fullmatch(
        rf"Parked by a person at {TIME}\.\n\nwaiting for the new benchmark\n", reason(room, "parked", "q")
    )
    assert lines_of(room, "park") == [("q", "r1", "parked", "waiting for the new benchmark")]


def test_park_without_a_reason_says_so_and_refuses_a_task_not_queued(room: Room) -> None:
    put(room, "queue", "q")
    decisions.park(room, "q", "")
    assert re.fullmatch(
        rf"Parked by a person at {TIME}\.\n\n\(no reason given\)\n", reason(room, "parked", "q")
    )
    assert lines_of(room, "park") == [("q", "", "parked", "by a person")]
    with pytest.raises(errors.ConflictError) as again:
        decisions.park(room, "q", "")
    assert str(again.value) == "cannot park q: it is in swarm/parked/, not in swarm/queue/"
    assert len(entries(room, "park")) == 1


@pytest.mark.parametrize("state", ["queue", "parked", "rejected"])
def test_cancel_from_each_folder_it_may_leave(room: Room, state: str) -> None:
    put(room, state, "t", "an old reason\n", route="r1")
    assert decisions.cancel(room, "t", "superseded") == state
    assert where(room, "t") == ["cancelled"] and list(room.state_dir(state).iterdir()) == []  # reason too
    assert re.fullmatch(
        rf"Cancelled at {TIME} from swarm/{state}/\.\n\nsuperseded\n", reason(room, "cancelled", "t")
    )
    assert lines_of(room, "cancel") == [("t", "r1", "cancelled", "superseded")]


def test_cancel_takes_even_a_broken_task_and_says_where_from_without_a_reason(room: Room) -> None:
    put(room, "rejected", "bad", "no falsifier\n", falsifier="")
    assert decisions.cancel(room, "bad", "") == "rejected"
    assert re.fullmatch(
        rf"Cancelled at {TIME} from swarm/rejected/\.\n\n\(no reason given\)\n",
        reason(room, "cancelled", "bad"),
    )
    assert lines_of(room, "cancel") == [("bad", "", "cancelled", "from swarm/rejected/")]


def test_cancel_of_a_running_task_points_at_stop(room: Room) -> None:
    put(room, "running", "busy")
    with pytest.raises(errors.ConflictError) as running:
        decisions.cancel(room, "busy", "")
    assert str(running.value) == (
        "cannot cancel busy: it is in swarm/running/, not in swarm/queue/ or swarm/parked/ or "
        "swarm/rejected/ (stop it first: `control-room stop`)"
    )
    assert where(room, "busy") == ["running"] and entries(room, "cancel") == []


def test_each_move_of_an_unknown_task_is_not_found(room: Room) -> None:
    for move in (
        lambda: decisions.retry(room, "nope"),
        lambda: decisions.park(room, "nope", ""),
        lambda: decisions.cancel(room, "nope", ""),
        lambda: decisions.mark_done(room, "nope", "alice"),
    ):
        with pytest.raises(errors.NotFoundError) as missing:
            move()
        assert str(missing.value) == f"no task nope in {room.swarm}"
    assert events(room.ledger) == ["init"]
