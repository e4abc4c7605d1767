"""dispatch.queue.environment: a run sees only the variables its adapter and CONTROL.md let through."""

from __future__ import annotations

import pytest

from control_room.dispatch.queue import environment
from control_room.room import settings
from control_room.room.layout import Room


def test_env_allow_still_passes_the_variable_a_setup_names(
    room: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GATEWAY_KEY", "k")
    monkeypatch.setenv("OTHER", "o")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "a")
    for allow in ([], ["PATH"]):
        s = settings.load(room).replace(env_allow=allow)
        env = environment.agent_env(room, s, {"id": "t"}, keep=("GATEWAY_KEY",))
        assert env["GATEWAY_KEY"] == "k" and env["CONTROL_ROOM_TASK"] == "t"
        assert "OTHER" not in env and "ANTHROPIC_API_KEY" not in env  # never the whole environment
    claude = environment.agent_env(room, s, {"id": "t"}, names=("PATH", "ANTHROPIC_*"))
    assert claude["ANTHROPIC_API_KEY"] == "a" and "OTHER" not in claude  # an adapter's own list
