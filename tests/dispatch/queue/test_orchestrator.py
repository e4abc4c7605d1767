"""dispatch.queue.orchestrator: an empty queue runs one bounded orchestrator."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from support import entries, events, set_gate
from support import probe_task as task

from control_room import errors
from control_room.dispatch.queue import index, orchestrator
from control_room.dispatch.run import cycle
from control_room.knowledge import graveyard, routes
from control_room.room import settings
from control_room.room.layout import Room

PY = sys.executable


def proposals_command(tmp_path: Path, proposals: list[dict[str, Any]]) -> list[str]:
    script = tmp_path / "plan.py"
    blocks = "".join(f"```json\n{json.dumps(p)}\n```\n" for p in proposals)
    script.write_text(f"print({blocks!r})\n")
    return [PY, str(script)]


def test_an_empty_queue_runs_one_bounded_orchestrator_whose_proposals_are_validated(
    room: Room, tmp_path: Path
) -> None:
    graveyard.kill(room, "dead", "it was tried", "never", [])
    routes.add(room, "new", "a route a person added")
    proposals = [task("p-1", route="new"), task("p-2", route="dead"), {"objective": "a vibe"},
                 task("p-3"), task("p-4")]  # fmt: skip
    set_gate(room, "on_empty_queue", "orchestrate")
    set_gate(room, "max_new_tasks", "2")
    set_gate(room, "orchestrator_command", json.dumps(proposals_command(tmp_path, proposals)))
    result = cycle.cycle(room)
    assert result.code == errors.PASSED and result.task_id.startswith("orchestrate-")
    assert sorted(t.id for t in index.scan(room, "queue")) == ["p-1", "p-3"]
    refused = [line for line in room.ledger.read_text().splitlines() if "| proposal-refused |" in line]
    assert len(refused) == 3
    assert "route dead is killed" in refused[0]
    assert "missing falsifier" in refused[1]
    assert "over max_new_tasks (2)" in refused[2]
    assert cycle.cycle(room).task_id == "p-1"  # the room fed itself, one bounded step at a time


def test_a_parked_orchestrator_stops_orchestration_until_a_person_acts(room: Room, tmp_path: Path) -> None:
    bad = tmp_path / "plan.py"
    bad.write_text('print(\'```json\\n{"objective": "a vibe"}\\n```\')\n')
    set_gate(room, "on_empty_queue", "orchestrate")
    set_gate(room, "orchestrator_command", json.dumps([PY, str(bad)]))
    assert cycle.cycle(room).code == errors.FAILED  # only an invalid proposal: round 1
    assert cycle.cycle(room).code == errors.FAILED  # round 2: parked
    (parked,) = [t.id for t in index.scan(room, "parked")]
    assert parked.startswith("orchestrate-")
    assert cycle.cycle(room).code == errors.OK  # no new orchestrator while one is parked
    assert events(room.ledger).count("orchestrate-held") == 1
    assert not [t for t in index.scan(room, "queue")]


def test_an_orchestrator_that_proposes_nothing_passes(room: Room, tmp_path: Path) -> None:
    quiet = tmp_path / "plan.py"
    quiet.write_text("print('nothing is worth the money today')\n")
    set_gate(room, "on_empty_queue", "orchestrate")
    set_gate(room, "orchestrator_command", json.dumps([PY, str(quiet)]))
    assert cycle.cycle(room).code == errors.PASSED


def test_a_proposal_on_a_route_not_on_the_board_is_refused_and_the_orchestrator_has_its_own(
    room: Room, tmp_path: Path
) -> None:
    """An orchestrator cannot start a route: its proposal is refused in the words `task add`
    uses. Its own task's route, `orchestrate`, is put on the board on purpose, once."""
    routes.add(room, "loopy", "unroll the loop")
    proposals = [task("p-1", route="loppy"), task("p-2", route="loopy")]
    set_gate(room, "on_empty_queue", "orchestrate")
    set_gate(room, "orchestrator_command", json.dumps(proposals_command(tmp_path, proposals)))
    result = cycle.cycle(room)
    assert result.code == errors.PASSED
    assert [t.id for t in index.scan(room, "queue")] == ["p-2"]
    (refused,) = entries(room, "proposal-refused")
    assert refused.detail == (
        f"proposal at line 1 of {result.task_id}'s answer: task refused: no route loppy in "
        "control-room/ROUTES.md (did you mean loopy?); add it with `control-room route add loppy "
        "--title ...` or pass --new-route"
    )
    (added,) = [e for e in entries(room, "route-add") if e.route == "orchestrate"]
    assert added.detail == f"{orchestrator.TITLE} (for task {result.task_id})"
    assert routes.find(room, "orchestrate") is not None


