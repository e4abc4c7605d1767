"""dispatch.run.cycle: a room problem after the claim requeues; recovery rejects a broken file."""

from __future__ import annotations

import json
import os

import pytest
from support import events, queue

from control_room import errors
from control_room.dispatch.run import cycle
from control_room.errors import ControlRoomError
from control_room.room import swarm
from control_room.room.layout import Room


def test_a_room_problem_after_the_claim_puts_the_task_back(room: Room) -> None:
    queue(room, "t")
    (room.root / "skills" / "report-format.md").unlink()
    with pytest.raises(ControlRoomError) as raised:
        cycle.cycle(room)
    assert raised.value.exit_code == errors.INVALID
    assert str(raised.value).startswith("room fault while t ran: ")
    assert str(raised.value).endswith("; t is back in the queue, no round used")
    assert swarm.locate(room, "t")[0] == "queue"
    assert "rounds" not in json.loads((room.state_dir("queue") / "t.json").read_text())
    assert events(room.ledger)[-1] == "requeue"


def test_an_invalid_task_left_in_running_is_rejected_even_when_its_name_is_taken(room: Room) -> None:
    (room.state_dir("rejected") / "broken.json").write_text("an older rejection\n")
    (room.state_dir("running") / "broken.json").write_text('{"objective": "half written')
    assert cycle.cycle(room).code == errors.OK
    assert sorted(os.listdir(room.state_dir("running"))) == []
    assert (room.state_dir("rejected") / "broken.json").read_text() == "an older rejection\n"
    reason = (room.state_dir("rejected") / "broken.json.2.reason").read_text()
    assert reason.startswith("Rejected from swarm/running/broken.json at ")
    assert events(room.ledger)[-1] == "reject"
