"""dispatch.round.claims: slots, claim files, when a claim is dead, and killing only a
process group that is provably the task's agent."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import dead

from control_room.dispatch.round import claims
from control_room.room.layout import Room
from control_room.store import lock

PY = sys.executable


def test_recovery_kills_only_a_process_group_that_is_provably_the_task_agent(room: Room) -> None:
    env = {**os.environ, "CONTROL_ROOM_TASK": "mine", "CONTROL_ROOM": str(room.root)}
    # Each says "ready" once it runs: before its exec, /proc/PID/environ is still the parent's.
    sleeper = [PY, "-c", "import time; print('ready', flush=True); time.sleep(60)"]
    stranger = subprocess.Popen(sleeper, start_new_session=True, stdout=subprocess.PIPE, text=True)
    agent = subprocess.Popen(sleeper, start_new_session=True, env=env, stdout=subprocess.PIPE, text=True)
    assert stranger.stdout is not None and agent.stdout is not None
    assert (stranger.stdout.readline(), agent.stdout.readline()) == ("ready\n", "ready\n")
    try:
        here = claims.host(room)
        assert claims.kill_agent(room, {"host": "elsewhere"}, "mine") is False  # another host's
        assert claims.kill_agent(room, None, "mine") is False
        assert agent.poll() is None
        assert claims.kill_agent(room, {"host": here}, "mine") is True
        assert agent.wait(timeout=10) == -9
        assert stranger.poll() is None  # a group that is not the run's, never
    finally:
        stranger.kill()
        agent.kill()
        stranger.wait()
        agent.wait()


def test_a_run_whose_leader_is_gone_is_found_by_the_children_it_left(room: Room, tmp_path: Path) -> None:
    """The agent forked a child into its own process group and exited: the group is found
    through the child, whose environment is the run's (an earlier version looked at the
    leader's alone)."""
    env = {**os.environ, "CONTROL_ROOM_TASK": "t1", "CONTROL_ROOM": str(room.root)}
    pid_file = tmp_path / "child.pid"
    child = f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(60)"
    leader = [PY, "-c", f"import subprocess, sys; subprocess.Popen([sys.executable, '-c', {child!r}])"]
    subprocess.run(leader, start_new_session=True, env=env, check=True)  # the leader is gone
    deadline = time.monotonic() + 10
    while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
        time.sleep(0.02)
    pid = int(pid_file.read_text())
    try:
        assert claims.kill_agent(room, {"host": claims.host(room)}, "t1") is True
        assert dead(pid)  # gone, or a zombie for init
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)


def test_a_dead_claim_kills_that_tasks_run_in_this_room_only(room: Room) -> None:
    """Its cycle was killed while the agent ran: the run is found by its environment
    (tests/reliability/test_crash_injection.py, ``agent.started``: it ran on beside the task's
    next run, before recovery looked for it)."""
    sleeper = [PY, "-c", "import time; print('ready', flush=True); time.sleep(60)"]
    mine = {**os.environ, "CONTROL_ROOM_TASK": "t1", "CONTROL_ROOM": f"{room.root}/."}
    runs = [
        subprocess.Popen(sleeper, start_new_session=True, env=env, stdout=subprocess.PIPE, text=True)
        for env in (mine, {**mine, "CONTROL_ROOM_TASK": "t2"}, {**mine, "CONTROL_ROOM": "/elsewhere"})
    ]
    try:
        assert [p.stdout.readline() for p in runs if p.stdout] == ["ready\n"] * 3
        assert claims.kill_agent(room, {"host": claims.host(room)}, "t1") is True
        assert runs[0].wait(timeout=10) == -9
        assert [p.poll() for p in runs[1:]] == [None, None]  # another task's, another room's
        assert claims.kill_agent(room, {"host": claims.host(room)}, "t1") is False
    finally:
        for p in runs:
            p.kill()
            p.wait()