def test_a_proposal_may_depend_on_one_before_it_never_on_nothing(room: Room) -> None:
    blocks = [task("p-1"), task("p-2", deps=["p-1"]), task("p-3", deps=["p-9"]), task("p-9")]
    text = "".join(f"```json\n{json.dumps(p)}\n```\n" for p in blocks)
    queued, refused = orchestrator.accept(room, settings.load(room), "orchestrate-1", text)
    assert queued == ["p-1", "p-2", "p-9"]
    assert refused == [
        "proposal at line 7 of orchestrate-1's answer: task refused: deps names p-9, which is not a "
        "task in any swarm folder: it could never be ready"
    ]


def test_a_proposal_may_fan_out_into_slices(room: Room) -> None:
    slices = [{"title": "docs", "objective": "write the README", "owns": ["README.md"]},
              {"title": "code", "objective": "add the parser", "owns": ["src"]}]  # fmt: skip
    text = f"```json\n{json.dumps({**task('ship'), 'slices': slices})}\n```\n"
    queued, refused = orchestrator.accept(room, settings.load(room), "orchestrate-1", text)
    assert (queued, refused) == (["ship", "ship-docs", "ship-code"], [])
    parent = json.loads((room.state_dir("queue") / "ship.json").read_text())
    assert parent["deps"] == ["ship-docs", "ship-code"]
    child = json.loads((room.state_dir("queue") / "ship-docs.json").read_text())
    assert (child["owns"], child["fanout_of"], child["brief"]) == (
        ["README.md"],
        "ship",
        "docs: write the README",
    )


def test_a_proposed_fan_out_with_the_same_brief_twice_is_refused_and_nothing_is_queued(room: Room) -> None:
    slices = [{"title": "a", "objective": "do it"}, {"title": "b", "objective": "Do  it"}]
    text = f"```json\n{json.dumps({**task('ship'), 'slices': slices})}\n```\n"
    queued, refused = orchestrator.accept(room, settings.load(room), "orchestrate-1", text)
    assert queued == [] and len(refused) == 1 and "the same" in refused[0]
    assert not (room.state_dir("queue") / "ship.json").exists()


def test_a_proposed_slice_of_the_wrong_kind_is_refused_not_a_crash(room: Room) -> None:
    """Found by the fuzz tests: `"owns": 1` in an orchestrator's slice raised a TypeError out of
    the cycle that read its answer (an agent could crash the dispatcher)."""
    other = {"title": "b", "objective": "do b"}
    for bad, why in (
        ({"owns": 1}, "a slice's owns must be a list of paths"),
        ({"owns": [1]}, "a slice's owns must be a list of paths"),
        ({"validator": {"x": 1}}, "a slice's validator must be a command: a string or a list of strings"),
    ):
        slices = [{"title": "a", "objective": "do a", **bad}, other]
        text = f"```json\n{json.dumps({**task('ship'), 'slices': slices})}\n```\n"
        queued, refused = orchestrator.accept(room, settings.load(room), "orchestrate-1", text)
        assert (queued, refused) == ([], [f"proposal at line 1 of orchestrate-1's answer: {why}"])
    assert not (room.state_dir("queue") / "ship.json").exists()
