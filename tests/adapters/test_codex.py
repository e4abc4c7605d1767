"""The codex adapter against tests/fakes/codex (numbers documented in the fake)."""

import json
from pathlib import Path

import pytest
from harness import (
    LIMITED,
    SCENARIOS,
    Spec,
    capped,
    check,
    execute,
    invocation,
    killed_at_wall_clock,
    refused,
)

from control_room.adapters import faults
from control_room.adapters.base import Setup
from control_room.adapters.codex import Codex
from control_room.proc import Result, Stream

SPEC = Spec(
    Codex(),
    extra_args=["-s", "workspace-write"],
    input_tokens=2400,
    output_tokens=410,
    extra={"cached_input_tokens": 1000, "reasoning_output_tokens": 64},
)
URL = "http://127.0.0.1:9/v1"
ISOLATED = Spec(Codex(), setup=Setup(base_url=URL, api_key_env="GATEWAY_KEY", isolated=True),
                env={"GATEWAY_KEY": "sk-x"}, input_tokens=2400, output_tokens=410)  # fmt: skip
SHARED = Spec(Codex(), setup=Setup(base_url=URL, api_key_env="GATEWAY_KEY"), env={"GATEWAY_KEY": "sk-x"},
              input_tokens=2400, output_tokens=410)  # fmt: skip


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_contract(scenario, tmp_path):
    check(SPEC, scenario, tmp_path)


@pytest.mark.parametrize("spec", [ISOLATED, SHARED], ids=["isolated", "shared"])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_contract_through_a_gateway(spec, scenario, tmp_path):
    check(spec, scenario, tmp_path)


def test_argv(tmp_path):
    inv = invocation(tmp_path, SPEC)
    assert SPEC.adapter.command(inv) == [
        "codex",
        "exec",
        "--skip-git-repo-check",
        "--json",
        "-C",
        str(inv.workdir),
        "-m",
        "test-model",
        "-",
        "-s",
        "workspace-write",
    ]


def test_isolated_the_provider_is_in_its_own_config_toml(tmp_path):
    run = check(ISOLATED, "success", tmp_path)
    assert run.files == {"config.toml": (
        "# written by control-room before each run, from CONTROL.md adapters.codex\n"
        'model = "test-model"\n'
        'model_provider = "control-room"\n'
        "\n"
        "[model_providers.control-room]\n"
        'name = "control-room"\n'
        f'base_url = "{URL}"\n'
        'wire_api = "responses"\n'
        'request_max_retries = 0\n'
        'stream_max_retries = 0\n'
        'env_key = "GATEWAY_KEY"\n')}  # fmt: skip
    assert run.log[0]["env"]["CODEX_HOME"] == str(tmp_path / "state")
    assert "-c" not in run.log[0]["argv"]


def test_not_isolated_the_provider_goes_in_c_overrides_on_the_users_config(tmp_path):
    run = check(SHARED, "success", tmp_path)
    assert run.files == {}
    assert run.log[0]["env"].get("CODEX_HOME") != str(tmp_path / "state")  # the user's own
    inv = invocation(tmp_path, SHARED)
    assert SHARED.adapter.command(inv) == [
        "codex", "exec", "--skip-git-repo-check", "--json", "-C", str(inv.workdir),
        "-c", 'model_provider="control-room"',
        "-c", 'model_providers.control-room.name="control-room"',
        "-c", f'model_providers.control-room.base_url="{URL}"',
        "-c", 'model_providers.control-room.wire_api="responses"',
        "-c", "model_providers.control-room.request_max_retries=0",
        "-c", "model_providers.control-room.stream_max_retries=0",
        "-c", 'model_providers.control-room.env_key="GATEWAY_KEY"',
        "-m", "test-model", "-"]  # fmt: skip


@pytest.mark.slow  # waits out a 1 s wall clock
def test_killed_while_reconnecting_says_so(tmp_path):
    run = execute(ISOLATED, invocation(tmp_path, ISOLATED), tmp_path, "down", timeout_s=1)
    assert run.result.timed_out and run.result.exit_code is None
    assert run.outcome.error == (
        "the agent was killed at its 1s time limit while reconnecting to the model endpoint: "
        "Reconnecting... 2/5 (stream disconnected before completion: error sending request for url "
        f"({URL}/responses))")  # fmt: skip


NULL = Stream(Path("/dev/null"))


def test_a_reconnection_that_then_succeeds_is_no_failure():
    stdout = "\n".join([
        '{"type": "thread.started"}', '{"type": "turn.started"}',
        '{"type": "error", "message": "Reconnecting... 1/5 (stream disconnected before completion)"}',
        '{"type": "item.completed", "item": {"type": "agent_message", "text": "DECISION: done"}}',
        '{"type": "turn.completed", "usage": {"input_tokens": 3, "output_tokens": 1}}'])  # fmt: skip
    out = Codex().read(Result(["codex"], 0, 0.1, NULL, NULL), stdout, "")
    assert (out.ok, out.error, out.final_message) == (True, None, "DECISION: done")


@pytest.mark.parametrize("mode", list(LIMITED))
def test_a_providers_refusal_is_read_as_its_fault(mode, tmp_path):
    # what the real codex printed against the model server in each mode (tests/fixtures/limits)
    refused(SPEC, mode, tmp_path, None)


def test_its_usage_log_is_in_its_own_codex_home_and_named_by_its_thread(tmp_path):
    codex = Codex()
    plain = invocation(tmp_path, Spec(codex))
    assert codex.usage_home(plain, {"HOME": "/home/u"}) == Path("/home/u/.codex")
    assert codex.usage_home(plain, {"HOME": "/home/u", "CODEX_HOME": "/c"}) == Path("/c")
    isolated = invocation(tmp_path, Spec(codex, setup=Setup(isolated=True)))
    assert codex.usage_home(isolated, {"CODEX_HOME": "/c"}) == Path(codex.home(isolated))
    assert codex.usage_log(plain, None) is None  # it takes no session id: its stdout names it
    assert codex.usage_log(plain, {"type": "thread.started", "thread_id": "01a2-b3"}) == (
        "sessions/*/*/*/rollout-*-01a2-b3.jsonl"
    )
    assert codex.usage_log(plain, {"type": "thread.started", "thread_id": "../../x"}) is None


def test_a_model_that_never_stops_is_ended_by_the_live_cap(tmp_path):
    capped(SPEC, tmp_path)


def test_killed_while_reconnecting_the_words_say_whose_fault():
    def reconnecting(why):
        return json.dumps({"type": "error", "message": f"Reconnecting... 2/5 ({why})"}) + "\n"

    killed, out = killed_at_wall_clock("codex")
    limited = reconnecting("unexpected status 429 Too Many Requests: Rate limit reached, try again in 30s")
    assert Codex().fault(killed, limited, "", out).kind == faults.RATE_LIMIT
    down = reconnecting("stream disconnected before completion: error sending request for url")
    assert Codex().fault(killed, down, "", out) is None  # an endpoint down: the task's time-out, as before
    item = '{"type": "item.completed", "item": {"type": "reasoning"}}\n'
    assert Codex().fault(killed, limited + item, "", out) is None  # it got through
