"""The live spend cap against the real CLIs: a scripted model that never stops calling a harmless
tool (reading CONTROL.md), each turn reporting 100,000 tokens in and 10,000 out, until the task's
``max_cost_usd`` ends the run: claude by its own ``--max-budget-usd``, opencode and codex by the
room's meter (dispatch/run/spend.py) pricing their streamed tokens from CONTROL.md ``prices:``.

Each test measures the overshoot, what the run spent past its cap, against one model turn's
cost, and asserts it is at most one turn. The spend is the CLI's own report (claude) or the
meter's sum (``cost-cap: ...``); the model server's requests bound what was sent: at most the
turns counted and the one in flight when the run was ended.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from modelserver import ModelServer, Tool

from control_room import errors

CAP = 1.0  # the task's max_cost_usd
USAGE = (100_000, 10_000)  # tokens in, out of each model turn
PRICES = {"input": 3.0, "output": 15.0}  # USD per million: a turn is $0.30 + $0.15
TURN = (USAGE[0] * PRICES["input"] + USAGE[1] * PRICES["output"]) / 1e6
DELAY = 0.2  # seconds a model answer takes


def endless(real, name: str, call: Callable[[Path], Tool], path: str = "") -> tuple[Any, list[Any]]:  # type: ignore[no-untyped-def]
    """One cycle of a capped task on the real CLI ``name`` against a model that keeps making the
    tool call ``call(CONTROL.md)``: the room and the model requests that offered tools (the
    agent's turns)."""
    r = real(name)
    tool = call(r.room.control)
    control = r.room.control.read_text()
    r.room.control.write_text(re.sub(r"(?m)^prices: \{\}", f"prices: {{mock-model: {PRICES}}}", control))
    r.task(adapter=name, max_cost_usd=CAP, wall_clock_s=60, kill_condition="one failed round")
    with ModelServer(tool=tool, endless=True, usage=USAGE, delay=DELAY) as server:
        r.gateway(name, server.url + path)
        done = r.run("cycle")
        turns = [q for q in server.requests if isinstance(q.json, dict) and q.json.get("tools")]
    assert done.returncode == errors.FAILED, done.stdout + done.stderr
    assert len(turns) >= 2 and all("# The gate." in q.text for q in turns[1:]), turns  # the tool ran
    assert r.meta()["timed_out"] is False, r.meta()  # ended by its cap, not its wall clock
    return r, turns


def metered(error: str) -> tuple[float, int]:
    """The spend and the steps a ``cost-cap`` failure names."""
    found = re.match(r"cost-cap: \$([0-9.]+) \(estimated\) spent over (\d+) step\(s\)", error)
    assert found, error
    return float(found[1]), int(found[2])


def said(name: str, spent: float, turn: float, counted: int, sent: int) -> None:
    """The figures, for the notes (``pytest -s``)."""
    print(f"\n{name}: cap ${CAP:g}, spent ${spent:.4f} over {counted} turn(s) ({sent} sent), "
          f"one turn ${turn:.4f}, overshoot ${spent - CAP:.4f}")  # fmt: skip


def test_claude_stops_itself_at_its_max_budget_usd(real) -> None:  # type: ignore[no-untyped-def]
    r, turns = endless(real, "claude", lambda f: Tool("Read", {"file_path": str(f)}))
    meta = r.meta()
    assert meta["argv"][-2:] == ["--max-budget-usd", "1"]
    spent, turn = meta["cost_usd"], meta["cost_usd"] / len(turns)  # claude's own prices, one per turn
    assert r.cause() == (
        f"cost-cap: ${spent:.4f} spent over {len(turns)} turn(s); claude stopped itself: "
        "Reached maximum budget ($1)"
    )
    assert meta["exit_code"] == 1 and spent > CAP  # it checks after each turn: never before the cap
    said("claude", spent, turn, len(turns), len(turns))
    assert spent - CAP <= turn, (spent, turn, len(turns))


def test_opencode_is_ended_by_the_meter_on_its_step_finish(real) -> None:  # type: ignore[no-untyped-def]
    r, turns = endless(real, "opencode", lambda f: Tool("read", {"filePath": str(f)}), "/v1")
    spent, steps = metered(r.cause())
    assert spent == round(steps * TURN, 4) and spent > CAP
    meta = r.meta()
    assert (meta["cost_usd"], meta["cost_estimated"]) == (spent, True)  # the run's, for the daily budget
    said(meta["adapter"], spent, TURN, steps, len(turns))
    assert spent - CAP <= TURN, (spent, steps)
    assert steps <= len(turns) <= steps + 1, (steps, len(turns))  # at most one request in flight


def test_codex_is_ended_by_the_meter_reading_its_session_log(real) -> None:  # type: ignore[no-untyped-def]
    r, turns = endless(real, "codex", lambda f: Tool("exec_command", {"cmd": f"head -c 100 {f}"}), "/v1")
    spent, steps = metered(r.cause())
    assert spent == round(steps * TURN, 4) and spent > CAP
    meta = r.meta()
    assert (meta["cost_usd"], meta["cost_estimated"]) == (spent, True)  # the run's, for the daily budget
    said(meta["adapter"], spent, TURN, steps, len(turns))
    assert spent - CAP <= TURN, (spent, steps)
    assert steps <= len(turns) <= steps + 1, (steps, len(turns))  # at most one request in flight
