"""#22's proof with the real CLIs: a room with two adapters, one rate limited by the model server
("try again in 600s"), finishes every task on the other, its fallback, without a round charged
for the limit. Two pairs: claude (which gives up at once) falling back on codex, and opencode
(which waits out the 600 s, until its wall clock kills it: read as the refusal it waited on)
falling back on gemini."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest
from conftest import KEY, Real
from install import ensure
from modelserver import ModelServer

from control_room import errors
from control_room.ledger import read as ledger_read
from control_room.room import cooldowns, scaffold

# the limited adapter and its path on the model server, its fallback and path, the tasks' wall
# clock, and how long it cools down: claude passes on no reset time (a back-off of a minute),
# opencode's words say the provider's 600 s
PAIRS = [
    ("claude", "", "codex", "/v1", 120, 60),
    ("opencode", "/v1", "gemini", "", 20, 600),
]


@pytest.mark.parametrize(("limited_cli", "path", "fallback", "fallback_path", "wall", "cools_s"), PAIRS)
def test_a_rate_limited_adapter_costs_no_round_and_its_fallback_finishes_every_task(
    exe: str,
    tmp_path: Path,
    limited_cli: str,
    path: str,
    fallback: str,
    fallback_path: str,
    wall: int,
    cools_s: int,
) -> None:
    start = time.time()
    root, state = tmp_path / "room", tmp_path / "state"
    scaffold.init(root)
    state.mkdir()
    r = Real(exe, root, state, ensure(limited_cli))
    r.env["PATH"] = f"{ensure(fallback)}{os.pathsep}{r.env['PATH']}"
    r.env["REALCLI_KEY"] = KEY
    for k in range(1, 4):
        r.task(f"t{k}", adapter=limited_cli, fallback=[fallback], priority=10 - k, wall_clock_s=wall)
    with ModelServer(mode="rate_limit", retry_after=600) as limited, ModelServer() as fine:
        setup = {"api_key_env": "REALCLI_KEY", "model": "mock-model", "isolated": True}
        adapters = {
            limited_cli: {"base_url": limited.url + path, **setup},
            fallback: {"base_url": fine.url + fallback_path, **setup},
        }
        text, n = re.subn(
            r"(?m)^adapters: \{\}.*$", f"adapters: {json.dumps(adapters)}", r.room.control.read_text()
        )
        assert n == 1
        r.room.control.write_text(text)
        first = r.run("cycle")
        asked = len(limited.requests)
        codes = [r.run("cycle").returncode for _ in range(3)]
        assert len(limited.requests) == asked  # the limited adapter is not asked again while it cools
    assert first.returncode == errors.PROVIDER, first.stdout + first.stderr
    assert codes == [errors.PASSED] * 3
    results = [e for e in ledger_read.entries(r.room.ledger) if e.event == "result"]
    assert [(e.task, e.adapter, e.outcome) for e in results] == [
        ("t1", fallback, "pass"), ("t2", fallback, "pass"), ("t3", fallback, "pass")]  # fmt: skip
    for k in range(1, 4):
        done = json.loads((r.room.state_dir("done") / f"t{k}.json").read_text())
        assert done.get("rounds", 0) == 0
    faults = [e for e in ledger_read.entries(r.room.ledger) if e.event == "provider-fault"]
    assert [(e.task, e.adapter) for e in faults] == [("t1", limited_cli)]
    (cool,) = cooldowns.load(r.room).values()
    assert (cool.key, cool.kind) == (f"{limited_cli}/mock-model", "rate-limit")
    assert start + cools_s <= cool.until <= time.time() + cools_s
