"""aider 0.86.2 (a venv of its own), for real, through `control-room cycle` against the model
server (OpenAI chat completions through litellm)."""

from __future__ import annotations

import pytest
from conftest import MODES, reads_as
from modelserver import REPORT, ModelServer, refused

from control_room import errors
from control_room.adapters import faults


def gateway(real, url: str) -> None:  # type: ignore[no-untyped-def]
    real.gateway("aider", f"{url}/v1", model="openai/mock-model")  # litellm: provider/model


def test_the_brief_reaches_the_model_and_the_report_comes_back(real) -> None:  # type: ignore[no-untyped-def]
    r = real("aider")
    r.task(adapter="aider")
    with ModelServer() as server:
        gateway(r, server.url)
        done = r.run("cycle")
        bodies = server.bodies()
    assert done.returncode == errors.PASSED, done.stdout + done.stderr
    assert "# Brief for task t1" in bodies
    meta = r.meta()
    assert (meta["agent_ok"], meta["report"]["ok"], meta["validator"]["exit_code"]) == (True, True, 0)
    assert meta["input_tokens"] > 0 and meta["output_tokens"] > 0
    assert not (r.room.root / ".git").exists()  # the room is no git repository: --no-git


def test_an_endpoint_down_fails_the_round_naming_the_cause(real) -> None:  # type: ignore[no-untyped-def]
    r = real("aider")
    r.task(adapter="aider", wall_clock_s=240)
    gateway(r, refused())
    done = r.run("cycle")
    assert done.returncode == errors.FAILED, done.stdout + done.stderr
    assert "Connection error" in r.cause(), r.cause()  # exit 0: read from the output


def test_an_endpoint_refusing_the_key_fails_the_round_naming_the_cause(real) -> None:  # type: ignore[no-untyped-def]
    r = real("aider")
    r.task(adapter="aider", wall_clock_s=180)
    with ModelServer(mode="auth") as server:
        gateway(r, f"{server.url}")
        done = r.run("cycle")
    assert done.returncode == errors.PROVIDER, done.stdout + done.stderr  # the key's: no round used
    kind, said = r.refused()
    assert kind == faults.AUTH, said
    assert "litellm.AuthenticationError: AuthenticationError: OpenAIException - invalid api key" in said


def test_an_edit_in_the_reply_is_applied_without_a_bypass(real) -> None:  # type: ignore[no-untyped-def]
    """aider has no tool calls: a model edits by answering in its edit format (`whole` for a
    model it does not know), and aider applies the edit itself (`--yes-always`)."""
    r = real("aider")
    r.task(adapter="aider")
    edit = "made-by-the-model.txt\n```\nhello\n```\n\n"
    with ModelServer(reply=edit + REPORT) as server:
        gateway(r, server.url)
        done = r.run("cycle")
    assert done.returncode == errors.PASSED, done.stdout + done.stderr
    assert (r.room.root / "made-by-the-model.txt").read_text() == "hello\n"
    assert not (r.room.root / ".git").exists()


@pytest.mark.parametrize(("mode", "kind", "reset_s"), MODES)
def test_the_providers_refusals_are_read_as_their_faults(
    refusal, mode: str, kind: str, reset_s: int | None
) -> None:  # type: ignore[no-untyped-def]
    # aider retries every refused call with its own back-off (~65 s, then exit 0): killed at
    # its 20 s wall clock while it waits, its time-out is read as the refusal it printed (`waiting`)
    reads_as(
        refusal("aider", mode, "/v1", wall_clock_s=20, model="openai/mock-model"),
        mode,
        kind,
        reset_s,
        context_exit=0,
    )


def test_a_long_retry_after_waited_out_past_the_wall_clock_uses_no_round(refusal) -> None:  # type: ignore[no-untyped-def]
    # "try again in 600s": aider waits (or backs off) far past the task's wall clock; killed while it
    # waits, the time-out is the provider's (no round), and the adapter cools down for the 600 s
    got = refusal("aider", "rate_limit", "/v1", wall_clock_s=20, retry_after=600, model="openai/mock-model")
    assert got.reads_as(faults.RATE_LIMIT, 600), got
