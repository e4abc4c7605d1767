"""control-room task retry / park / cancel: a person moves tasks between the swarm folders.
Each move is one rename, one ledger line, and the reason file follows the task."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from support import TIME, data_lines, events, queue, set_gate, task_json, unsealed, where

from control_room import errors
from control_room.ledger.line import parse
from control_room.room.layout import Room

Run = Callable[..., Result]
PY = sys.executable
FAKES = Path(__file__).parent.parent / "fakes"


def last_line(room: Room):  # type: ignore[no-untyped-def]
    entry = parse(data_lines(room.ledger)[-1])
    assert entry is not None
    return entry


def files(room: Room, state: str) -> list[str]:
    return sorted(os.listdir(room.state_dir(state)))


@pytest.fixture
def parked(run: Run, inside: Room) -> Room:
    """Task t parked by two real failed rounds."""
    queue(inside, "t", route="slow", validator=[PY, "-c", "import sys; print('too slow'); sys.exit(3)"])
    assert run("cycle").exit_code == errors.FAILED
    assert run("cycle").exit_code == errors.FAILED
    assert where(inside, "t") == ["parked"]
    t = task_json(inside, "parked", "t")
    assert (t["rounds"], t["last_failure"]) == (2, "validator exited 3: too slow")
    assert (inside.state_dir("parked") / "t.reason").exists()
    return inside


@pytest.fixture
def rejected(run: Run, inside: Room) -> Room:
    """Task t rejected from the queue by a scan (it has no falsifier)."""
    queue(inside, "t", falsifier=None)
    assert run("task", "list").exit_code == 0  # listing the queue rejects what is not a task
    assert files(inside, "rejected") == ["t.json", "t.json.reason"]
    return inside


# retry ----------------------------------------------------------------------------------


def test_retry_from_parked_resets_the_rounds(run: Run, parked: Room) -> None:
    before = task_json(parked, "parked", "t")
    n = len(data_lines(parked.ledger))
    result = run("task", "retry", "t")
    assert (result.exit_code, result.stdout, result.stderr) == (
        0, "queued t again (was in swarm/parked/)\n", "",
    )  # fmt: skip
    assert where(parked, "t") == ["queue"]
    again = unsealed(task_json(parked, "queue", "t"))
    assert "rounds" not in again and "last_failure" not in again
    assert again == {k: v for k, v in before.items() if k not in ("rounds", "last_failure", "seal")}
    assert files(parked, "parked") == []  # the reason went with the task
    assert not (parked.state_dir("queue") / "t.reason").exists()
    assert len(data_lines(parked.ledger)) == n + 1
    line = last_line(parked)
    assert (line.event, line.task, line.route, line.outcome, line.detail) == (
        "retry", "t", "slow", "queued", "from swarm/parked/ by a person",
    )  # fmt: skip
    # a fresh round count: the next failure is round 1 of 2 again, not a park (a third failure
    # in a row of the same shape would trip the no-progress breaker: not what this test is about)
    set_gate(parked, "max_identical_failures", "9")
    failed = run("cycle")
    assert failed.stdout.endswith("; back in the queue for round 2 of 2\n")


def test_retry_of_a_queued_task_is_a_conflict(run: Run, inside: Room) -> None:
    queue(inside, "q")
    result = run("task", "retry", "q")
    assert (result.exit_code, result.stdout) == (errors.CONFLICT, "")
    assert result.stderr == ("Error: cannot retry q: it is in swarm/queue/, not in swarm/parked/ or "
                             "swarm/rejected/ or swarm/cancelled/ or swarm/done/\n")  # fmt: skip
    assert events(inside.ledger) == ["init"]


# park -----------------------------------------------------------------------------------


def test_park_from_the_queue_writes_the_reason(run: Run, inside: Room) -> None:
    queue(inside, "q", route="r1")
    result = run("task", "park", "q", "--reason", "waiting for the new benchmark")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "parked q (swarm/parked/q.json)\n", "")
    assert where(inside, "q") == ["parked"]
    reason = (inside.state_dir("parked") / "q.reason").read_text()
    assert re.fullmatch(rf"Parked by a person at {TIME}\.\n\nwaiting for the new benchmark\n", reason)
    assert events(inside.ledger) == ["init", "park"]
    line = last_line(inside)
    assert (line.task, line.route, line.outcome, line.detail) == (
        "q",
        "r1",
        "parked",
        "waiting for the new benchmark",
    )
    assert run("cycle").stdout == "nothing to do: the queue is empty\n"  # parked never runs


def test_park_without_a_reason_says_so(run: Run, inside: Room) -> None:
    queue(inside, "q")
    assert run("task", "park", "q").exit_code == 0
    reason = (inside.state_dir("parked") / "q.reason").read_text()
    assert re.fullmatch(rf"Parked by a person at {TIME}\.\n\n\(no reason given\)\n", reason)
    assert last_line(inside).detail == "by a person"


def test_park_of_a_parked_task_is_a_conflict(run: Run, parked: Room) -> None:
    n = len(data_lines(parked.ledger))
    result = run("task", "park", "t")
    assert (result.exit_code, result.stderr) == (
        errors.CONFLICT, "Error: cannot park t: it is in swarm/parked/, not in swarm/queue/\n",
    )  # fmt: skip
    assert len(data_lines(parked.ledger)) == n


# cancel ---------------------------------------------------------------------------------


def test_cancel_from_the_queue(run: Run, inside: Room) -> None:
    queue(inside, "q")
    result = run("task", "cancel", "q", "--reason", "superseded")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "cancelled q (was in swarm/queue/)\n", "")
    assert where(inside, "q") == ["cancelled"]
    reason = (inside.state_dir("cancelled") / "q.reason").read_text()
    assert re.fullmatch(rf"Cancelled at {TIME} from swarm/queue/\.\n\nsuperseded\n", reason)
    assert events(inside.ledger) == ["init", "cancel"]
    assert (last_line(inside).outcome, last_line(inside).detail) == ("cancelled", "superseded")


def test_cancel_from_parked_takes_the_reason_along(run: Run, parked: Room) -> None:
    n = len(data_lines(parked.ledger))
    result = run("task", "cancel", "t")
    assert (result.exit_code, result.stdout) == (0, "cancelled t (was in swarm/parked/)\n")
    assert where(parked, "t") == ["cancelled"]
    assert files(parked, "parked") == []
    assert files(parked, "cancelled") == ["t.json", "t.reason"]
    reason = (parked.state_dir("cancelled") / "t.reason").read_text()
    assert re.fullmatch(rf"Cancelled at {TIME} from swarm/parked/\.\n\n\(no reason given\)\n", reason)
    assert len(data_lines(parked.ledger)) == n + 1
    line = last_line(parked)
    assert (line.event, line.task, line.route, line.detail) == ("cancel", "t", "slow", "from swarm/parked/")


def test_cancel_from_rejected(run: Run, rejected: Room) -> None:
    n = len(data_lines(rejected.ledger))
    result = run("task", "cancel", "t", "--reason", "a vibe")
    assert (result.exit_code, result.stdout, result.stderr) == (
        0,
        "cancelled t (was in swarm/rejected/)\n",
        "",
    )
    assert files(rejected, "rejected") == []  # the task and its reason both left
    assert files(rejected, "cancelled") == ["t.json", "t.reason"]
    reason = (rejected.state_dir("cancelled") / "t.reason").read_text()
    assert re.fullmatch(rf"Cancelled at {TIME} from swarm/rejected/\.\n\na vibe\n", reason)
    assert len(data_lines(rejected.ledger)) == n + 1
    assert last_line(rejected).event == "cancel"


def test_cancel_twice_is_a_conflict(run: Run, inside: Room) -> None:
    queue(inside, "q")
    assert run("task", "cancel", "q").exit_code == 0
    again = run("task", "cancel", "q")
    assert (again.exit_code, again.stderr) == (
        errors.CONFLICT,
        (
            "Error: cannot cancel q: it is in swarm/cancelled/, not in swarm/queue/ or swarm/parked/ "
            "or swarm/rejected/ or swarm/passed/\n"
        ),
    )
    assert events(inside.ledger).count("cancel") == 1


def test_cancel_of_a_running_task_points_at_stop(run: Run, exe: str, inside: Room, tmp_path: Path) -> None:
    pidfile, ready = tmp_path / "grandchild.pid", tmp_path / "ready"
    queue(inside, "busy", command=[PY, str(FAKES / "sleeper.py"), "--pidfile", str(pidfile),
                                   "--ready", str(ready)])  # fmt: skip
    env = {**os.environ, "CONTROL_ROOM": str(inside.root)}
    proc = subprocess.Popen([exe, "cycle"], cwd=inside.root, env=env, stdout=subprocess.PIPE, text=True)
    try:
        end = time.monotonic() + 60
        while not ready.exists():
            assert proc.poll() is None, "the cycle ended before its agent was ready"
            assert time.monotonic() < end, "the agent never became ready"
            time.sleep(0.05)
        assert where(inside, "busy") == ["running"]
        n = len(data_lines(inside.ledger))
        result = run("task", "cancel", "busy")
        assert (result.exit_code, result.stdout) == (errors.CONFLICT, "")
        assert result.stderr == (
            "Error: cannot cancel busy: it is in swarm/running/, not in swarm/queue/ or "
            "swarm/parked/ or swarm/rejected/ or swarm/passed/ (stop it first: `control-room stop`)\n"
        )
        assert where(inside, "busy") == ["running"]
        assert len(data_lines(inside.ledger)) == n
    finally:
        inside.stop.write_text("")
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == errors.STOPPED, out
    assert where(inside, "busy") == ["queue"]
    inside.stop.unlink()
    assert run("task", "cancel", "busy").exit_code == 0
    assert where(inside, "busy") == ["cancelled"]
    assert events(inside.ledger).count("cancel") == 1


def test_moves_of_an_unknown_task(run: Run, inside: Room) -> None:
    for verb in ("retry", "park", "cancel"):
        result = run("task", verb, "nope")
        assert (result.exit_code, result.stderr) == (
            errors.NOT_FOUND,
            f"Error: no task nope in {inside.swarm}\n",
        )
    assert events(inside.ledger) == ["init"]
