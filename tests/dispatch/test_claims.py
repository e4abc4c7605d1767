"""control_room.dispatch.claims: recovery kills only a process group that is provably the task's agent."""

from __future__ import annotations

import os
import subprocess
import sys

from control_room.dispatch import claims

PY = sys.executable


def test_recovery_kills_only_a_process_group_that_is_provably_the_task_agent() -> None:
    env = {**os.environ, "CONTROL_ROOM_TASK": "mine"}
    # Each says "ready" once it runs: before its exec, /proc/PID/environ is still the parent's.
    sleeper = [PY, "-c", "import time; print('ready', flush=True); time.sleep(60)"]
    stranger = subprocess.Popen(sleeper, start_new_session=True, stdout=subprocess.PIPE, text=True)
    agent = subprocess.Popen(sleeper, start_new_session=True, env=env, stdout=subprocess.PIPE, text=True)
    assert stranger.stdout is not None and agent.stdout is not None
    assert (stranger.stdout.readline(), agent.stdout.readline()) == ("ready\n", "ready\n")
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
