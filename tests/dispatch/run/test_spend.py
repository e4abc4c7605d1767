"""dispatch.run.spend: a run's streamed usage summed as it is written, priced where the CLI
reports no dollars, and the cap it crosses named."""

from __future__ import annotations

import json
from pathlib import Path

from control_room import adapters
from control_room.adapters.base import Invocation, Outcome
from control_room.dispatch.run import spend

TURN = {"type": "turn.completed", "usage": {"input_tokens": 100_000, "output_tokens": 10_000}}
PRICES = {"m1": {"input": 1.0, "output": 5.0}}  # a turn: $0.10 + $0.05


def run(task: dict[str, object], model: str | None, max_turns: int = 0) -> Invocation:
    """The invocation of a run of ``task`` on ``model``, as the cycle makes it."""
    return Invocation(task, "the brief", Path("brief.md"), Path("."), model=model, max_turns=max_turns)


def test_tokens_are_priced_and_the_cap_named_once_crossed(tmp_path: Path) -> None:
    out = tmp_path / "stdout.txt"
    out.write_text("")
    m = spend.meter(adapters.get("codex"), run({"max_cost_usd": 0.5}, "m1"), out, PRICES)
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
    m = spend.meter(adapters.get("opencode"), run({"max_cost_usd": 0.5}, None), out, {})
    assert m is not None
    assert m() == "cost-cap: $0.6000 spent over 2 step(s) (20 tokens in, 4 out), past max_cost_usd $0.5"


def test_nothing_is_capped_live_where_nothing_is_reported_or_the_run_is_free(tmp_path: Path) -> None:
    out = tmp_path / "stdout.txt"
    assert spend.meter(adapters.get("probe"), run({"max_cost_usd": 1}, None), out, {}) is None
    assert spend.meter(adapters.get("codex"), run({"max_cost_usd": 0}, None), out, {}) is None


def test_a_daily_token_budget_ends_a_run_that_would_pass_it(tmp_path: Path) -> None:
    out = tmp_path / "stdout.txt"
    out.write_text(json.dumps(TURN) + "\n")
    m = spend.meter(adapters.get("codex"), run({"max_cost_usd": 0}, "m1"), out, {}, tokens_left=200_000)
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
    m = spend.meter(adapters.get("opencode"), run({"max_cost_usd": 0.25}, "m1"), out, PRICES)
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
    m = spend.meter(adapters.get("codex"), run({"max_cost_usd": 0.5}, "m1"), out, PRICES, home=home)
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
    m = spend.meter(adapters.get("codex"), run({"max_cost_usd": 0.25}, "m1"), out, PRICES)
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


def test_a_run_past_its_max_turns_is_ended_whatever_it_spent(tmp_path: Path) -> None:
    out = tmp_path / "stdout.txt"
    step = {"type": "step_finish", "part": {"tokens": {"input": 10, "output": 1}, "cost": 0.001}}
    out.write_text((json.dumps(step) + "\n") * 3)
    free = run({"max_cost_usd": 0}, None, max_turns=3)  # a free run with a turn cap is still watched
    m = spend.meter(adapters.get("opencode"), free, out, {})
    assert m is not None and m() == ""  # three turns: at the cap, not past it
    with out.open("a") as f:
        f.write(json.dumps(step) + "\n")
    assert m() == "turn-cap: 4 model turns, past max_turns 3"


def test_a_log_named_before_the_run_is_read_and_a_request_logged_twice_counts_once(tmp_path: Path) -> None:
    # gemini 0.61.0 writes a model message into its chat recording, then writes it again with
    # its tool calls, under one id; the file is named after the session id control-room gave it
    home, out = tmp_path / "home", tmp_path / "stdout.txt"
    out.write_text("")
    inv = run({"max_cost_usd": 0.5}, "m1")
    m = spend.meter(adapters.get("gemini"), inv, out, PRICES, home=home)
    assert m is not None and m() == ""  # not written yet
    chat = home / "tmp" / "room" / "chats" / f"session-2026-12-07T11-28-{inv.session[:8]}.jsonl"
    chat.parent.mkdir(parents=True)
    said = {"id": "m1", "type": "gemini", "tokens": {"input": 100_000, "output": 10_000}}
    lines = [{"sessionId": inv.session}, said, {"$set": {"lastUpdated": "x"}}, {**said, "toolCalls": []}]
    chat.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert m() == "" and m.steps == 1  # $0.15
    with chat.open("a") as f:
        for k in (2, 3, 4):
            said = {**said, "id": f"m{k}"}
            f.write(json.dumps(said) + "\n" + json.dumps({**said, "toolCalls": []}) + "\n")
    assert m() == (
        "cost-cap: $0.6000 (estimated) spent over 4 step(s) (400000 tokens in, 40000 out), "
        "past max_cost_usd $0.5"
    )


def test_a_cli_that_prints_text_is_read_by_its_lines(tmp_path: Path) -> None:
    # aider prints "Tokens: ... Cost: ..." after each model reply, between the reply's own lines
    out = tmp_path / "stdout.txt"
    tokens = "Tokens: 4.2k sent, 512 received. Cost: $0.30 message, $0.30 session."
    reply = f"Here is the change.\n{{not json\n{tokens}\n"
    out.write_text(reply)
    m = spend.meter(adapters.get("aider"), run({"max_cost_usd": 0.5}, None), out, {})
    assert m is not None and m() == ""
    with out.open("a") as f:
        f.write(reply.replace("$0.30 session", "$0.60 session"))
    assert m() == "cost-cap: $0.6000 spent over 2 step(s) (8400 tokens in, 1024 out), past max_cost_usd $0.5"
