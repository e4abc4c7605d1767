"""dispatch.run.finish: a finished run written down: its cost, its metrics, its commit, where it goes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support import events, git, queue, task_json, where

from control_room import errors
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


def test_a_passing_run_with_work_commits_it_and_waits_for_the_merge_queue(room: Room, repo: Path) -> None:
    queue(room, "t1", route="r1", command=["sh", "-c", "echo x > new.txt"], validator="test -f new.txt")
    result = cycle.cycle(room)
    assert result.code == errors.PASSED and result.merge == "t1"
    assert result.message.endswith("; waits in swarm/passed/ for `control-room integrate`")
    assert where(room, "t1") == ["passed"]
    meta = json.loads((room.swarm / "results" / "t1" / "meta.json").read_text())
    log = git(room.cr / "worktrees" / "route-r1", "log", "-1", "--format=%H%n%B")
    assert log.splitlines()[0] == meta["commit"]
    assert log.splitlines()[1:] == [
        "t1: objective of t1",
        "",
        "control-room task t1, route r1, round 1, adapter probe",
    ]


def test_a_failed_run_is_logged_then_goes_back_with_what_failed(room: Room) -> None:
    queue(room, "t1", validator=["sh", "-c", "echo nope; exit 3"])
    result = cycle.cycle(room)
    assert result.code == errors.FAILED
    assert events(room.ledger)[-2:] == ["claim", "result"]
    back = task_json(room, "queue", "t1")
    assert back["rounds"] == 1 and back["last_failure"].startswith("validator exited 3")
    meta = json.loads((room.swarm / "results" / "t1" / "meta.json").read_text())
    assert (meta["verdict"], meta["failures"]) == ("fail", [back["last_failure"]])
