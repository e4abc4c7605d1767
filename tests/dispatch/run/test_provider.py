"""dispatch.run.provider: a refused run goes back to the queue without a round, one ledger line,
its adapter and model cooling."""

from __future__ import annotations

import json

from support import entries, probe_task

from control_room import errors
from control_room.adapters.faults import Fault
from control_room.dispatch.queue.pick import Pick
from control_room.dispatch.queue.resolve import resolve
from control_room.dispatch.run.provider import refused
from control_room.room import cooldowns, settings, swarm
from control_room.room.layout import Room


def test_a_refused_run_uses_no_round_and_cools_its_adapter(room: Room) -> None:
    t = probe_task("t1", rounds=1, model="m1")
    (room.state_dir("running") / "t1.json").write_text(json.dumps(t))
    picked = Pick(t, resolve(room, settings.load(room), t))
    said = refused(room, picked, Fault("overloaded", "API Error: 529 overloaded", None))
    assert said.code == errors.PROVIDER and said.task_id == "t1"
    back, _ = swarm.read_task(swarm.task_file(room, "queue", "t1"))
    assert back["rounds"] == 1
    (line,) = entries(room, "provider-fault")
    assert (line.task, line.adapter, line.outcome) == ("t1", "probe", "requeued")
    assert "back-off after 1 in a row" in line.detail and line.detail.endswith("API Error: 529 overloaded")
    assert list(cooldowns.active(room)) == ["probe/m1"]
