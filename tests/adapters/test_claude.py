"""The claude adapter against tests/fakes/claude (numbers documented in the fake)."""

import json
from pathlib import Path

import pytest
from harness import LIMITED, SCENARIOS, Spec, capped, check, execute, invocation, refused

from control_room.adapters.base import Setup
from control_room.adapters.claude import Claude
from control_room.proc import Result, Stream

SPEC = Spec(Claude(), extra_args=["--max-turns", "3"], input_tokens=1200, output_tokens=345, cost_usd=0.0123)
GATEWAY = Spec(Claude(), setup=Setup(base_url="http://127.0.0.1:9", api_key_env="GATEWAY_KEY", isolated=True),
               env={"GATEWAY_KEY": "sk-from-the-env"}, input_tokens=1200, output_tokens=345,
               cost_usd=0.0123)  # fmt: skip


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_contract(scenario, tmp_path):
    check(SPEC, scenario, tmp_path)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_contract_through_a_gateway(scenario, tmp_path):
    check(GATEWAY, scenario, tmp_path)


def test_argv(tmp_path):
    inv = invocation(tmp_path, SPEC)
    assert SPEC.adapter.command(inv) == [
        "claude",
        "-p",
        "--output-format",
        "json",
        "--session-id",
        inv.session,
        "--model",
        "test-model",
        "--max-turns",
        "3",
    ]


def test_by_default_the_environment_is_the_users_own(tmp_path):
    inv = invocation(tmp_path, SPEC)
    env = {"HOME": "/home/me", "PATH": "/bin"}
    assert SPEC.adapter.env(inv, dict(env)) == env
    assert SPEC.adapter.prepare(inv) == {}


def test_a_gateway_setup_sets_the_endpoint_the_key_the_home_and_no_retries(tmp_path):
    run = check(GATEWAY, "success", tmp_path)
    env = run.log[0]["env"]
    assert env["HOME"] == str(tmp_path / "state")
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"
    assert env["ANTHROPIC_API_KEY"] == "sk-from-the-env"
    assert env["CLAUDE_CODE_MAX_RETRIES"] == "0"
    assert (env["DISABLE_TELEMETRY"], env["DISABLE_AUTOUPDATER"],
            env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"]) == ("1", "1", "1")  # fmt: skip
    assert run.files == {}  # nothing in the state folder but what claude writes there itself


def test_an_isolated_local_model_without_a_key_gets_the_placeholder(tmp_path):
    spec = Spec(Claude(), setup=Setup(base_url="http://127.0.0.1:9", isolated=True))
    inv = invocation(tmp_path, spec)
    env = spec.adapter.env(inv, {"ANTHROPIC_API_KEY": "the user's own"})
    assert env["ANTHROPIC_API_KEY"] == "none"


def test_an_endpoint_down_is_quoted_as_the_cause(tmp_path):
    run = execute(GATEWAY, invocation(tmp_path, GATEWAY), tmp_path, "down")
    assert run.result.exit_code == 1
    assert (
        run.outcome.error == "claude exited 1 (API error or max turns reached): API Error: Connection refused"
    )


@pytest.mark.slow  # waits out a 1 s wall clock
def test_without_the_gateway_setup_an_endpoint_down_is_retried_until_the_wall_clock(tmp_path):
    run = execute(SPEC, invocation(tmp_path, SPEC), tmp_path, "down", timeout_s=1)
    assert run.result.timed_out
    assert run.outcome.error == "the agent was killed at its 1s time limit"


NULL = Stream(Path("/dev/null"))


@pytest.mark.parametrize(("stdout", "stderr", "cause"), [
    ("API Error: Connection refused\n", "", "API Error: Connection refused"),
    ("", "Error: not logged in\n", "Error: not logged in"),
])  # fmt: skip
def test_a_failure_without_json_quotes_the_text(stdout, stderr, cause):
    result = Result(["claude"], 1, 0.1, NULL, NULL)
    out = Claude().read(result, stdout, stderr)
    assert out.error == f"claude exited 1 (API error or max turns reached): {cause}"


def test_a_json_array_of_events_is_read():
    stdout = ('[{"type":"system","subtype":"init"},{"type":"result","subtype":"success","is_error":false,'
              '"result":"DECISION: x","usage":{"input_tokens":5,"output_tokens":2},'
              '"total_cost_usd":0.5}]')  # fmt: skip
    out = Claude().read(Result(["claude"], 0, 0.1, NULL, NULL), stdout, "")
    assert (out.ok, out.final_message, out.input_tokens, out.output_tokens, out.cost_usd) == (
        True, "DECISION: x", 5, 2, 0.5)  # fmt: skip


@pytest.mark.parametrize("mode", list(LIMITED))
def test_a_providers_refusal_is_read_as_its_fault(mode, tmp_path):
    # what the real claude printed against the model server in each mode (tests/fixtures/limits)
    refused(SPEC, mode, tmp_path, None)


def test_its_own_budget_stop_is_read_as_a_cost_cap_naming_the_figure():
    # the result the real claude 2.1.332 printed when --max-budget-usd 1 ended it (tests/realcli)
    stdout = json.dumps({"type": "result", "subtype": "error_max_budget_usd", "is_error": True,
                         "result": '[claude-code:unrecognized_model] {"model":"mock-model"}',
                         "terminal_reason": "budget_exhausted", "num_turns": 2, "total_cost_usd": 1.2,
                         "errors": ["Reached maximum budget ($1)"],
                         "usage": {"input_tokens": 100000, "output_tokens": 10000}})  # fmt: skip
    result = Result(["claude"], 1, 0.1, NULL, NULL)
    out = Claude().read(result, stdout, "")
    assert (out.ok, out.cost_usd) == (False, 1.2)
    assert out.error == (
        "cost-cap: $1.2000 spent over 2 turn(s); claude stopped itself: Reached maximum budget ($1)"
    )
    assert Claude().fault(result, stdout, "", out) is None  # the task's cap, not a provider's refusal


def test_a_model_that_never_stops_is_ended_by_the_live_cap(tmp_path):
    capped(SPEC, tmp_path)
