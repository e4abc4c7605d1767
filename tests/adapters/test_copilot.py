"""The copilot adapter against tests/fakes/copilot (numbers documented in the fake): tokens and
cost come from the --usage-output-file it writes into the run's results folder."""

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
    waited,
)

from control_room.adapters import faults
from control_room.adapters.base import Setup
from control_room.adapters.copilot import Copilot

SPEC = Spec(Copilot(), extra_args=["--add-dir", "/tmp"], extra={"premium_requests": 1.0},
            input_tokens=2000, output_tokens=250, cost_usd=0.05)  # fmt: skip
URL = "http://127.0.0.1:9/v1"
BYOK = Spec(Copilot(), setup=Setup(base_url=URL, api_key_env="GATEWAY_KEY", isolated=True),
            env={"GATEWAY_KEY": "k-2"}, input_tokens=2000, output_tokens=250, cost_usd=0.05)  # fmt: skip


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_contract(scenario, tmp_path):
    check(SPEC, scenario, tmp_path)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_contract_through_a_gateway(scenario, tmp_path):
    check(BYOK, scenario, tmp_path)


def test_argv(tmp_path):
    inv = invocation(tmp_path, SPEC)
    assert SPEC.adapter.command(inv) == [
        "copilot", "-C", str(inv.workdir), "--output-format", "json", "--session-id", inv.session,
        "--usage-output-file", str(tmp_path / "results" / "copilot-usage.json"),
        "-p", SPEC.adapter.pointer(inv),
        "--model", "test-model", "--add-dir", "/tmp"]  # fmt: skip
    assert SPEC.adapter.outputs(inv) == ("copilot-usage.json",)


def test_bring_your_own_key_needs_no_github_login(tmp_path):
    env = check(BYOK, "success", tmp_path).log[0]["env"]
    assert {k: env[k] for k in env if k.startswith("COPILOT_")} == {
        "COPILOT_HOME": str(tmp_path / "state"),
        "COPILOT_PROVIDER_BASE_URL": URL,
        "COPILOT_PROVIDER_API_KEY": "k-2",
        "COPILOT_MODEL": "test-model",
        "COPILOT_OFFLINE": "true",
        "COPILOT_AUTO_UPDATE": "false",
    }


def test_a_provider_without_a_model_says_to_set_one(tmp_path):
    spec = Spec(Copilot(), model=None, setup=BYOK.setup, env=BYOK.env)
    run = execute(spec, invocation(tmp_path, spec), tmp_path, "success")
    assert run.result.exit_code == 1
    assert run.outcome.error == (
        "copilot exited 1: BYOK providers require an explicit model: set `model` in CONTROL.md "
        "adapters.copilot (or the role's or the task's model)")  # fmt: skip


def test_a_usage_file_that_is_missing_or_broken_gives_no_numbers(tmp_path):
    run = check(SPEC, "success", tmp_path)
    for files in ({}, {"copilot-usage.json": "{not json"}, {"copilot-usage.json": '{"modelMetrics": 3}'}):
        out = Copilot().read(run.result, run.result.stdout.path.read_text(), "", files)
        assert out.ok and (out.input_tokens, out.output_tokens, out.cost_usd) == (None, None, None)


@pytest.mark.parametrize("mode", list(LIMITED))
def test_a_providers_refusal_is_read_as_its_fault(mode, tmp_path):
    # what the real copilot printed against the model server in each mode (tests/fixtures/limits)
    refused(SPEC, mode, tmp_path, 20 if mode == "rate_limit" else None)


def test_a_model_that_never_stops_is_ended_by_the_live_cap(tmp_path):
    capped(SPEC, tmp_path)


def test_killed_while_it_retried_an_overload_the_time_out_is_the_providers(tmp_path):
    # the real copilot against a 503, killed during its five retries
    waited(SPEC, tmp_path, faults.OVERLOADED, None)


def test_a_failed_call_it_got_past_is_not_what_it_waited_on():
    failed = '{"type":"model.call_failure","data":{"statusCode":429,"errorMessage":"slow down"}}\n'
    ok = '{"type":"model.call_finished","data":{"outcome":"success"}}\n'
    killed, out = killed_at_wall_clock("copilot")
    assert SPEC.adapter.fault(killed, failed, "", out).kind == faults.RATE_LIMIT
    assert SPEC.adapter.fault(killed, failed + ok, "", out) is None
