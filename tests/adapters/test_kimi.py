"""The kimi adapter against tests/fakes/kimi (text output: no tokens, no cost)."""

import pytest
from harness import LIMITED, SCENARIOS, Spec, capped, check, execute, invocation, refused

from control_room.adapters.base import Setup
from control_room.adapters.kimi import Kimi

SPEC = Spec(Kimi(), extra_args=["--max-steps-per-turn", "20"], error_exit=75)
URL = "http://127.0.0.1:9/v1"
GATEWAY = Spec(Kimi(), setup=Setup(base_url=URL, api_key_env="GATEWAY_KEY", isolated=True),
               env={"GATEWAY_KEY": "k-3"}, error_exit=75)  # fmt: skip


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_contract(scenario, tmp_path):
    check(SPEC, scenario, tmp_path)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_contract_through_a_gateway(scenario, tmp_path):
    check(GATEWAY, scenario, tmp_path)


def test_argv(tmp_path):
    inv = invocation(tmp_path, SPEC)
    assert SPEC.adapter.command(inv) == [
        "kimi",
        "--quiet",
        "-w",
        str(inv.workdir),
        "-S",
        inv.session,
        "-m",
        "test-model",
        "--max-steps-per-turn",
        "20",
    ]


def test_a_connection_error_quotes_stdout_not_the_resume_line(tmp_path):
    run = check(SPEC, "error", tmp_path)
    assert run.outcome.error == "kimi exited 75 (connection error): Connection error."


def test_a_gateway_is_a_config_file_of_its_own_and_the_key_stays_in_the_environment(tmp_path):
    run = check(GATEWAY, "success", tmp_path)
    state = tmp_path / "state"
    assert run.log[0]["argv"][:3] == ["--quiet", "-w", str(tmp_path / "work dir")]
    assert run.log[0]["argv"][5:] == [
        "--config-file",
        str(state / "config.toml"),
    ]
    assert run.files == {"config.toml": (
        "# written by control-room before each run, from CONTROL.md adapters.kimi\n"
        'default_model = "control-room"\n'
        "\n"
        "[providers.control-room]\n"
        'type = "openai_legacy"\n'
        f'base_url = "{URL}"\n'
        'api_key = "none"  # the key is in OPENAI_API_KEY, never here\n'
        "\n"
        "[models.control-room]\n"
        'provider = "control-room"\n'
        'model = "test-model"\n'
        "max_context_size = 131072\n"
        "\n"
        "[loop_control]\n"
        "max_retries_per_step = 1\n")}  # fmt: skip
    env = run.log[0]["env"]
    assert (env["HOME"], env["OPENAI_BASE_URL"], env["OPENAI_API_KEY"]) == (str(state), URL, "k-3")
    assert (env["KIMI_DISABLE_TELEMETRY"], env["KIMI_CLI_NO_AUTO_UPDATE"]) == ("1", "1")


def test_no_model_is_llm_not_set_and_says_what_to_set(tmp_path):
    spec = Spec(Kimi(), model=None, setup=GATEWAY.setup, env=GATEWAY.env)
    run = execute(spec, invocation(tmp_path, spec), tmp_path, "success")
    assert run.result.exit_code == 1
    assert run.outcome.error == (
        "kimi exited 1 (error): LLM not set (no model: set `model` in CONTROL.md adapters.kimi, "
        "or the role's or the task's)")  # fmt: skip


def test_its_console_is_told_to_be_wide_so_nothing_comes_back_hard_wrapped(tmp_path):
    """Real kimi-cli 1.51.0 wraps at 80 columns inside words (`... 'm` / `essage': ...`); with
    COLUMNS wide it prints each line whole (seen against the model server)."""
    inv = invocation(tmp_path, SPEC)
    assert SPEC.adapter.env(inv, {"COLUMNS": "80"})["COLUMNS"] == "100000"


@pytest.mark.parametrize("mode", list(LIMITED))
def test_a_providers_refusal_is_read_as_its_fault(mode, tmp_path):
    # what the real kimi printed against the model server in each mode (tests/fixtures/limits)
    refused(SPEC, mode, tmp_path, 20 if mode == "rate_limit" else None)


def test_a_model_that_never_stops_is_ended_by_the_live_cap(tmp_path):
    capped(SPEC, tmp_path)
