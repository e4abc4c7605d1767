"""control_room.knowledge.findings: a death loop is reported and holds its route until resumed."""

from __future__ import annotations

import sys

import pytest
from support import drop_task as drop
from support import events, set_gate
from support import probe_task as task

from control_room import errors
from control_room.dispatch.run import cycle
from control_room.knowledge import findings
from control_room.room import settings as control
from control_room.room import swarm
from control_room.room.layout import Room

PY = sys.executable


def test_three_identical_failures_hold_the_route_until_a_person_acts(room: Room) -> None:
    set_gate(room, "max_rounds", "1")
    bad = [PY, "-c", "import sys; print('assert 41 == 42'); sys.exit(1)"]
    for n in range(3):
        drop(room, task(f"f-{n}", route="loopy", validator=bad))
        assert cycle.cycle(room).code == errors.FAILED
    gate = control.load(room)
    loops = findings.gather(room, gate)["death_loops"]
    assert [(lp["key"], lp["n"], lp["same"]) for lp in loops] == [("loopy", 3, "error")]
    assert [line[2] for line in loops[0]["lines"]] == ["f-0", "f-1", "f-2"]
    assert events(room.ledger).count("death-loop") == 1
    drop(room, task("f-3", route="loopy"))
    assert cycle.cycle(room).code == errors.OK  # held: fail closed
    assert swarm.locate(room, "f-3")[0] == "queue"
    assert "route-held" in events(room.ledger)
    findings.resume(room, gate, "loopy", "fixed the off-by-one in the validator")
    assert cycle.cycle(room).task_id == "f-3"
    assert findings.gather(room, gate)["death_loops"] == []


def test_resuming_a_route_that_is_not_held_is_refused_in_one_line(room: Room) -> None:
    """Found by the fuzz tests: the id as given, a line break in it, split the refusal."""
    with pytest.raises(errors.ConflictError) as err:
        findings.resume(room, control.load(room), "a\nb", "x")
    assert str(err.value) == "a\\nb is not held: no death loop on it"
