"""The gemini adapter against tests/fakes/gemini (numbers documented in the fake)."""

import json
from pathlib import Path

import pytest
from harness import LIMITED, SCENARIOS, Spec, capped, check, execute, invocation, refused

from control_room.adapters.base import Setup
from control_room.adapters.gemini import Gemini
from control_room.proc import Result, Stream

SPEC = Spec(
    Gemini(),
    extra_args=["--approval-mode", "auto_edit"],
    input_tokens=3100,
    output_tokens=425,
    extra={"models": ["gemini-2.5-flash-lite", "gemini-2.5-pro"]},
    error_exit=41,
)
URL = "http://127.0.0.1:9"
ISOLATED = Spec(Gemini(), setup=Setup(base_url=URL, api_key_env="GATEWAY_KEY", isolated=True),
                env={"GATEWAY_KEY": "k-1"}, input_tokens=3100, output_tokens=425, error_exit=41)  # fmt: skip
ATTEMPT = "Attempt 1 failed with status undefined. Retrying with backoff... Error: exception TypeError: fetch failed sending request"  # fmt: skip  # noqa: E501


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_contract(scenario, tmp_path):
    check(SPEC, scenario, tmp_path)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_contract_through_a_gateway(scenario, tmp_path):
    check(ISOLATED, scenario, tmp_path)


def test_argv(tmp_path):
    inv = invocation(tmp_path, SPEC)
    assert SPEC.adapter.command(inv) == [
        "gemini",
        "-o",
        "json",
        "--skip-trust",
        "--session-id",
        inv.session,
        "-m",
        "test-model",
        "--approval-mode",
        "auto_edit",
    ]


def test_isolated_its_settings_select_the_key_and_one_attempt(tmp_path):
    run = check(ISOLATED, "success", tmp_path)
    assert list(run.files) == [".gemini/settings.json"]
    assert json.loads(run.files[".gemini/settings.json"]) == {
        "general": {"maxAttempts": 1, "enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "security": {"auth": {"selectedType": "gemini-api-key"}},
    }
    env = run.log[0]["env"]
    assert (env["HOME"], env["GOOGLE_GEMINI_BASE_URL"], env["GEMINI_API_KEY"]) == (
        str(tmp_path / "state"),
        URL,
        "k-1",
    )


def test_a_base_url_without_isolation_meets_the_users_settings(tmp_path):
    """The user's own settings.json (none here: HOME is a fresh folder) does not select the key:
    the real CLI exits 41, and the error says so."""
    home = tmp_path / "home"
    home.mkdir()
    spec = Spec(Gemini(), setup=Setup(base_url=URL, api_key_env="GATEWAY_KEY"),
                env={"GATEWAY_KEY": "k-1", "HOME": str(home)})  # fmt: skip
    run = execute(spec, invocation(tmp_path, spec), tmp_path, "success")
    assert run.outcome.error == (
        "gemini exited 41 (authentication): Invalid auth method selected.; set security.auth.selectedType: "
        '"gemini-api-key" in its settings.json (~/.gemini/), or isolated: true in CONTROL.md '
        "adapters.gemini, which writes it"
    )


def test_an_endpoint_down_exits_after_one_attempt_quoting_it(tmp_path):
    run = execute(ISOLATED, invocation(tmp_path, ISOLATED), tmp_path, "down")
    assert run.result.exit_code == 1
    assert run.outcome.error == f"gemini exited 1 (general error or API failure): {ATTEMPT}"


@pytest.mark.slow  # waits out a 1 s wall clock
def test_without_isolation_an_endpoint_down_retries_until_the_wall_clock(tmp_path):
    run = execute(SPEC, invocation(tmp_path, SPEC), tmp_path, "down", timeout_s=1)
    assert run.result.timed_out
    assert run.outcome.error == (
        "the agent was killed at its 1s time limit; its last line: "
        + ATTEMPT.replace("Attempt 1", "Attempt 3")
    )


def test_the_node_warning_is_never_the_cause():
    null = Stream(Path("/dev/null"))
    stderr = "Something broke\n(node:1) Warning: x\n(Use `node --trace-warnings ...` to show where)\n"
    out = Gemini().read(Result(["gemini"], 1, 0.1, null, null), "", stderr)
    assert out.error == "gemini exited 1 (general error or API failure): Something broke"


@pytest.mark.parametrize("mode", list(LIMITED))
def test_a_providers_refusal_is_read_as_its_fault(mode, tmp_path):
    # what the real gemini printed against the model server in each mode (tests/fixtures/limits)
    refused(SPEC, mode, tmp_path, 20 if mode == "rate_limit" else None)


def test_a_model_that_never_stops_is_ended_by_the_live_cap(tmp_path):
    capped(SPEC, tmp_path)
