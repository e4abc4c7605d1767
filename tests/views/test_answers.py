"""control_room.views.answers: the data behind task list, task show and route show (and the MCP
tools of the same names): what each holds, in which order, and the refusals."""

from __future__ import annotations

import pytest
from support import queue

from control_room.errors import InvalidError, NotFoundError
from control_room.knowledge import graveyard, routes
from control_room.room import swarm
from control_room.room.layout import Room
from control_room.views import answers


def test_task_rows_give_the_queue_in_run_order_then_other_states(room: Room) -> None:
    queue(room, "b-low", priority=1)
    queue(room, "a-high", priority=9)
    queue(room, "c-done")
    swarm.move(room, "c-done", "queue", "done")
    assert [(t.state, t.id) for t in answers.task_rows(room)] == [
        ("queue", "a-high"),
        ("queue", "b-low"),
        ("done", "c-done"),
    ]
    assert [t.id for t in answers.task_rows(room, ("done",))] == ["c-done"]
    row = answers.task_row(answers.task_rows(room, ("done",))[0])
    assert (row["state"], row["file"], row["id"]) == ("done", "c-done.json", "c-done")


def test_task_rows_refuse_an_unknown_state(room: Room) -> None:
    with pytest.raises(InvalidError) as err:
        answers.task_rows(room, ["queue", "finished"])
    assert str(err.value) == (
        "unknown state 'finished': one of queue, running, passed, to-test, done, parked, rejected, cancelled"
    )


def test_task_detail_holds_the_text_and_the_reason(room: Room) -> None:
    path = queue(room, "t1")
    shown = answers.task_detail(room, "t1")
    assert (shown.state, shown.path, shown.text, shown.reason) == ("queue", path, path.read_text(), None)
    assert shown.as_dict()["task"]["id"] == "t1"
    swarm.reason_path(path).write_text("because\n", encoding="utf-8")
    assert answers.task_detail(room, "t1").reason == "because\n"
    path.write_text("{not json", encoding="utf-8")
    assert answers.task_detail(room, "t1").as_dict()["task"] == "{not json"  # raw text, not a crash
    with pytest.raises(NotFoundError):
        answers.task_detail(room, "nope")


def test_route_detail_of_a_live_a_dead_and_a_missing_route(room: Room) -> None:
    routes.add(room, "r1", "first route")
    queue(room, "t1", route="r1")
    queue(room, "t2", route="other")
    shown = answers.route_detail(room, "r1")
    assert shown["route"]["title"] == "first route"
    assert (shown["tasks"], shown["tombstone"], shown["tombstone_problem"]) == ([("queue", "t1")], None, None)
    tomb = graveyard.path(room, "r1")
    tomb.write_text("---\nroute: [\n---\n", encoding="utf-8")
    shown = answers.route_detail(room, "r1")
    assert shown["tombstone"] == str(tomb)
    assert shown["tombstone_problem"].startswith(f"{tomb}: line ")
    with pytest.raises(NotFoundError) as err:
        answers.route_detail(room, "r9")
    assert str(err.value) == "no route r9 in control-room/ROUTES.md or graveyard/"
