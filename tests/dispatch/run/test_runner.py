"""dispatch.run.runner: a claimed task's run: the prompt it was given, its brief, the adapter's
state folder, a CLI that is not installed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support import entries, queue, task_json, where

from control_room import errors
from control_room.dispatch.run import cycle
from control_room.room.layout import Room

FAKES = Path(__file__).resolve().parents[2] / "fakes"


def test_the_prompt_is_kept_and_the_brief_leaves_the_work_dir(room: Room) -> None:
    queue(room, "t1", command=["sh", "-c", "test -f .brief-t1.md"])  # the agent sees its brief
    assert cycle.cycle(room).code == errors.PASSED
    sent = (room.swarm / "outbox" / "t1.md").read_text()
    assert "objective of t1" in sent and (room.swarm / "results" / "t1" / "prompt.md").read_text() == sent
    assert not list(room.root.glob(".brief-*"))


def test_without_a_setup_no_state_folder_is_made(room: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{FAKES}{os.pathsep}{os.environ['PATH']}")
    queue(room, "plain", adapter="claude", command=None)
    cycle.cycle(room)
    assert not (room.cr / ".adapters").exists()


def test_a_cli_that_is_not_installed_puts_the_task_back_without_a_round(
    room: Room, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no claude here
    queue(room, "t1", adapter="claude", command=None)
    result = cycle.cycle(room)
    assert result.code == errors.ADAPTER_MISSING and where(room, "t1") == ["queue"]
    assert "rounds" not in task_json(room, "queue", "t1")
    (line,) = entries(room, "adapter-missing")
    assert line.task == "t1" and not list(room.root.glob(".brief-*"))