def test_slots_are_taken_one_each_until_none_is_free(room: Room) -> None:
    first = claims.take_slot(room, 2)
    second = claims.take_slot(room, 2)
    assert first is not None and second is not None and (first[0], second[0]) == (0, 1)
    try:
        assert claims.take_slot(room, 2) is None
        assert (claims.slot_free(room, 0), claims.slot_free(room, 1)) == (False, False)
    finally:
        os.close(first[1])
    assert claims.slot_free(room, 0) is True
    again = claims.take_slot(room, 2)
    assert again is not None and again[0] == 0
    os.close(again[1])
    os.close(second[1])


def test_a_process_takes_the_slot_it_took_last_first(room: Room) -> None:
    """A run loop's next claim finds its own slot at once, not the lowest free one."""
    first = claims.take_slot(room, 4)
    second = claims.take_slot(room, 4)
    assert first is not None and second is not None and (first[0], second[0]) == (0, 1)
    os.close(first[1])
    os.close(second[1])
    again = claims.take_slot(room, 4)  # slot 0 is free too
    assert again is not None and again[0] == 1
    os.close(again[1])
    fewer = claims.take_slot(room, 1)  # max_parallel lowered since: slot 1 is out of range
    assert fewer is not None and fewer[0] == 0
    os.close(fewer[1])


def test_why_a_claim_is_dead(room: Room) -> None:
    here = claims.host(room)
    assert (
        claims.why_dead(room, None, 60, mine=None) == "it has no claim file (its cycle died while claiming)"
    )
    alive = {"host": here, "pid": os.getpid(), "slot": 3, "deadline": time.time() + 600}
    held = lock.take(room.cr / ".slot-3.lock")  # its cycle (this process) holds slot 3
    assert held is not None
    try:
        assert claims.why_dead(room, alive, 60, mine=None) is None
        assert (
            claims.why_dead(room, alive, 60, mine=3)
            == "its slot 3 is ours now, so the cycle that held it is gone"
        )
    finally:
        os.close(held)
    gone = {**alive, "pid": 2**22 + 12345}
    assert claims.why_dead(room, gone, 60, mine=None) == f"its cycle (pid {2**22 + 12345} on {here}) is gone"
    late = {"host": "elsewhere", "pid": 1, "deadline": time.time() - 120}
    assert claims.why_dead(room, late, 60, mine=None) == "its wall clock plus 60s grace has passed"
    assert claims.why_dead(room, {**late, "deadline": time.time() - 30}, 60, mine=None) is None


def test_a_claim_whose_slot_is_free_is_dead(room: Room) -> None:
    claim = {"host": claims.host(room), "pid": os.getpid(), "slot": 4, "deadline": time.time() + 600}
    assert (
        claims.why_dead(room, claim, 60, mine=None) == "its slot 4 is free, so the cycle that held it is gone"
    )


def test_moved_on_names_only_claims_whose_task_left_running(room: Room) -> None:
    running = room.state_dir("running")
    (running / "kept.json").write_text("{}")
    claims.write_claim(room, "kept", {"pid": 1})
    claims.write_claim(room, "left", {"pid": 1})
    assert claims.moved_on(room) == ["left"]
    assert claims.running_ids(room) == ["kept"]


def test_a_clone_of_a_shared_room_gets_an_id_of_its_own_at_first_use(
    room: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    from control_room.dispatch.round.claims import shared_host  # the function under test

    monkeypatch.setenv("CONTROL_ROOM_WRITER", "m1")
    assert shared_host(room) == "m1" and not (room.cr / ".host").exists()  # named: kept as it is
    monkeypatch.delenv("CONTROL_ROOM_WRITER")
    made = shared_host(room)
    assert re.fullmatch(re.escape(os.uname().nodename[:57]) + r"-[0-9a-f]{6}", made), made
    assert (room.cr / ".host").read_text() == made + "\n"
    assert shared_host(room) == made  # kept: one id for the clone's life
