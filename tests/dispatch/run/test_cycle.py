"""dispatch.run.cycle: a room problem after the claim requeues; recovery rejects a broken file, and
leaves alone a task whose cycle finished while recovery looked."""

from __future__ import annotations

import json
import os

import pytest
from support import events, queue, written

from control_room import errors
from control_room.dispatch.round import claims
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


def test_a_task_whose_cycle_finished_while_recovery_looked_is_left_alone(
    room: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another cycle's finish, between recovery's listing of running/ and its look at the claim:
    # the task moves to done/, its claim goes, its slot is freed; so the claim looks dead.
    t = json.loads(queue(room, "t").read_text())
    written(room, "running", t)
    claims.write_claim(room, "t", {"pid": os.getpid(), "host": claims.host(room), "slot": 3})
    seen = claims.why_dead

    def finished_meanwhile(*args: object, **kwargs: object) -> str | None:
        if (room.state_dir("running") / "t.json").exists():
            swarm.move(room, "t", "running", "done")
            claims.release(room, "t")
        return seen(*args, **kwargs)  # type: ignore[arg-type]

    (room.state_dir("queue") / "t.json").unlink()
    monkeypatch.setattr(claims, "why_dead", finished_meanwhile)
    before = events(room.ledger)
    settings = cycle.settings_file.load(room)
    assert cycle.recover(room, settings, mine=0) == []  # nothing recovered, nothing rejected
    assert swarm.locate(room, "t")[0] == "done"
    assert events(room.ledger) == before
