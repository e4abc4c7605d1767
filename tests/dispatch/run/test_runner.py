"""dispatch.run.runner: a run costing more than its task's ceiling is logged."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support import events, queue

from control_room.dispatch.run import cycle
from control_room.room.layout import Room

FAKES = Path(__file__).resolve().parents[2] / "fakes"


def test_a_run_that_costs_more_than_its_ceiling_is_logged(
    room: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{FAKES}{os.pathsep}{os.environ['PATH']}")
    queue(room, "pricey", adapter="claude", command=None, max_cost_usd=0.01)  # the fake claude costs 0.0123
    cycle.cycle(room)
    assert "cost-overrun" in events(room.ledger)
    meta = json.loads((room.swarm / "results" / "pricey" / "meta.json").read_text())
    assert meta["cost_usd"] == 0.0123


def test_without_a_setup_no_state_folder_is_made(room: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{FAKES}{os.pathsep}{os.environ['PATH']}")
    queue(room, "plain", adapter="claude", command=None)
    cycle.cycle(room)
    assert not (room.cr / ".adapters").exists()


def test_a_runs_metrics_reach_its_meta_and_its_result_line(room: Room) -> None:
    import sys

    from support import entries

    from control_room.ledger import result

    queue(room, "m1", validator=[sys.executable, "-c", "print('METRIC speedup=1.4')"])
    cycle.cycle(room)
    meta = json.loads((room.swarm / "results" / "m1" / "meta.json").read_text())
    assert meta["metrics"] == {"speedup": 1.4}
    (line,) = entries(room, "result")
    assert result.read(line.detail).metrics == {"speedup": 1.4}
