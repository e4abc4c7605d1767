"""dispatch.round.outcome: a failed round goes back with what failed or is parked after
the last; going back without a round writes one line, or none when the task has left."""

from __future__ import annotations

from support import events, probe_task, set_gate, task_json, where

from control_room.dispatch.round import claims, outcome
from control_room.ledger import events as ledger_events
from control_room.room import settings, swarm
from control_room.room.layout import Room


def running(room: Room, task_id: str, **fields: object) -> dict[str, object]:
    """A task claimed by hand: its file in running/ and a claim file beside it."""
    task = probe_task(task_id, **fields)
    (room.state_dir("running") / f"{task_id}.json").write_text(swarm.dumps(task))
    claims.write_claim(room, task_id, {"pid": 1, "host": "elsewhere", "slot": 0})
    return task


def test_a_failed_round_goes_back_with_what_failed_for_the_next_brief(room: Room) -> None:
    task = running(room, "t1")
    where_to = outcome.fail_round(room, settings.load(room), task, "validator exited 1", src="running")
    assert where_to == "back in the queue for round 2 of 2"
    assert where(room, "t1") == ["queue"]
    back = task_json(room, "queue", "t1")
    assert (back["rounds"], back["last_failure"]) == (1, "validator exited 1")
    assert claims.read_claim(room, "t1") is not None  # its caller removes it last (finish.failed)
    assert events(room.ledger)[-1] == "init"  # a failed round back to the queue writes no line


def test_the_last_failed_round_parks_the_task_with_its_reason(room: Room) -> None:
    set_gate(room, "max_rounds", "1")
    task = running(room, "t1", route="r1")
    where_to = outcome.fail_round(room, settings.load(room), task, "broken report", src="running")
    assert where_to == "parked for a person (swarm/parked/)"
    assert where(room, "t1") == ["parked"]
    reason = (room.state_dir("parked") / "t1.reason").read_text()
    assert "after 1 failed round (CONTROL.md max_rounds 1).\n\nLast failure:\nbroken report\n" in reason
    assert "control-room task retry t1" in reason
    assert events(room.ledger)[-1] == "park"


def test_requeue_puts_the_task_back_without_a_round_and_writes_one_line(room: Room) -> None:
    task = running(room, "t1", route="r1")
    assert outcome.requeue(room, task, ledger_events.REQUEUE, "not run: disk full") is True
    assert where(room, "t1") == ["queue"]
    assert "rounds" not in task_json(room, "queue", "t1")
    assert events(room.ledger)[-1] == "requeue"
    assert outcome.requeue(room, task, ledger_events.REQUEUE, "again") is False  # it left running/
    assert events(room.ledger).count("requeue") == 1
