"""dispatch.run.spend: a run's streamed usage summed as it is written, priced where the CLI
reports no dollars, and the cap it crosses named."""

from __future__ import annotations

import json
from pathlib import Path

from control_room import adapters
from control_room.adapters.base import Outcome
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


def test_a_daily_token_budget_ends_a_run_that_would_pass_it(tmp_path: Path) -> None:
    out = tmp_path / "stdout.txt"
    out.write_text(json.dumps(TURN) + "\n")
    m = spend.meter(adapters.get("codex"), out, {"max_cost_usd": 0}, "m1", {}, tokens_left=200_000)
    assert m is not None and m() == ""  # 110,000 tokens, free: no dollar cap
    with out.open("a") as f:
        f.write(json.dumps(TURN) + "\n")
    assert (
        m() == "cost-cap: 220,000 tokens over 2 step(s), past the 200,000 left today of daily_budget_tokens"
    )


def test_opencodes_cost_of_0_for_an_unpriced_model_is_priced_from_prices(tmp_path: Path) -> None:
    # the real opencode 1.18.33 reports "cost": 0 for a model its config gives no price (tests/realcli)
    out = tmp_path / "stdout.txt"
    step = {"type": "step_finish", "part": {"tokens": {"input": 100_000, "output": 10_000}, "cost": 0}}
    out.write_text(json.dumps(step) + "\n" + json.dumps(step) + "\n")
    m = spend.meter(adapters.get("opencode"), out, {"max_cost_usd": 0.25}, "m1", PRICES)
    assert m is not None
    assert m() == (
        "cost-cap: $0.3000 (estimated) spent over 2 step(s) (200000 tokens in, 20000 out), "
        "past max_cost_usd $0.25"
    )


def test_codexs_session_log_named_by_its_thread_is_read_per_request(tmp_path: Path) -> None:
    # codex exec --json prints turn.completed only when its whole turn is over; its rollout in
    # CODEX_HOME logs a token_count after each model request (as the real codex 0.171.0 does)
    home, out = tmp_path / "home", tmp_path / "stdout.txt"
    other = home / "sessions/2026/12/04/rollout-2026-12-04T10-00-00-other-thread.jsonl"
    other.parent.mkdir(parents=True)
    count = {"type": "event_msg", "payload": {"type": "token_count", "info": {
        "total_token_usage": {"input_tokens": 900_000, "output_tokens": 90_000},
        "last_token_usage": {"input_tokens": 100_000, "output_tokens": 10_000}}}}  # fmt: skip
    other.write_text((json.dumps(count) + "\n") * 9)  # another run's session: never counted
    out.write_text('{"type":"thread.started","thread_id":"0a1b-2c3d"}\n{"type":"turn.started"}\n')
    m = spend.meter(adapters.get("codex"), out, {"max_cost_usd": 0.5}, "m1", PRICES, home=home)
    assert m is not None and m() == ""  # its log is not written yet
    log = home / "sessions/2026/12/04/rollout-2026-12-04T10-00-01-0a1b-2c3d.jsonl"
    log.write_text('{"type":"session_meta","payload":{}}\n' + (json.dumps(count) + "\n") * 3)
    assert m() == ""  # three requests: $0.45
    with log.open("a") as f:
        f.write(json.dumps(count) + "\n")
    with out.open("a") as f:  # stdout's own sum of the same requests is not counted again
        f.write(
            json.dumps({"type": "turn.completed", "usage": count["payload"]["info"]["total_token_usage"]})
        )
        f.write("\n")
    assert m() == (
        "cost-cap: $0.6000 (estimated) spent over 4 step(s) (400000 tokens in, 40000 out), "
        "past max_cost_usd $0.5"
    )


def test_what_the_meter_counted_is_the_runs_where_the_cli_said_less(tmp_path: Path) -> None:
    out = tmp_path / "stdout.txt"
    out.write_text(json.dumps(TURN) + "\n" + json.dumps(TURN) + "\n")
    m = spend.meter(adapters.get("codex"), out, {"max_cost_usd": 0.25}, "m1", PRICES)
    assert m is not None and m().startswith("cost-cap: $0.3000 (estimated)")
    said = Outcome(ok=False, final_message="")  # ended mid-turn: codex printed no usage of its own
    assert spend.settle(m, said) is True
    assert (said.input_tokens, said.output_tokens, said.cost_usd) == (200_000, 20_000, 0.3)
    reported = Outcome(ok=True, final_message="", input_tokens=300_000, output_tokens=30_000, cost_usd=0.9)
    assert spend.settle(m, reported) is False  # the CLI's own figures, larger, stand
    assert (reported.input_tokens, reported.output_tokens, reported.cost_usd) == (300_000, 30_000, 0.9)
    assert spend.settle(None, reported) is False


def test_a_run_that_reported_only_tokens_is_priced_after_it_and_marked_estimated() -> None:
    from control_room.adapters.base import Outcome  # the contract the runner hands over

    tokens_only = Outcome(ok=True, final_message="", input_tokens=200_000, output_tokens=20_000)
    assert spend.price(tokens_only, PRICES, "m1") is True
    assert tokens_only.cost_usd == 0.3  # $0.20 in + $0.10 out
    given = Outcome(ok=True, final_message="", input_tokens=10, output_tokens=1, cost_usd=0.5)
    assert spend.price(given, PRICES, "m1") is False and given.cost_usd == 0.5  # the CLI's own figure
    unknown = Outcome(ok=True, final_message="", input_tokens=10, output_tokens=1)
    assert spend.price(unknown, PRICES, "other") is False and unknown.cost_usd is None
