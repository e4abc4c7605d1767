"""control_room.room.swarm: task file paths, locating a task, rejected files never clobbered."""

from __future__ import annotations

import os

import pytest
from support import drop

from control_room.dispatch.queue import index
from control_room.errors import InvalidError, NotFoundError
from control_room.room import swarm
from control_room.room.layout import Room


@pytest.mark.parametrize("bad", ["../x", "a/b", "/etc", "..", "x/../../y"])
def test_task_file_refuses_a_path_as_id(room: Room, bad: str) -> None:
    with pytest.raises(InvalidError) as err:
        swarm.task_file(room, "queue", bad)
    assert str(err.value) == f"{bad!r} is not a task id (ids match [a-z0-9][a-z0-9._-]{{0,63}})"


def test_task_file_of_a_good_id(room: Room) -> None:
    assert swarm.task_file(room, "done", "t1") == room.root / "swarm" / "done" / "t1.json"


def test_locate_a_missing_task(room: Room) -> None:
    with pytest.raises(NotFoundError) as err:
        swarm.locate(room, "ghost")
    assert str(err.value) == f"no task ghost in {room.root / 'swarm'}"


def test_a_rejected_name_that_exists_already_gets_a_free_name(room: Room) -> None:
    drop(room, "t.json", "{")
    index.scan(room, "queue")
    drop(room, "t.json", "[")
    index.scan(room, "queue")
    assert sorted(os.listdir(room.state_dir("rejected"))) == [
        "t.json", "t.json.2", "t.json.2.reason", "t.json.reason",
    ]  # fmt: skip
    assert (room.state_dir("rejected") / "t.json.2").read_text() == "["


def test_folders_lists_each_state_once_and_knows_only_task_files(room: Room) -> None:
    (room.state_dir("queue") / "q.json").write_text("{}")
    (room.state_dir("running") / "r.json").write_text("{}")
    (room.state_dir("running") / "r.claim").write_text("{}")
    (room.state_dir("done") / "d.json").write_text("{}")
    (room.state_dir("rejected") / "x.json.2").write_text("{")
    (room.state_dir("rejected") / "x.json.2.reason").write_text("why")
    (room.state_dir("parked") / ".p.json").write_text("{}")  # hidden: not a task
    folders = swarm.Folders(room)
    assert [folders.state_of(t) for t in ("q", "r", "d", "x", "p", "r.claim")] == [
        "queue", "running", "done", None, None, None,
    ]  # fmt: skip
    (room.state_dir("done") / "late.json").write_text("{}")
    assert folders.state_of("late") is None  # a snapshot: one listing per folder
    assert swarm.Folders(room).state_of("late") == "done"
