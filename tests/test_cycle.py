"""The cycle's decisions, run in-process on real files and real processes: the queue order
index, readiness (budget, adapters), what task add refuses up front, requeue on a room
problem, recovery's care not to kill a stranger, cost overruns."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from support import events, queue

from control_room import errors
from control_room.dispatch import admission, claims, cycle, index
from control_room.errors import InvalidError
from control_room.room import settings, swarm
from control_room.room.layout import Room

PY = sys.executable
FAKES = Path(__file__).parent / "fakes"


def order(room: Room) -> list[str]:
    return [t.id for t in index.run_order(room)]


def test_run_order_trusts_its_index_briefly_then_checks_every_file(room: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    queue(room, "a", priority=1)
    queue(room, "b", priority=0)
    assert order(room) == ["a", "b"]  # a full check: every file read
    path = room.state_dir("queue") / "b.json"
    task = json.loads(path.read_text())
    task["priority"] = 5
    with open(path, "r+") as f:  # edited in place, as some editors do
        f.seek(0)
        f.write(json.dumps(task))
        f.truncate()
    queue(room, "c", priority=3)  # a new name is always read
    assert order(room) == ["c", "a", "b"]  # b's new priority not seen yet: index trusted
    monkeypatch.setattr(time, "time", lambda real=time.time: real() + index.RECHECK_S + 1)
    assert order(room) == ["b", "c", "a"]  # past RECHECK_S: every file checked again


def test_a_stale_index_never_runs_a_task_its_file_no_longer_allows(room: Room) -> None:
    queue(room, "dep")
    path = queue(room, "t", priority=9)
    assert order(room)[0] == "t"
    task = json.loads(path.read_text())
    task["deps"] = ["dep"]  # now it must wait for dep
    with open(path, "r+") as f:
        f.seek(0)
        f.write(json.dumps(task))
        f.truncate()
    result = cycle.cycle(room)
    assert (result.code, result.task_id) == (errors.PASSED, "dep")


def test_a_queued_file_with_an_id_that_exists_elsewhere_is_rejected(room: Room) -> None:
    queue(room, "twice")
    assert cycle.cycle(room).code == errors.PASSED
    queue(room, "twice")
    assert cycle.cycle(room).code == errors.OK  # nothing ran
    assert swarm.locate(room, "twice")[0] == "done"
    reason = (room.state_dir("rejected") / "twice.json.reason").read_text()
    assert "- task twice exists already in swarm/done/ (ids are unique: give this one a new id)\n" in reason


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"adapter": "nope"}, "task refused: unknown adapter 'nope' (valid: "),
        ({"role": "wizard"}, "task refused: role 'wizard' has no prompt: "),
        ({"command": None}, "task refused: task t: `command` (the probe runs it) is missing"),
        ({"extra_args": ["--yolo"]}, "task refused: extra_args given but CONTROL.md allow_extra_args is false"),
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


def test_a_missing_adapter_holds_its_task_and_the_next_one_runs(room: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(Path(PY).parent))  # python, but no claude
    queue(room, "needs-claude", adapter="claude", priority=5, command=None)
    queue(room, "plain")
    first = cycle.cycle(room)
    assert (first.code, first.task_id) == (errors.PASSED, "plain")
    second = cycle.cycle(room)
    assert second.code == errors.ADAPTER_MISSING
    assert swarm.locate(room, "needs-claude")[0] == "queue"
    assert events(room.ledger).count("adapter-missing") == 1  # logged once a day, not per cycle


def test_running_tasks_reserve_their_cost_against_the_budget(room: Room) -> None:
    room.control.write_text(room.control.read_text().replace("daily_budget_usd: 10.0", "daily_budget_usd: 1.0"))
    queue(room, "other", max_cost_usd=0.6)
    running = queue(room, "busy", max_cost_usd=0.6)
    os.rename(running, room.state_dir("running") / "busy.json")
    claims.write_claim(room, "busy", {"pid": os.getpid(), "host": claims.host(), "slot": 7,
                                      "deadline": time.time() + 600})  # fmt: skip
    held = os.open(room.cr / ".slot-7.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(held, fcntl.LOCK_EX)  # the cycle running "busy" is alive and holds its slot
    try:
        result = cycle.cycle(room)
    finally:
        os.close(held)
    assert result.code == errors.OK
    assert "BUDGET_HOLD" in events(room.ledger)


def test_a_room_problem_after_the_claim_puts_the_task_back(room: Room) -> None:
    queue(room, "t")
    (room.root / "skills" / "report-format.md").unlink()
    with pytest.raises(InvalidError):
        cycle.cycle(room)
    assert swarm.locate(room, "t")[0] == "queue"
    assert "rounds" not in json.loads((room.state_dir("queue") / "t.json").read_text())
    assert events(room.ledger)[-1] == "requeue"


def test_recovery_kills_only_a_process_group_that_is_provably_the_task_agent() -> None:
    env = {**os.environ, "CONTROL_ROOM_TASK": "mine"}
    stranger = subprocess.Popen([PY, "-c", "import time; time.sleep(60)"], start_new_session=True)
    agent = subprocess.Popen([PY, "-c", "import time; time.sleep(60)"], start_new_session=True, env=env)
    try:
        here = claims.host()
        assert claims.kill_agent({"host": here, "agent_pgid": stranger.pid}, "mine") is False
        assert claims.kill_agent({"host": "elsewhere", "agent_pgid": agent.pid}, "mine") is False
        assert claims.kill_agent({"host": here, "agent_pgid": agent.pid}, "mine") is True
        assert agent.wait(timeout=10) == -9
        assert stranger.poll() is None
    finally:
        stranger.kill()
        agent.kill()
        stranger.wait()
        agent.wait()


def test_a_run_that_costs_more_than_its_ceiling_is_logged(room: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{FAKES}{os.pathsep}{os.environ['PATH']}")
    queue(room, "pricey", adapter="claude", command=None, max_cost_usd=0.01)  # the fake claude costs 0.0123
    cycle.cycle(room)
    assert "cost-overrun" in events(room.ledger)
    meta = json.loads((room.swarm / "results" / "pricey" / "meta.json").read_text())
    assert meta["cost_usd"] == 0.0123


def test_env_allow_limits_what_the_agent_sees(room: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SECRET_TOKEN", "do-not-leak")
    text = room.control.read_text().replace("env_allow: []", "env_allow: [PATH]")
    room.control.write_text(text)
    show = "import os; print(sorted(k for k in os.environ if k != 'LC_CTYPE'))"
    queue(room, "envy", command=[PY, "-c", show])
    assert cycle.cycle(room).code == errors.PASSED
    out = (room.swarm / "results" / "envy" / "stdout.txt").read_text()
    assert out == "['CONTROL_ROOM', 'CONTROL_ROOM_TASK', 'PATH']\n"


def test_allowed_extra_args_reach_the_agent_last(room: Room, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv("PATH", f"{FAKES}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_AGENT_LOG", str(log))
    room.control.write_text(room.control.read_text().replace("allow_extra_args: false", "allow_extra_args: true"))
    queue(room, "bypass", adapter="claude", command=None, extra_args=["--permission-mode", "acceptEdits"])
    cycle.cycle(room)
    (call,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert call["argv"][-2:] == ["--permission-mode", "acceptEdits"]
    meta = json.loads((room.swarm / "results" / "bypass" / "meta.json").read_text())
    assert (meta["input_tokens"], meta["output_tokens"], meta["cost_usd"]) == (1200, 345, 0.0123)
    assert meta["prompt_tokens_est"] == -(-len((room.swarm / "outbox" / "bypass.md").read_text()) // 4)


def test_an_invalid_task_left_in_running_is_rejected_even_when_its_name_is_taken(room: Room) -> None:
    (room.state_dir("rejected") / "broken.json").write_text("an older rejection\n")
    (room.state_dir("running") / "broken.json").write_text('{"objective": "half written')
    assert cycle.cycle(room).code == errors.OK
    assert sorted(os.listdir(room.state_dir("running"))) == []
    assert (room.state_dir("rejected") / "broken.json").read_text() == "an older rejection\n"
    reason = (room.state_dir("rejected") / "broken.json.2.reason").read_text()
    assert reason.startswith("Rejected from swarm/running/broken.json at ")
    assert events(room.ledger)[-1] == "reject"
