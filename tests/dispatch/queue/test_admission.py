"""dispatch.queue.admission: may a task enter the queue, may it run, with what env and flags."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from support import data_lines, events, queue, task

from control_room import errors
from control_room.dispatch.queue import admission
from control_room.dispatch.run import cycle
from control_room.errors import InvalidError, QueueFullError
from control_room.knowledge import routes
from control_room.room import settings, swarm
from control_room.room.layout import Room

PY = sys.executable
FAKES = Path(__file__).resolve().parents[2] / "fakes"


def test_add_writes_the_task_and_one_ledger_line(room: Room) -> None:
    routes.add(room, "r1", "route one")
    before = events(room.ledger)
    written = admission.add(room, settings.load(room), {**task("t1"), "route": "r1", "deps": []})
    path = room.state_dir("queue") / "t1.json"
    on_disk = json.loads(path.read_text())
    assert on_disk == written and "deps" not in written and written["route"] == "r1"
    assert list(on_disk)[:2] == ["id", "objective"]  # schema order, readable
    assert events(room.ledger) == [*before, "task-add"]
    assert swarm.locate(room, "t1") == ("queue", path)


def test_add_refuses_an_existing_id_in_any_state(room: Room) -> None:
    (room.state_dir("done") / "t1.json").write_text(json.dumps(task("t1")))
    with pytest.raises(InvalidError) as err:
        admission.add(room, settings.load(room), task("t1"))
    assert (
        str(err.value)
        == "task refused: task t1 exists already (swarm/done/t1.json); ids are unique: give this one a new id"
    )


def test_add_refuses_a_cost_above_the_gate(room: Room) -> None:
    with pytest.raises(InvalidError) as err:
        admission.add(room, settings.load(room), task("t1", max_cost_usd=2.5))
    assert str(err.value) == ("task refused: max_cost_usd 2.5 is above CONTROL.md max_task_cost_usd 2.0")


def test_add_refuses_when_the_queue_is_full(room: Room) -> None:
    text = room.control.read_text()
    room.control.write_text(text.replace("max_queued: 10000", "max_queued: 1"))
    admission.add(room, settings.load(room), task("t1"))
    lines = data_lines(room.ledger)
    with pytest.raises(QueueFullError) as err:
        admission.add(room, settings.load(room), task("t2"))
    assert str(err.value) == (
        "task refused: the queue is full (1 task, CONTROL.md max_queued 1); nothing was written"
    )
    assert os.listdir(room.state_dir("queue")) == ["t1.json"]
    assert data_lines(room.ledger) == lines


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"adapter": "nope"}, "task refused: unknown adapter 'nope' (valid: "),
        ({"role": "wizard"}, "task refused: role 'wizard' has no prompt: "),
        ({"command": None}, "task refused: task t: `command` (the probe runs it) is missing"),
        (
            {"extra_args": ["--yolo"]},
            "task refused: extra_args given but CONTROL.md allow_extra_args is false",
        ),
    ],
)
def test_task_add_refuses_what_a_cycle_would_refuse(room: Room, fields: dict[str, Any], message: str) -> None:
    data = {"id": "t", "objective": "o", "falsifier": "f", "validator": "true", "max_cost_usd": 0.1,
            "wall_clock_s": 60, "kill_condition": "k", "command": "true", **fields}  # fmt: skip
    data = {k: v for k, v in data.items() if v is not None}
    if fields.get("role") == "wizard":
        data.pop("adapter", None)
    with pytest.raises(InvalidError) as err:
        admission.add(room, settings.load(room), data)
    assert str(err.value).startswith(message)
    assert not list(room.state_dir("queue").iterdir())


def test_a_queued_file_with_an_id_that_exists_elsewhere_is_rejected(room: Room) -> None:
    queue(room, "twice")
    assert cycle.cycle(room).code == errors.PASSED
    queue(room, "twice")
    assert cycle.cycle(room).code == errors.OK  # nothing ran
    assert swarm.locate(room, "twice")[0] == "done"
    reason = (room.state_dir("rejected") / "twice.json.reason").read_text()
    assert (
        "- task twice exists already (swarm/done/twice.json); ids are unique: give this one a new id\n"
        in reason
    )


def test_the_probe_gets_the_minimal_environment_and_env_allow_widens_it(
    room: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SECRET_TOKEN", "do-not-leak")
    monkeypatch.setenv("MY_SETTING", "mine")
    monkeypatch.setenv("HOME", "/home/someone")
    monkeypatch.setenv("LANG", "C.UTF-8")
    monkeypatch.delenv("LANGUAGE", raising=False)
    show = "import os; print(sorted(k for k in os.environ if not k.startswith('LC_')))"
    queue(room, "envy", command=[PY, "-c", show])
    assert cycle.cycle(room).code == errors.PASSED
    out = (room.swarm / "results" / "envy" / "stdout.txt").read_text()
    ours = {k for k in os.environ if k.startswith("CONTROL_ROOM_")}  # CI sets CONTROL_ROOM_REQUIRE_*
    minimal = sorted(
        {"CONTROL_ROOM", "CONTROL_ROOM_TASK", "CONTROL_ROOM_WRITER", "HOME", "LANG", "PATH"} | ours
    )
    assert out == f"{minimal}\n"  # never the whole environment: no SECRET_TOKEN, no MY_SETTING
    text = room.control.read_text().replace("env_allow: []", "env_allow: [MY_SETTING]")
    room.control.write_text(text)
    queue(room, "envy2", command=[PY, "-c", show])
    assert cycle.cycle(room).code == errors.PASSED
    out = (room.swarm / "results" / "envy2" / "stdout.txt").read_text()
    assert out == f"{sorted([*minimal, 'MY_SETTING'])}\n"


def test_allowed_extra_args_reach_the_agent_last(
    room: Room, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv("PATH", f"{FAKES}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_AGENT_LOG", str(log))
    text = room.control.read_text().replace("allow_extra_args: false", "allow_extra_args: true")
    room.control.write_text(text.replace("env_allow: []", "env_allow: [FAKE_AGENT_LOG]"))
    queue(room, "bypass", adapter="claude", command=None, extra_args=["--permission-mode", "acceptEdits"])
    cycle.cycle(room)
    (call,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert call["argv"][-2:] == ["--permission-mode", "acceptEdits"]
    meta = json.loads((room.swarm / "results" / "bypass" / "meta.json").read_text())
    assert (meta["input_tokens"], meta["output_tokens"], meta["cost_usd"]) == (1200, 345, 0.0123)
    assert meta["prompt_tokens_est"] == -(-len((room.swarm / "outbox" / "bypass.md").read_text()) // 4)


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"extra_args": ["--yolo"]}, "extra_args given but CONTROL.md allow_extra_args is false"),
        ({"max_cost_usd": 5}, "max_cost_usd 5 is above CONTROL.md max_task_cost_usd 2.0"),
        ({"adapter": "nope", "command": None}, "unknown adapter 'nope' (valid: "),
        ({"deps": ["same"]}, "deps names same itself: it could never be ready"),
    ],
)
def test_one_wording_whoever_asks(room: Room, fields: dict[str, Any], reason: str) -> None:
    """`task add` and the cycle refuse the same task with the same words."""
    data = {k: v for k, v in {**task("same"), **fields}.items() if v is not None}
    with pytest.raises(InvalidError) as err:
        admission.add(room, settings.load(room), data)
    assert str(err.value).startswith(f"task refused: {reason}")
    queue(room, "same", **fields)
    assert cycle.cycle(room).code == errors.OK  # nothing ran: the file was rejected
    written = (room.state_dir("rejected") / "same.json.reason").read_text().splitlines()[2]
    assert written.startswith(f"- {reason}")
    assert written[2:] == str(err.value).removeprefix("task refused: ")


def test_the_queue_scan_checks_the_file_only(room: Room) -> None:
    """Stage QUEUED needs no settings and does not resolve the role or the adapter."""
    t, problems = swarm.read_task(queue(room, "t1", adapter="nope", role="wizard"))
    assert problems == []
    assert admission.admit(room, t, admission.Stage.QUEUED) is None
    with pytest.raises(admission.Refused) as err:
        admission.admit(room, {**t, "deps": ["t1"]}, admission.Stage.QUEUED)
    assert str(err.value) == "deps names t1 itself: it could never be ready"
    with pytest.raises(TypeError):
        admission.admit(room, t, admission.Stage.RUN)  # running needs the settings


def test_a_task_in_the_queue_is_not_taken_by_itself_but_a_new_one_is(room: Room) -> None:
    t, _ = swarm.read_task(queue(room, "t1"))
    assert admission.admit(room, t, admission.Stage.QUEUED) is None  # its own file is no clash
    with pytest.raises(admission.Refused) as err:
        admission.admit(room, t, admission.Stage.NEW, settings.load(room))
    assert (
        str(err.value)
        == "task t1 exists already (swarm/queue/t1.json); ids are unique: give this one a new id"
    )
