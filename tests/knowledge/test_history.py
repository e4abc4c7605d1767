"""control_room.knowledge.history: only identical failures in a row make a death loop."""

from __future__ import annotations

import sys

from support import drop_task as drop
from support import probe_task as task
from support import set_gate

from control_room.dispatch import cycle
from control_room.knowledge import findings
from control_room.room import settings as control
from control_room.room.layout import Room

PY = sys.executable


def test_three_different_probe_failures_are_not_a_death_loop(room: Room) -> None:
    set_gate(room, "max_rounds", "1")
    for n in range(3):  # the probe's DECISION is always "the command exited 1": not a decision
        drop(room, task(f"v-{n}", route="varied",
                        validator=[PY, "-c", f"import sys; print('case {chr(97 + n)}'); sys.exit(1)"]))  # fmt: skip
        cycle.cycle(room)
    assert findings.gather(room, control.load(room))["death_loops"] == []
