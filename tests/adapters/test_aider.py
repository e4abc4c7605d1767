"""The aider adapter against tests/fakes/aider (numbers documented in the fake). Its error
mode exits 0, as the real aider does with the API down: the output decides."""

import os

import pytest
from harness import LIMITED, SCENARIOS, Spec, capped, check, invocation, killed_at_wall_clock, refused, waited

from control_room.adapters import faults
from control_room.adapters.aider import Aider, unwrap
from control_room.adapters.base import Setup

SPEC = Spec(
    Aider(),
    extra_args=["--map-tokens", "0"],
    input_tokens=4200,
    output_tokens=512,
    cost_usd=0.0042,
    error_exit=0,
)
URL = "http://127.0.0.1:9/v1"
LOCAL = Spec(Aider(), model="openai/qwen", setup=Setup(base_url=URL, api_key_env="GATEWAY_KEY"),
             env={"GATEWAY_KEY": "k-4"}, input_tokens=4200, output_tokens=512, cost_usd=0.0042,
             error_exit=0)  # fmt: skip


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_contract(scenario, tmp_path):
    check(SPEC, scenario, tmp_path)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_contract_with_a_local_model(scenario, tmp_path):
    check(LOCAL, scenario, tmp_path)


def test_argv(tmp_path):
    inv = invocation(tmp_path, SPEC)
    assert SPEC.adapter.command(inv) == [
        "aider",
        "--message-file",
        str(inv.brief),
        "--yes-always",
        "--no-auto-commits",
        "--no-check-update",
        "--analytics-disable",
        "--no-show-model-warnings",
        "--no-show-release-notes",
        "--no-gitignore",
        "--no-pretty",
        "--no-fancy-input",
        "--no-git",
        "--model",
        "test-model",
        "--map-tokens",
        "0",
    ]


def test_outside_a_git_repository_it_creates_none(tmp_path):
    run = check(SPEC, "success", tmp_path)
    assert "--no-git" in run.log[0]["argv"]
    assert sorted(os.listdir(tmp_path / "work dir")) == ["BRIEF.md"]


def test_inside_a_git_repository_it_keeps_git(tmp_path):
    (tmp_path / ".git").mkdir()  # the work dir is a folder of this repository
    inv = invocation(tmp_path, SPEC)
    assert "--no-git" not in SPEC.adapter.command(inv)


def test_the_api_down_exits_0_and_the_wrapped_error_is_quoted_whole(tmp_path):
    run = check(SPEC, "error", tmp_path)  # the fake's error mode is the API down
    assert run.result.exit_code == 0
    assert run.outcome.error == (
        "aider exited 0 without a Tokens: line: litellm.InternalServerError: InternalServerError: "
        "OpenAIException - Connection error.")  # fmt: skip


def test_a_local_model_gets_its_base_in_argv_and_its_key_in_the_environment(tmp_path):
    run = check(LOCAL, "success", tmp_path)
    argv = run.log[0]["argv"]
    assert argv[argv.index("--openai-api-base") + 1] == URL
    assert "k-4" not in " ".join(argv)  # argv lands in meta.json: never the key
    env = run.log[0]["env"]
    assert (env["OPENAI_API_KEY"], env["LITELLM_LOCAL_MODEL_COST_MAP"]) == ("k-4", "True")


def test_without_a_key_the_users_own_never_goes_to_the_base_url(tmp_path):
    spec = Spec(Aider(), setup=Setup(base_url=URL))
    env = spec.adapter.env(invocation(tmp_path, spec), {"OPENAI_API_KEY": "the user's own"})
    assert env["OPENAI_API_KEY"] == "none"


def test_wrapped_lines_are_joined_and_short_ones_are_not():
    text = ("Model: openai/fake with whole edit format\n"
            "litellm.InternalServerError: InternalServerError: OpenAIException - Connection\n"
            "error.\nRetrying in 0.2 seconds...\n")  # fmt: skip
    assert unwrap(text) == [
        "Model: openai/fake with whole edit format",
        "litellm.InternalServerError: InternalServerError: OpenAIException - Connection error.",
        "Retrying in 0.2 seconds...",
    ]


@pytest.mark.parametrize("mode", list(LIMITED))
def test_a_providers_refusal_is_read_as_its_fault(mode, tmp_path):
    # what the real aider printed against the model server in each mode (tests/fixtures/limits)
    refused(SPEC, mode, tmp_path, 20 if mode == "rate_limit" else None)


def test_a_model_that_never_stops_is_ended_by_the_live_cap(tmp_path):
    capped(SPEC, tmp_path)


def test_killed_while_it_retried_a_refusal_the_time_out_is_the_providers(tmp_path):
    # the real aider against a 429 with "try again in 600s": its own back-off, until the wall clock
    waited(SPEC, tmp_path, faults.RATE_LIMIT, 600)


def test_a_refusal_it_got_past_is_not_what_it_waited_on():
    said = (
        "litellm.RateLimitError: RateLimitError: OpenAIException - Rate limit reached, try again in 9s.\n"
        "The API provider has rate limited you. Try again later or check your quotas.\n"
        "Retrying in 0.2 seconds...\n"
    )
    killed, out = killed_at_wall_clock("aider")
    assert SPEC.adapter.fault(killed, said, "", out).kind == faults.RATE_LIMIT
    assert (
        SPEC.adapter.fault(killed, said + "Tokens: 2.6k sent, 23 received.\nThinking...\n", "", out) is None
    )
