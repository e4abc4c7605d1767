"""control_room.dispatch.claims: recovery kills only a process group that is provably the task's agent."""

from __future__ import annotations

import os
import subprocess
import sys

from control_room.dispatch import claims

PY = sys.executable


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
