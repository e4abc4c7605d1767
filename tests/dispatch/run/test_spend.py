"""dispatch.run.spend: a run's streamed usage summed as it is written, priced where the CLI
reports no dollars, and the cap it crosses named."""

from __future__ import annotations

import json
from pathlib import Path

from control_room import adapters
from control_room.dispatch.run import spend

TURN = {"type": "turn.completed", "usage": {"input_tokens": 100_000, "output_tokens": 10_000}}
PRICES = {"m1": {"input": 1.0, "output": 5.0}}  # a turn: $0.10 + $0.05


def test_tokens_are_priced_and_the_cap_named_once_crossed(tmp_path: Path) -> None:
    out = tmp_path / "stdout.txt"
    out.write_text("")
    m = spend.meter(adapters.get("codex"), out, {"max_cost_usd": 0.5}, "m1", PRICES)
    assert m is not None
    with out.open("a") as f:
        f.write('{"type": "thread.started"}\nnot json\n' + json.dumps(TURN) + "\n" + json.dumps(TURN))
    assert m() == ""  # the second turn's line is not whole yet
    with out.open("a") as f:
        f.write("\n" + json.dumps(TURN) + "\n")
    assert m() == ""  # three whole turns: $0.45, under the cap
    with out.open("a") as f:
        f.write(json.dumps(TURN) + "\n")
    assert m() == (
        "cost-cap: $0.6000 (estimated) spent over 4 step(s) (400000 tokens in, 40000 out), "
        "past max_cost_usd $0.5"
    )


def test_reported_dollars_are_taken_as_they_are(tmp_path: Path) -> None:
    out = tmp_path / "stdout.txt"
    step = {"type": "step_finish", "part": {"tokens": {"input": 10, "output": 2}, "cost": 0.3}}
    out.write_text(json.dumps(step) + "\n" + json.dumps(step) + "\n")
    m = spend.meter(adapters.get("opencode"), out, {"max_cost_usd": 0.5}, None, {})
    assert m is not None
    assert m() == "cost-cap: $0.6000 spent over 2 step(s) (20 tokens in, 4 out), past max_cost_usd $0.5"


def test_nothing_is_capped_live_where_nothing_streams_or_the_run_is_free(tmp_path: Path) -> None:
    out = tmp_path / "stdout.txt"
    assert spend.meter(adapters.get("gemini"), out, {"max_cost_usd": 1}, None, {}) is None
    assert spend.meter(adapters.get("codex"), out, {"max_cost_usd": 0}, None, {}) is None
