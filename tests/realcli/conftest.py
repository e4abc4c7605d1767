"""The real-CLI tier (``pytest -m realcli``): each real agent CLI, installed at its pinned
version (``install.py``), driven through ``control-room cycle`` in a fresh room against the
model server of ``tests/modelserver.py`` on 127.0.0.1. Nothing reaches a vendor's service, and
no test touches the developer's own home: each CLI's state lives in the test's folders."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from install import ensure
from modelserver import ModelServer

from control_room import adapters, errors, proc
from control_room.adapters import faults
from control_room.adapters.faults import Fault
from control_room.ledger import read as ledger_read
from control_room.ledger import result
from control_room.room import cooldowns, scaffold
from control_room.room.layout import Room

KEY = "realcli-test-key"  # a one-letter key would be masked by copilot wherever it appears


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).parent == here:
            item.add_marker(pytest.mark.realcli)


class Real:
    """A fresh room, the installed `control-room`, one real CLI on PATH, its state in ``state``."""

    def __init__(self, exe: str, root: Path, state: Path, bin_dir: Path) -> None:
        self.exe, self.room, self.state, self.bin_dir = exe, Room(root), state, bin_dir
        self.env: dict[str, str] = {k: v for k, v in os.environ.items() if k != "CONTROL_ROOM"}
        self.env.update(
            CONTROL_ROOM=str(root),
            CONTROL_ROOM_WRITER="realcli",
            PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
            HOME=str(state),  # never the developer's home
        )

    def gateway(self, name: str, url: str, **more: Any) -> None:
        """Point ``name`` at ``url`` the way a user would: CONTROL.md ``adapters:`` (the key in
        an environment variable, the CLI's state in a folder of its own inside the room)."""
        setup = {
            "base_url": url,
            "api_key_env": "REALCLI_KEY",
            "model": "mock-model",
            "isolated": True,
            **more,
        }
        text, n = re.subn(r"(?m)^adapters: \{\}.*$", f"adapters: {json.dumps({name: setup})}",
                          self.room.control.read_text())  # fmt: skip
        assert n == 1, "the CONTROL.md template has no `adapters: {}` line"
        self.room.control.write_text(text)
        self.env["REALCLI_KEY"] = KEY

    def allow_extra_args(self) -> None:
        control = self.room.control.read_text().replace("allow_extra_args: false", "allow_extra_args: true")
        self.room.control.write_text(control)

    def task(self, task_id: str = "t1", **fields: Any) -> None:
        task = {"id": task_id, "objective": "answer with the report the brief asks for",
                "falsifier": "no report comes back", "validator": ["true"], "max_cost_usd": 1,
                "wall_clock_s": 120, "kill_condition": "two failed rounds", **fields}  # fmt: skip
        path = self.room.state_dir("queue") / f"{task_id}.json"
        path.write_text(json.dumps({k: v for k, v in task.items() if v is not None}))

    def run(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([self.exe, *args], cwd=self.room.root, env=self.env, capture_output=True,
                              text=True, timeout=timeout)  # fmt: skip
        assert "Traceback" not in done.stderr, done.stderr
        return done

    def meta(self, task_id: str = "t1") -> dict[str, Any]:
        return json.loads((self.room.swarm / "results" / task_id / "meta.json").read_text())  # type: ignore[no-any-return]

    def cause(self, task_id: str = "t1") -> str:
        """The agent's error of a failed round, as meta.json has it, after checking that the
        ledger's `result` line and the task's next brief (``last_failure``) carry it too."""
        error = str(self.meta(task_id)["agent_error"])
        entries = [
            e for e in ledger_read.entries(self.room.ledger) if e.event == "result" and e.task == task_id
        ]
        failed = result.read(entries[-1].detail).failed
        head = " ".join(error.split())[:60]
        assert entries[-1].outcome == "fail" and head in failed, (error, failed)
        task = json.loads(self.room.state_dir("queue").joinpath(f"{task_id}.json").read_text())
        assert head in " ".join(task["last_failure"].split()), task
        return error

    def last_line(self) -> str:
        return self.room.ledger.read_text().splitlines()[-1]

    def refused(self, task_id: str = "t1") -> tuple[str, str]:
        """A run its provider refused (no round used): the kind the cooldown it started has,
        and the ``provider-fault`` ledger line's detail, which quotes the CLI."""
        (cool,) = cooldowns.load(self.room).values()
        entries = [e for e in ledger_read.entries(self.room.ledger) if e.event == "provider-fault"]
        assert entries and entries[-1].task == task_id, entries
        return cool.kind, entries[-1].detail

    def fault(self, task_id: str = "t1") -> Fault | None:
        """The provider fault the adapter reads from the round's captured output (results/ID:
        stdout.txt, stderr.txt, the files it names, meta.json's exit code), as the cycle does."""
        meta, folder = self.meta(task_id), self.room.swarm / "results" / task_id
        adapter = adapters.get(str(meta["adapter"]))
        out, err = proc.Stream(folder / "stdout.txt"), proc.Stream(folder / "stderr.txt")
        res = proc.Result(
            meta["argv"], meta["exit_code"], meta["duration_s"], out, err, timed_out=meta["timed_out"]
        )
        stdout, stderr = (folder / "stdout.txt").read_text(), (folder / "stderr.txt").read_text()
        named = {p.name: p.read_text() for p in folder.glob("*-usage.json")}  # copilot's usage file
        outcome = adapter.read(res, stdout, stderr, named) if named else adapter.read(res, stdout, stderr)
        return adapter.fault(res, stdout, stderr, outcome)


@dataclass
class Refused:
    kind: str | None  # the fault's kind (None: the adapter read none)
    reset_at: float | None  # the reset time the adapter read from the CLI, if any
    exit_code: int | None  # the CLI's, where the round kept its meta.json (context: a failed round)
    before: float  # when the cycle started
    after: float  # when the fault was read

    def reads_as(self, kind: str, reset_s: float | None) -> bool:
        """The fault ``kind``, with a reset ``reset_s`` after the provider said it (None: the
        CLI passed on no reset time)."""
        return self.kind == kind and (
            self.resets_in(reset_s) if reset_s is not None else self.reset_at is None
        )

    def resets_in(self, seconds: float) -> bool:
        """The reset is ``seconds`` after the provider said it (between the cycle's start and
        the reading)."""
        return self.reset_at is not None and self.before + seconds <= self.reset_at <= self.after + seconds


# The model server's refusals (tests/modelfaults.py): mode, the fault's kind, its reset in seconds
# (the server's retry-after, 1 s, where the CLI passes it on)
MODES = [
    ("rate_limit", faults.RATE_LIMIT, 1),
    ("overloaded", faults.OVERLOADED, None),
    ("quota", faults.QUOTA, None),
    ("context", faults.CONTEXT, None),
]


def reads_as(got: Refused, mode: str, kind: str, reset_s: int | None, context_exit: int) -> None:
    """The refusal of ``mode`` was read as ``kind`` with its reset; a context overflow (the task's
    failed round) kept the CLI's exit code ``context_exit``."""
    assert got.reads_as(kind, reset_s), got
    if mode == "context":
        assert got.exit_code == context_exit, got


@pytest.fixture
def refusal(exe: str, tmp_path: Path) -> Callable[..., Refused]:
    """``refusal(name, mode, path="/v1", wall_clock_s=120, retry_after=1, **setup)``: one cycle
    of a task on the real CLI ``name`` in a fresh room against the model server in ``mode``
    (``retry_after`` 1 s by default: a CLI that waits out retry-after before its own retries
    waits little; a CLI that retries for longer than ``wall_clock_s`` is killed waiting, and its
    time-out read as the refusal it waited on), and the fault its adapter read: for a provider's
    refusal, as the cooldown it started has it (no round, no meta.json); for a context overflow
    (a failed round), read again from the round's captured output."""

    def run(
        name: str, mode: str, path: str = "/v1", wall_clock_s: int = 120, retry_after: int = 1, **setup: Any
    ) -> Refused:
        root, state = tmp_path / mode / "room", tmp_path / mode / "state"
        scaffold.init(root)
        state.mkdir()
        r = Real(exe, root, state, ensure(name))
        r.task(adapter=name, wall_clock_s=wall_clock_s)
        with ModelServer(mode=mode, retry_after=retry_after) as server:
            r.gateway(name, server.url + path, **setup)
            before = time.time()
            done = r.run("cycle")
        if mode == "context":  # the task's: a failed round
            assert done.returncode == errors.FAILED, done.stdout + done.stderr
            found = r.fault()
            kind, reset = (found.kind, found.reset_at) if found else (None, None)
            return Refused(kind, reset, r.meta()["exit_code"], before, time.time())
        assert done.returncode == errors.PROVIDER, done.stdout + done.stderr  # no round used
        (cool,) = cooldowns.load(r.room).values()
        return Refused(cool.kind, cool.until if cool.given else None, None, before, time.time())

    return run


@pytest.fixture
def real(exe: str, tmp_path: Path) -> Callable[[str], Real]:
    def make(name: str) -> Real:
        bin_dir = ensure(name)  # an install that fails raises with the CLI's name
        root, state = tmp_path / "room", tmp_path / "state"
        scaffold.init(root)
        state.mkdir()
        return Real(exe, root, state, bin_dir)

    return make
