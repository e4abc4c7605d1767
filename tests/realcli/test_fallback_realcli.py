"""#22's proof with the real CLIs: a room with two adapters, claude rate limited by the model
server, finishes every task on codex, its fallback, without a round charged for the limit."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from conftest import KEY, Real
from install import ensure
from modelserver import ModelServer

from control_room import errors
from control_room.ledger import read as ledger_read
from control_room.room import cooldowns, scaffold


def test_a_rate_limited_claude_costs_no_round_and_codex_finishes_every_task(exe: str, tmp_path: Path) -> None:
    root, state = tmp_path / "room", tmp_path / "state"
    scaffold.init(root)
    state.mkdir()
    r = Real(exe, root, state, ensure("claude"))
    r.env["PATH"] = f"{ensure('codex')}{os.pathsep}{r.env['PATH']}"
    r.env["REALCLI_KEY"] = KEY
    for k in range(1, 4):
        r.task(f"t{k}", adapter="claude", fallback=["codex"], priority=10 - k)
    with ModelServer(mode="rate_limit", retry_after=600) as limited, ModelServer() as fine:
        setup = {"api_key_env": "REALCLI_KEY", "model": "mock-model", "isolated": True}
        adapters = {
            "claude": {"base_url": limited.url, **setup},
            "codex": {"base_url": f"{fine.url}/v1", **setup},
        }
        text, n = re.subn(
            r"(?m)^adapters: \{\}.*$", f"adapters: {json.dumps(adapters)}", r.room.control.read_text()
        )
        assert n == 1
        r.room.control.write_text(text)
        first = r.run("cycle")
        asked_claude = len(limited.requests)
        codes = [r.run("cycle").returncode for _ in range(3)]
        assert len(limited.requests) == asked_claude  # claude is not asked again while it cools
    assert first.returncode == errors.PROVIDER, first.stdout + first.stderr
    assert codes == [errors.PASSED] * 3
    results = [e for e in ledger_read.entries(r.room.ledger) if e.event == "result"]
    assert [(e.task, e.adapter, e.outcome) for e in results] == [
        ("t1", "codex", "pass"), ("t2", "codex", "pass"), ("t3", "codex", "pass")]  # fmt: skip
    for k in range(1, 4):
        done = json.loads((r.room.state_dir("done") / f"t{k}.json").read_text())
        assert done.get("rounds", 0) == 0
    faults = [e for e in ledger_read.entries(r.room.ledger) if e.event == "provider-fault"]
    assert [(e.task, e.adapter) for e in faults] == [("t1", "claude")]
    (cool,) = cooldowns.load(r.room).values()
    assert (cool.key, cool.kind) == ("claude/mock-model", "rate-limit")
