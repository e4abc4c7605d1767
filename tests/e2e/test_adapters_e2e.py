"""A CLI pointed at a gateway or a local model (CONTROL.md ``adapters:``), and its failures, through
the installed ``control-room cycle`` against the fake CLIs (tests/fakes), on real files."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from support import FAKES, entries, queue, set_gate, task_json, where

from control_room import errors
from control_room.room.layout import Room

URL = "http://127.0.0.1:9/v1"


@pytest.fixture(autouse=True)
def fakes_allowed(room: Room) -> None:
    """The fakes' own variables (FAKE_AGENT_LOG, FAKE_AGENT_MODE) reach them: CONTROL.md
    env_allow names them, as a person names what their own tools need."""
    set_gate(room, "env_allow", "['FAKE_AGENT_*']")


def env(tmp_path: Path, **more: str) -> dict[str, str]:
    return {"PATH": f"{FAKES}{os.pathsep}{os.environ['PATH']}",
            "FAKE_AGENT_LOG": str(tmp_path / "calls.jsonl"),
            "GATEWAY_KEY": "sk-secret-value", **more}  # fmt: skip


def calls(tmp_path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]


def meta(room: Room, tid: str) -> dict[str, Any]:
    return json.loads((room.swarm / "results" / tid / "meta.json").read_text())


def test_an_isolated_gateway_setup_fills_its_state_folder_and_keeps_the_key_out_of_the_room(
    cr, room: Room, tmp_path: Path
) -> None:
    set_gate(
        room,
        "adapters",
        f'{{codex: {{base_url: "{URL}", api_key_env: GATEWAY_KEY, model: qwen, isolated: true}}}}',
    )
    queue(room, "t-gw", adapter="codex", command=None)
    done = cr("cycle", extra_env=env(tmp_path))
    assert done.returncode == errors.PASSED, done.stdout + done.stderr
    state = room.cr / ".adapters" / "codex"
    assert (room.cr / ".adapters" / ".gitignore").read_text().splitlines()[1:] == ["*"]
    config = (state / "config.toml").read_text()
    assert (
        'model = "qwen"\n' in config
        and f'base_url = "{URL}"\n' in config
        and 'env_key = "GATEWAY_KEY"\n' in config
    )
    (call,) = calls(tmp_path)
    assert call["env"]["CODEX_HOME"] == str(state)
    assert call["env"]["GATEWAY_KEY"] == "sk-secret-value"  # the CLI reads it from its environment
    assert meta(room, "t-gw")["model"] == "qwen"
    for path in room.root.rglob("*"):  # the key itself is in no file of the room
        if path.is_file():
            assert b"sk-secret-value" not in path.read_bytes(), path


def test_a_role_overrides_the_setup_in_a_state_folder_of_its_own(cr, room: Room, tmp_path: Path) -> None:
    set_gate(room, "adapters", f'{{kimi: {{base_url: "{URL}", model: qwen}}}}')
    role = room.root / "agents" / "reviewer.md"
    role.write_text("---\nadapters: {kimi: {model: big-qwen, isolated: true}}\n---\nReview.\n")
    queue(room, "t-role", adapter="kimi", role="reviewer", command=None)
    assert cr("cycle", extra_env=env(tmp_path)).returncode == errors.PASSED
    state = room.cr / ".adapters" / "kimi@reviewer"
    assert 'model = "big-qwen"\n' in (state / "config.toml").read_text()
    (call,) = calls(tmp_path)
    assert call["argv"][-2:] == ["--config-file", str(state / "config.toml")]
    assert call["env"]["HOME"] == str(state)


def test_copilot_tokens_and_cost_come_from_its_usage_file(cr, room: Room, tmp_path: Path) -> None:
    queue(room, "t-usage", adapter="copilot", command=None, max_cost_usd=1)
    assert cr("cycle", extra_env=env(tmp_path)).returncode == errors.PASSED
    results = room.swarm / "results" / "t-usage"
    assert json.loads((results / "copilot-usage.json").read_text())["modelMetrics"]["fake-model"]
    m = meta(room, "t-usage")
    assert (m["input_tokens"], m["output_tokens"], m["cost_usd"]) == (2000, 250, 0.05)
    (result,) = entries(room, "result")
    assert float(result.cost_usd) == 0.05


def test_a_missing_key_variable_is_the_rooms_fault_and_nothing_is_claimed(
    cr, room: Room, tmp_path: Path
) -> None:
    set_gate(room, "adapters", f'{{claude: {{base_url: "{URL}", api_key_env: NO_SUCH_KEY}}}}')
    queue(room, "t-nokey", adapter="claude", command=None)
    done = cr("cycle", extra_env=env(tmp_path))
    assert done.returncode == errors.ROOM_INVALID
    assert done.stderr == (
        "Error: room invalid: CONTROL.md: adapters.claude.api_key_env names NO_SUCH_KEY, which is not set "
        "in the environment this cycle runs in; export NO_SUCH_KEY there (for cron or launchd: in its "
        "entry); nothing was claimed\n")  # fmt: skip
    assert where(room, "t-nokey") == ["queue"]
    assert "rounds" not in task_json(room, "queue", "t-nokey")


def test_a_setting_the_adapter_does_not_act_on_is_refused_before_anything_runs(
    cr, room: Room, tmp_path: Path
) -> None:
    set_gate(room, "adapters", "{amp: {model: smart}}")
    queue(room, "t-amp", adapter="amp", command=None)
    done = cr("cycle", extra_env=env(tmp_path))
    assert done.returncode == errors.ROOM_INVALID
    assert done.stderr == (
        f"Error: room invalid: {room.control}: adapters.amp: the amp adapter does not act on model "
        "(it takes: base_url, api_key_env); fix it in CONTROL.md; nothing was claimed\n")  # fmt: skip


# Each failure names its cause, in the cycle's line, meta.json and the ledger's result line.
FAILURES = [
    ("kimi", "{}", "error", 30, "kimi exited 75 (connection error): Connection error."),
    ("aider", "{}", "error", 30, "aider exited 0 without a Tokens: line: litellm.InternalServerError: "
     "InternalServerError: OpenAIException - Connection error."),
    ("gemini", f'{{base_url: "{URL}", api_key_env: GATEWAY_KEY, isolated: true}}', "down", 30,
     "gemini exited 1 (general error or API failure): Attempt 1 failed with status undefined. Retrying with "
     "backoff... Error: exception TypeError: fetch failed sending request"),
    ("copilot", f'{{base_url: "{URL}", api_key_env: GATEWAY_KEY}}', "success", 30,
     "copilot exited 1: BYOK providers require an explicit model: set `model` in CONTROL.md adapters.copilot "
     "(or the role's or the task's model)"),
    ("codex", f'{{base_url: "{URL}", api_key_env: GATEWAY_KEY, isolated: true}}', "down", 1,
     "the agent was killed at its 1s time limit while reconnecting to the model endpoint: "
     "Reconnecting... 2/5 "
     f"(stream disconnected before completion: error sending request for url ({URL}/responses))"),
    ("claude", f'{{base_url: "{URL}", api_key_env: GATEWAY_KEY, isolated: true}}', "down", 30,
     "claude exited 1 (API error or max turns reached): API Error: Connection refused"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("adapter", "setup", "mode", "wall", "cause"), FAILURES, ids=[f[0] for f in FAILURES]
)
def test_a_failure_names_its_cause_everywhere(
    cr, room: Room, tmp_path: Path, adapter: str, setup: str, mode: str, wall: int, cause: str
) -> None:
    set_gate(room, "adapters", f"{{{adapter}: {setup}}}")
    queue(room, "t-x", adapter=adapter, command=None, wall_clock_s=wall)
    done = cr("cycle", extra_env=env(tmp_path, FAKE_AGENT_MODE=mode))
    assert done.returncode == errors.FAILED
    assert done.stdout.startswith(f"failed: t-x ({cause}; ")
    m = meta(room, "t-x")
    assert (m["agent_error"], m["failures"][0], m["timed_out"]) == (cause, cause, adapter == "codex")
    (result,) = entries(room, "result")
    assert json.loads(result.detail)["failed"].startswith(cause)
    assert task_json(room, "queue", "t-x")["last_failure"].startswith(cause)


def test_aider_leaves_no_git_repository_in_a_room_that_is_none(cr, room: Room, tmp_path: Path) -> None:
    queue(room, "t-aider", adapter="aider", command=None)
    assert cr("cycle", extra_env=env(tmp_path)).returncode == errors.PASSED
    assert "--no-git" in calls(tmp_path)[0]["argv"]
    assert not (room.root / ".git").exists() and not (room.root / ".gitignore").exists()
