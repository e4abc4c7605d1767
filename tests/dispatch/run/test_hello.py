"""dispatch.run.hello: a one-turn hello through an adapter as a cycle runs it (the prompt on
stdin, a scratch work dir removed after), each way it fails in one line, which adapters --check
checks, and its adapter-check ledger line."""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

import pytest
from support import FAKES, entries, set_gate

from control_room import adapters
from control_room.dispatch.run import hello
from control_room.room import settings as settings_file
from control_room.room.layout import Room
from control_room.room.settings import Settings

CLAUDE_INSTALL = adapters.adapter_class("claude").install


@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, room: Room) -> Path:
    """The fake agent CLIs first on PATH; their runs logged (CONTROL.md lets the fakes' own
    variables through: env_allow); temporary folders in tmp_path/tmp."""
    set_gate(room, "env_allow", "['FAKE_AGENT_*']")
    monkeypatch.setenv("PATH", f"{FAKES}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_AGENT_LOG", str(tmp_path / "runs.jsonl"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    return tmp_path / "runs.jsonl"


def settings(room: Room, **keys: str) -> Settings:
    for key, value in keys.items():
        set_gate(room, key, value)
    return settings_file.load(room)


def test_hello_goes_in_on_stdin_in_a_scratch_work_dir_that_is_removed_after(
    room: Room, fakes: Path, tmp_path: Path
) -> None:
    said = hello.check(room, settings(room, adapters=json.dumps({"claude": {"model": "m1"}})), "claude")
    assert (said.name, said.ok, said.cost_usd) == ("claude", True, 0.0123)
    assert re.fullmatch(
        r"answered \(m1\) in \d+\.\ds, tokens 1200/345: "
        r"Done; here is my report\. DECISION: fake claude finished task",
        said.line,
    ), said.line
    (run,) = [json.loads(line) for line in fakes.read_text().splitlines()]
    argv = ["-p", "--output-format", "json", "--session-id", run["argv"][4], "--model", "m1"]
    assert (run["argv"], run["stdin"]) == (argv, hello.HELLO)
    assert Path(run["cwd"]).parent == tmp_path / "tmp"
    assert Path(run["cwd"]).name.startswith("control-room-check-claude-")
    assert list((tmp_path / "tmp").iterdir()) == []
    assert entries(room, "adapter-check") == []  # logging it is the caller's (log)


def test_the_cli_s_own_error_is_the_line_and_what_it_spent_is_kept(
    room: Room, fakes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_AGENT_MODE", "error")
    assert hello.check(room, settings(room), "claude") == hello.Check(
        "claude",
        False,
        "claude exited 1 (API error or max turns reached): API Error: Connection error.",
        0.0123,
    )


def test_a_cli_that_does_not_answer_in_time_is_killed(
    room: Room, fakes: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("FAKE_AGENT_MODE", "timeout")
    assert hello.check(room, settings(room), "claude", timeout_s=0.1) == hello.Check(
        "claude", False, "the agent was killed at its 0.1s time limit"
    )
    assert list((tmp_path / "tmp").iterdir()) == []


def test_a_cli_not_installed_says_how_to_install_it(
    room: Room, fakes: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "tmp"))  # no claude there
    assert hello.check(room, settings(room), "claude") == hello.Check(
        "claude", False, f"not installed: claude: command not found on PATH; {CLAUDE_INSTALL}"
    )
    assert list((tmp_path / "tmp").iterdir()) == []


def test_an_unknown_adapter_is_one_line(room: Room) -> None:
    assert hello.check(room, settings(room), "gpt9") == hello.Check(
        "gpt9", False, f"unknown adapter 'gpt9' (valid: {', '.join(adapters.names())})"
    )


def test_a_setup_the_adapter_does_not_act_on_is_refused_before_anything_runs(room: Room, fakes: Path) -> None:
    s = settings(room, adapters=json.dumps({"cursor-agent": {"base_url": "http://127.0.0.1:9"}}))
    assert hello.check(room, s, "cursor-agent") == hello.Check(
        "cursor-agent",
        False,
        "room invalid: CONTROL.md: adapters.cursor-agent: the cursor-agent adapter does not act on base_url "
        "(it takes: api_key_env, model); fix CONTROL.md",
    )
    assert not fakes.exists()


def test_a_key_variable_that_is_not_set_is_named(
    room: Room, fakes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("UNSET_KEY_X", raising=False)
    s = settings(
        room,
        adapters=json.dumps({"claude": {"base_url": "http://127.0.0.1:9", "api_key_env": "UNSET_KEY_X"}}),
    )
    assert hello.check(room, s, "claude") == hello.Check(
        "claude",
        False,
        "CONTROL.md: adapters.claude.api_key_env names UNSET_KEY_X, which is not set in this environment",
    )
    assert not fakes.exists()


def test_candidates_are_the_installed_clis_and_those_set_up(
    room: Room, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(FAKES))
    every = [n for n in adapters.names() if n not in hello.BUILT_IN]
    assert hello.candidates(settings(room)) == every
    monkeypatch.setenv("PATH", str(tmp_path))  # no agent CLI at all
    assert hello.candidates(settings_file.load(room)) == []
    s = settings(room, adapters=json.dumps({"codex": {"model": "m1"}, "probe": {}}))
    assert hello.candidates(s) == ["codex"]  # set up, though not installed; never a built-in one


def test_log_writes_one_adapter_check_line(room: Room) -> None:
    hello.log(room, hello.Check("claude", True, "answered in 1.2s: OK", 0.0123))
    hello.log(room, hello.Check("codex", False, "not installed: codex: command not found on PATH"))
    got = [(e.adapter, e.outcome, e.cost_usd, e.detail) for e in entries(room, "adapter-check")]
    assert got == [
        ("claude", "ok", "0.0123", "answered in 1.2s: OK"),
        ("codex", "fail", "0", "not installed: codex: command not found on PATH"),
    ]
