"""dispatch.run.agent: the brief and the agent's environment (prepare), the adapter's state
folder (write_state), one run of the CLI in the work dir with its streams in the results folder
(execute), and reading it back (read: Latin-1 noted, the files the adapter names)."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from support import set_gate

from control_room import proc
from control_room.adapters.base import Adapter, Invocation, Outcome, Setup
from control_room.dispatch.queue.resolve import resolve
from control_room.dispatch.run import agent
from control_room.proc import Result, Stream
from control_room.room import settings as settings_file
from control_room.room.layout import Room
from control_room.room.settings import Settings

TASK: dict[str, Any] = {"id": "t1", "objective": "say hello"}


class Python(Adapter):
    """An adapter whose CLI is this Python running its ``code`` (the prompt on its stdin)."""

    name = "python"
    binary = sys.executable
    code = ""

    def command(self, inv: Invocation) -> list[str]:
        return [sys.executable, "-c", self.code]


class Named(Adapter):
    """An adapter naming files the CLI writes into the results folder; read() hands them back."""

    name = "named"
    binary = None
    files_seen: Mapping[str, str] | None = None

    def outputs(self, inv: Invocation) -> tuple[str, ...]:
        return ("usage.json", "absent.json")

    def read(
        self, result: Result, stdout: str, stderr: str, files: Mapping[str, str] | None = None
    ) -> Outcome:
        return Outcome(ok=True, final_message=stdout, extra={"files": files})


class Prepared(Adapter):
    """An adapter whose setup needs two files in its state folder."""

    name = "prepared"
    binary = None

    def prepare(self, inv: Invocation) -> dict[str, str]:
        return {"config.toml": 'model = "m1"\n', "sub/dir/auth.json": "{}\n"}


def loaded(room: Room, **keys: str) -> Settings:
    for key, value in keys.items():
        set_gate(room, key, value)
    return settings_file.load(room)


def invocation(tmp_path: Path, results: Path | None = None, **kw: Any) -> Invocation:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return Invocation(dict(TASK), "the prompt\n", work / ".brief-t1.md", work, results=results, **kw)


def ran(tmp_path: Path, stdout: bytes, stderr: bytes = b"", code: int = 0) -> Result:
    """A finished run whose streams hold these bytes."""
    out, err = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
    out.write_bytes(stdout)
    err.write_bytes(stderr)
    return Result(
        ["cli"], code, 0.5, Stream(out, len(stdout), len(stdout)), Stream(err, len(stderr), len(stderr))
    )


# prepare ----------------------------------------------------------------------------------------


def test_prepare_writes_the_brief_and_gives_the_agent_the_room_and_its_task(
    room: Room, tmp_path: Path
) -> None:
    settings = loaded(room)
    plan = resolve(room, settings, {**TASK, "adapter": "probe", "command": ["true"]})
    results = tmp_path / "results"
    inv, env = agent.prepare(
        room, settings, plan, {**TASK, "command": ["true"]}, "do it\n", tmp_path, results
    )
    assert (inv.brief, inv.workdir, inv.results, inv.prompt) == (
        tmp_path / ".brief-t1.md",
        tmp_path,
        results,
        "do it\n",
    )
    assert inv.brief.read_text() == "do it\n"
    assert (env["CONTROL_ROOM"], env["CONTROL_ROOM_TASK"]) == (str(room.root), "t1")
    assert not room.adapter_states.exists()  # no setup: no state folder


def test_with_env_allow_the_agent_gets_only_those_names_and_its_key(
    room: Room, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GATEWAY_KEY", "k-123")
    monkeypatch.setenv("SECRET_OF_THE_DISPATCHER", "no")
    setup = {"claude": {"base_url": "http://127.0.0.1:9", "api_key_env": "GATEWAY_KEY", "isolated": True}}
    settings = loaded(room, env_allow='["PATH"]', adapters=json.dumps(setup))
    plan = resolve(room, settings, {**TASK, "adapter": "claude"})
    _, env = agent.prepare(room, settings, plan, TASK, "hi\n", tmp_path, tmp_path / "results")
    assert "SECRET_OF_THE_DISPATCHER" not in env
    assert (env["GATEWAY_KEY"], env["ANTHROPIC_API_KEY"], env["HOME"]) == (
        "k-123",
        "k-123",
        str(room.adapter_states / "claude"),
    )
    assert (room.adapter_states / "claude").is_dir()  # its isolated home, made before the run


# write_state ------------------------------------------------------------------------------------


def test_without_a_state_folder_or_anything_to_write_nothing_is_made(room: Room, tmp_path: Path) -> None:
    agent.write_state(room, Prepared(), invocation(tmp_path))  # no state folder given
    state = room.adapter_states / "named"
    agent.write_state(room, Named(), invocation(tmp_path, setup=Setup(base_url="http://x"), state=state))
    assert not room.adapter_states.exists()


def test_an_isolated_setup_gets_its_folder_and_the_folder_ignores_itself(room: Room, tmp_path: Path) -> None:
    state = room.adapter_states / "named"
    agent.write_state(room, Named(), invocation(tmp_path, setup=Setup(isolated=True), state=state))
    assert (room.adapter_states / ".gitignore").read_text() == agent.STATE_GITIGNORE
    assert state.is_dir() and list(state.iterdir()) == []


def test_the_files_a_setup_needs_are_written_where_it_says(room: Room, tmp_path: Path) -> None:
    (room.adapter_states).mkdir()
    (room.adapter_states / ".gitignore").write_text("*\n# mine\n")
    state = room.adapter_states / "prepared@scout"
    agent.write_state(room, Prepared(), invocation(tmp_path, setup=Setup(model="m1"), state=state))
    assert (state / "config.toml").read_text() == 'model = "m1"\n'
    assert (state / "sub" / "dir" / "auth.json").read_text() == "{}\n"
    assert (room.adapter_states / ".gitignore").read_text() == "*\n# mine\n"  # kept as it was


def test_a_file_an_adapter_names_outside_its_state_folder_is_refused(room: Room, tmp_path: Path) -> None:
    from control_room.adapters.base import Adapter, Invocation, Setup
    from control_room.errors import ControlRoomError

    class Sneaky(Adapter):
        name = "sneaky"
        binary = None

        def prepare(self, inv: Invocation) -> dict[str, str]:
            return {"../../CONTROL.md": "overwritten"}

    state = room.cr / ".adapters" / "sneaky"
    inv = Invocation({"id": "t"}, "p", tmp_path / "b", tmp_path, setup=Setup(isolated=True), state=state)
    before = room.control.read_text()
    with pytest.raises(ControlRoomError) as err:
        agent.write_state(room, Sneaky(), inv)
    assert str(err.value) == "adapter sneaky: prepare() named '../../CONTROL.md', outside its folder"
    assert room.control.read_text() == before


# execute ----------------------------------------------------------------------------------------


def test_execute_runs_the_cli_in_the_work_dir_with_the_prompt_and_saves_its_streams(
    room: Room, tmp_path: Path
) -> None:
    cli = Python()
    cli.code = (
        "import os, sys; print('got', sys.stdin.read().strip(), os.getcwd(), os.environ['ONLY_THIS'])\n"
        "print('a warning', file=sys.stderr); sys.exit(3)"
    )
    results = tmp_path / "results"
    results.mkdir()
    inv = invocation(tmp_path, results)
    res = agent.execute(room, loaded(room), cli, inv, {"ONLY_THIS": "yes"}, 30)
    assert (res.exit_code, res.timed_out, res.stopped) == (3, False, False)
    assert (results / "stdout.txt").read_text() == f"got the prompt {inv.workdir} yes\n"
    assert (results / "stderr.txt").read_text() == "a warning\n"


def test_execute_caps_each_stream_at_capture_max_bytes(room: Room, tmp_path: Path) -> None:
    cli = Python()
    cli.code = "print('x' * 99)"
    results = tmp_path / "results"
    results.mkdir()
    res = agent.execute(
        room, loaded(room, capture_max_bytes="10"), cli, invocation(tmp_path, results), {}, 30
    )
    assert (results / "stdout.txt").read_text() == "x" * 10
    assert res.notes == ["stdout cut at 10 bytes of 100"]


def test_execute_stops_the_cli_when_stop_appears(room: Room, tmp_path: Path) -> None:
    cli = Python()
    cli.code = "import time; time.sleep(30)"
    results = tmp_path / "results"
    results.mkdir()
    room.stop.write_text("halt\n")
    res = agent.execute(room, loaded(room), cli, invocation(tmp_path, results), {}, 30)
    assert (res.exit_code, res.stopped, res.notes) == (None, True, ["killed because STOP appeared"])


def test_execute_of_a_cli_that_is_not_installed_raises(room: Room, tmp_path: Path) -> None:
    cli = Python()
    cli.command = lambda inv: ["no-such-cli-x", "-p"]  # type: ignore[method-assign]
    results = tmp_path / "results"
    results.mkdir()
    with pytest.raises(proc.ExecutableNotFound) as err:
        agent.execute(room, loaded(room), cli, invocation(tmp_path, results), {"PATH": str(tmp_path)}, 30)
    assert str(err.value) == "no-such-cli-x: command not found on PATH"
    assert list(results.iterdir()) == []


# read -------------------------------------------------------------------------------------------


def test_read_hands_the_streams_to_the_adapter_and_notes_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    res = ran(tmp_path, b"caf\xe9 au lait\n", b"warning: \xff\n", code=1)
    inv = invocation(tmp_path, tmp_path)
    outcome = agent.read(Python(), inv, res)
    assert (outcome.ok, outcome.final_message, outcome.error) == (
        False,
        "café au lait\n",
        "python exited 1 (error): warning: ÿ",
    )
    assert res.notes == [
        "stdout is not UTF-8: the bytes that are not were read as Latin-1",
        "stderr is not UTF-8: the bytes that are not were read as Latin-1",
    ]


def test_read_gives_the_adapter_the_files_it_names_that_the_run_wrote(tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    res = ran(results, b"done\n")
    (results / "usage.json").write_text('{"tokens": 12}')
    outcome = agent.read(Named(), invocation(tmp_path, results), res)
    assert outcome.extra == {"files": {"usage.json": '{"tokens": 12}'}}  # absent.json was not written


def test_a_named_file_is_read_up_to_its_limit(tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    (results / "usage.json").write_text("u" * (agent.OUTPUT_READ_MAX + 5))
    outcome = agent.read(Named(), invocation(tmp_path, results), ran(results, b""))
    assert outcome.extra["files"] == {"usage.json": "u" * agent.OUTPUT_READ_MAX}


def test_an_adapter_naming_no_files_gets_none(tmp_path: Path) -> None:
    seen: list[object] = []

    class Plain(Adapter):
        name = "plain"
        binary = None

        def read(
            self, result: Result, stdout: str, stderr: str, files: Mapping[str, str] | None = None
        ) -> Outcome:
            seen.append(files)
            return Outcome(ok=True, final_message=stdout)

    (tmp_path / "usage.json").write_text("{}")
    assert agent.read(Plain(), invocation(tmp_path, tmp_path), ran(tmp_path, b"ok\n")).final_message == "ok\n"
    assert seen == [None]
