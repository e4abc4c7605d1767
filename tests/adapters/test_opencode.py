"""The opencode adapter against tests/fakes/opencode (numbers documented in the fake)."""

import json
import time
from pathlib import Path

import pytest
from harness import LIMITED, SCENARIOS, Spec, capped, check, invocation, killed_at_wall_clock, refused, waited

from control_room.adapters import faults
from control_room.adapters.base import Setup
from control_room.adapters.opencode import Opencode
from control_room.proc import Result, Stream

SPEC = Spec(
    Opencode(),
    extra_args=["--agent", "build"],
    input_tokens=2500,
    output_tokens=350,
    cost_usd=0.375,
    extra={"cache_read_tokens": 30},
)
URL = "http://127.0.0.1:9/v1"
LOCAL = Spec(Opencode(), model="qwen2.5-coder:7b",
             setup=Setup(base_url=URL, api_key_env="GATEWAY_KEY", isolated=True),
             env={"GATEWAY_KEY": "k-5"}, input_tokens=2500, output_tokens=350, cost_usd=0.375)  # fmt: skip


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_contract(scenario, tmp_path):
    check(SPEC, scenario, tmp_path)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_contract_with_a_local_model(scenario, tmp_path):
    check(LOCAL, scenario, tmp_path)


def test_argv(tmp_path):
    inv = invocation(tmp_path, SPEC)
    assert SPEC.adapter.command(inv) == [
        "opencode",
        "run",
        "--dir",
        str(inv.workdir),
        "--format",
        "json",
        "--print-logs",
        "--log-level",
        "WARN",
        "-m",
        "test-model",
        "--agent",
        "build",
    ]


def test_a_local_model_is_a_provider_of_its_own_config(tmp_path):
    run = check(LOCAL, "success", tmp_path)
    state = tmp_path / "state"
    assert run.log[0]["argv"][-2:] == ["-m", "control-room/qwen2.5-coder:7b"]
    assert json.loads(run.files["opencode.json"]) == {
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": False,
        "share": "disabled",
        "provider": {"control-room": {
            "npm": "@ai-sdk/openai-compatible", "name": "control-room",
            "options": {"baseURL": URL, "apiKey": "{env:GATEWAY_KEY}"},
            "models": {"qwen2.5-coder:7b": {"name": "qwen2.5-coder:7b"}}}},
        "model": "control-room/qwen2.5-coder:7b",
    }  # fmt: skip
    env = run.log[0]["env"]
    assert env["OPENCODE_CONFIG"] == str(state / "opencode.json")
    assert (env["XDG_CONFIG_HOME"], env["XDG_DATA_HOME"]) == (str(state / "config"), str(state / "data"))
    assert env["GATEWAY_KEY"] == "k-5"  # read by opencode itself, through {env:GATEWAY_KEY}
    for name in ("AUTOUPDATE", "SHARE", "MODELS_FETCH", "LSP_DOWNLOAD"):
        assert env[f"OPENCODE_DISABLE_{name}"] == "1"


@pytest.mark.parametrize("mode", list(LIMITED))
def test_a_providers_refusal_is_read_as_its_fault(mode, tmp_path):
    # what the real opencode printed against the model server in each mode (tests/fixtures/limits)
    refused(SPEC, mode, tmp_path, 20 if mode == "rate_limit" else None)


def test_the_reset_time_is_the_responses_retry_after_header_when_the_words_give_none():
    event = {"type": "error", "error": {"name": "APIError", "data": {
        "message": "This request would exceed the rate limit for your organization.", "statusCode": 429,
        "isRetryable": True, "responseHeaders": {"retry-after": "30", "server": "mock"}}}}  # fmt: skip
    stdout = json.dumps(event) + "\n"
    result = Result(["opencode"], 1, 1.0, Stream(Path("/dev/null")), Stream(Path("/dev/null")))
    adapter = Opencode()
    outcome = adapter.read(result, stdout, "")
    before = time.time()
    found = adapter.fault(result, stdout, "", outcome)
    after = time.time()
    assert found is not None and found.kind == "rate-limit"
    assert found.reset_at is not None and before + 30 <= found.reset_at <= after + 30


def test_a_model_that_never_stops_is_ended_by_the_live_cap(tmp_path):
    capped(SPEC, tmp_path)


def test_killed_while_it_waited_out_a_retry_after_the_time_out_is_the_providers(tmp_path):
    # the real opencode against a 429 with retry-after 600: silent on stdout, its log on stderr
    waited(SPEC, tmp_path, faults.RATE_LIMIT, 600)


def test_a_refusal_logged_before_its_last_step_is_not_what_it_waited_on():
    log = (
        'timestamp=2026-12-07T11:52:36.827Z level=ERROR run=1 message="stream error" providerID=p '
        'modelID=m session.id=s small=false agent=build mode=primary error.error="AI_APICallError: Rate '
        'limit reached. Please try again in 600s."\n'
    )
    killed, out = killed_at_wall_clock("opencode")
    assert SPEC.adapter.fault(killed, "", log, out).kind == faults.RATE_LIMIT
    later = '{"type":"step_finish","timestamp":1796644400000,"part":{}}\n'  # 11:53:20Z: it got through
    assert SPEC.adapter.fault(killed, later, log, out) is None
    title = log.replace("small=false agent=build", "small=true agent=title")  # not the run's own agent
    assert SPEC.adapter.fault(killed, "", title, out) is None
