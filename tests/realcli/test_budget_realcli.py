"""The live spend cap against the real CLIs: a scripted model that never stops calling a harmless
tool (reading CONTROL.md), each turn reporting 50,000 tokens in and 20,000 out, until the task's
``max_cost_usd`` ends the run: claude by its own ``--max-budget-usd``, the others by the room's
meter (dispatch/run/spend.py) pricing the tokens they log per request from CONTROL.md ``prices:``.

Each test measures the overshoot, what the run spent past its cap, against one model turn's
cost, and asserts it is at most one turn. The spend is the CLI's own report (claude) or the
meter's sum (``cost-cap: ...``: opencode's stdout; codex's session rollout; gemini's chat
recording, copilot's event log and kimi's wire log, named by the session id control-room gave
them); the model server's requests bound what was sent: at most the turns counted and the one
in flight when the run was ended.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from modelserver import ModelServer, Tool

from control_room import errors

CAP = 1.0  # the task's max_cost_usd
# tokens in, out of each model turn: a context under every CLI's compaction threshold (copilot
# compacts past ~80% of its 128,000 tokens, in requests of its own that it logs no usage for)
USAGE = (50_000, 20_000)
PRICES = {"input": 3.0, "output": 15.0}  # USD per million: a turn is $0.15 + $0.30
TURN = (USAGE[0] * PRICES["input"] + USAGE[1] * PRICES["output"]) / 1e6
DELAY = 0.5  # seconds a model answer takes (a real one takes seconds; the meter polls every 0.1 s)


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


def capped_by_the_meter(r, turns: list[Any]) -> None:  # type: ignore[no-untyped-def]
    """The run was ended by the room's meter past its cap: the figure it names is the turns it
    counted priced from ``prices:``, kept as the run's spend; at most one turn past the cap, and
    at most one request in flight besides the ones counted."""
    spent, steps = metered(r.cause())
    assert spent == round(steps * TURN, 4) and spent > CAP
    meta = r.meta()
    assert (meta["cost_usd"], meta["cost_estimated"]) == (spent, True)  # the run's, for the daily budget
    said(meta["adapter"], spent, TURN, steps, len(turns))
    assert spent - CAP <= TURN, (spent, steps)
    assert steps <= len(turns) <= steps + 1, (steps, len(turns))


def test_opencode_is_ended_by_the_meter_on_its_step_finish(real) -> None:  # type: ignore[no-untyped-def]
    r, turns = endless(real, "opencode", lambda f: Tool("read", {"filePath": str(f)}), "/v1")
    capped_by_the_meter(r, turns)


def test_codex_is_ended_by_the_meter_reading_its_session_log(real) -> None:  # type: ignore[no-untyped-def]
    r, turns = endless(real, "codex", lambda f: Tool("exec_command", {"cmd": f"head -c 100 {f}"}), "/v1")
    capped_by_the_meter(r, turns)


def test_gemini_is_ended_by_the_meter_reading_its_chat_recording(real) -> None:  # type: ignore[no-untyped-def]
    r, turns = endless(real, "gemini", lambda f: Tool("read_file", {"file_path": str(f)}))
    capped_by_the_meter(r, turns)


def test_copilot_is_ended_by_the_meter_reading_its_event_log(real) -> None:  # type: ignore[no-untyped-def]
    r, turns = endless(real, "copilot", lambda f: Tool("view", {"path": str(f)}), "/v1")
    capped_by_the_meter(r, turns)


def test_kimi_is_ended_by_the_meter_reading_its_wire_log(real) -> None:  # type: ignore[no-untyped-def]
    r, turns = endless(real, "kimi", lambda f: Tool("ReadFile", {"path": str(f)}), "/v1")
    capped_by_the_meter(r, turns)


BROKEN = "I will write the module.\n\nbroken.py\n```python\ndef f(:\n    return 1\n```\n"  # whole edit format


def test_aider_is_ended_by_the_meter_on_its_tokens_lines(real) -> None:  # type: ignore[no-untyped-def]
    """aider makes no tool calls: it loops by reflecting (here on the lint error of the file the
    model writes, three times at most). Its ``Tokens: N sent, M received.`` line after each reply
    is its own count (streamed replies are counted by aider itself), priced from ``prices:``."""
    r = real("aider")
    price = {"input": 150.0, "output": 150.0}  # per million: a turn of ~3,000 tokens is ~$0.45
    control = r.room.control.read_text()
    r.room.control.write_text(
        re.sub(r"(?m)^prices: \{\}", f"prices: {{openai/mock-model: {price}}}", control)
    )
    r.task(adapter="aider", max_cost_usd=CAP, wall_clock_s=60, kill_condition="one failed round")
    with ModelServer(reply=BROKEN, delay=DELAY) as server:
        r.gateway("aider", server.url + "/v1", model="openai/mock-model")
        done = r.run("cycle")
        turns = [q for q in server.requests if isinstance(q.json, dict) and q.json.get("stream")]
    assert done.returncode == errors.FAILED, done.stdout + done.stderr
    spent, steps = metered(r.cause())
    out = (r.room.swarm / "results" / "t1" / "stdout.txt").read_text()
    counts = [(int(float(a.rstrip("k")) * (1000 if a.endswith("k") else 1)), int(b))
              for a, b in re.findall(r"^Tokens: ([\d.]+k?) sent, (\d+) received", out, re.M)]  # fmt: skip
    costs = [(a * price["input"] + b * price["output"]) / 1e6 for a, b in counts]
    assert steps == len(costs) < 4 and spent == round(sum(costs), 4) > CAP, (spent, counts)  # before its 4th
    said("aider", spent, costs[-1], steps, len(turns))
    assert spent - CAP <= costs[-1], (spent, costs)
    assert steps <= len(turns) <= steps + 1, (steps, len(turns))


def test_claudes_daily_token_budget_is_held_by_the_meter_reading_its_transcript(real) -> None:  # type: ignore[no-untyped-def]
    """Claude Code has a dollar flag but none for tokens: a subscription's ``daily_budget_tokens``
    is held by the meter, reading each message's usage in the transcript of the session id
    control-room gave it."""
    r = real("claude")
    left, turn = 100_000, sum(USAGE)
    control = r.room.control.read_text()
    r.room.control.write_text(re.sub(r"(?m)^daily_budget_tokens: 0", f"daily_budget_tokens: {left}", control))
    r.task(adapter="claude", max_cost_usd=2, wall_clock_s=60, kill_condition="one failed round")
    with ModelServer(tool=Tool("Read", {"file_path": str(r.room.control)}), endless=True, usage=USAGE,
                     delay=DELAY) as server:  # fmt: skip
        r.gateway("claude", server.url)
        done = r.run("cycle")
        turns = [q for q in server.requests if isinstance(q.json, dict) and q.json.get("tools")]
    assert done.returncode == errors.FAILED, done.stdout + done.stderr
    found = re.fullmatch(r"cost-cap: ([\d,]+) tokens over (\d+) step\(s\), past the 100,000 left today of "
                         r"daily_budget_tokens", r.cause())  # fmt: skip
    assert found, r.cause()
    used, steps = int(found[1].replace(",", "")), int(found[2])
    assert used == steps * turn > left and used - left <= turn, (used, steps)
    assert steps <= len(turns) <= steps + 1, (steps, len(turns))
    print(f"\nclaude: {left:,} tokens left today, used {used:,} over {steps} turn(s), one turn {turn:,}")
