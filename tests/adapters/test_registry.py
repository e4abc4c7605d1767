"""The registry of adapters, and the one promise every read() keeps: it never raises."""

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from control_room import adapters
from control_room.adapters.base import Outcome
from control_room.errors import InvalidError
from control_room.proc import Result, Stream

BUILT_IN = ["aider", "amp", "claude", "codex", "command", "copilot", "cursor-agent", "gemini", "kimi",
            "opencode", "probe"]  # fmt: skip


def test_every_built_in_adapter_is_registered_under_its_name():
    assert sorted(adapters.ADAPTERS) == BUILT_IN
    for name in adapters.ADAPTERS:
        cls = adapters.adapter_class(name)
        assert cls.name == name
        assert cls.install
        assert 0 in cls.exit_codes


def test_an_unknown_name_lists_every_valid_one():
    with pytest.raises(InvalidError) as caught:
        adapters.get("nope")
    message = str(caught.value)
    assert "'nope'" in message
    for name in BUILT_IN:
        assert name in message


def test_get_returns_a_fresh_instance():
    assert isinstance(adapters.get("claude"), adapters.adapter_class("claude"))


# Output shaped like the CLIs' (their keys and event types), recombined at random.
KEYS = ["type", "result", "is_error", "subtype", "usage", "input_tokens", "output_tokens", "total_cost_usd",
        "item", "text", "part", "tokens", "input", "output", "cache", "read", "cost", "error", "message",
        "data", "content", "exitCode", "premiumRequests", "response", "stats", "models", "prompt",
        "candidates", "inputTokens", "permission_denials", "name"]  # fmt: skip
WORDS = ["result", "item.completed", "agent_message", "turn.completed", "turn.failed", "text",
         "step_finish", "error", "assistant.message", "success", "error_max_turns", "Tokens:"]  # fmt: skip
SCALARS = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
           | st.text(max_size=6) | st.sampled_from(WORDS))  # fmt: skip
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.sampled_from(KEYS), inner, max_size=4), max_leaves=12)  # fmt: skip
LINES = (VALUES.map(json.dumps) | st.text(max_size=40)
         | st.builds("Tokens: {} sent, {} received. Cost: ${} message, ${} session.".format,
                     *[st.text("0123456789.,k", max_size=8)] * 4))  # fmt: skip
OUTPUT = st.lists(LINES, max_size=6).map("\n".join) | VALUES.map(lambda v: json.dumps(v, indent=2))


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(BUILT_IN), stdout=OUTPUT, stderr=OUTPUT,
       code=st.sampled_from([None, 0, 1, 2, 41, 75, 130]))  # fmt: skip
def test_read_is_total(name, stdout, stderr, code):
    null = Stream(Path("/dev/null"))
    result = Result(
        argv=[name], exit_code=code, duration_s=0.1, stdout=null, stderr=null, timed_out=code is None
    )
    outcome = adapters.get(name).read(result, stdout, stderr)
    assert isinstance(outcome, Outcome)
    assert isinstance(outcome.final_message, str)
    assert outcome.error is None or "\n" not in outcome.error
    if code != 0:
        assert not outcome.ok and outcome.error


@pytest.mark.parametrize("name", BUILT_IN)
@pytest.mark.parametrize("stdout", ["[" * 100_000, '{"a":' * 100_000, "[" * 100_000 + "\n" + "{" * 50_000])
def test_read_survives_absurdly_deep_json(name, stdout):
    null = Stream(Path("/dev/null"))
    result = Result(argv=[name], exit_code=0, duration_s=0.1, stdout=null, stderr=null)
    outcome = adapters.get(name).read(result, stdout, "")
    assert isinstance(outcome, Outcome)
    assert isinstance(outcome.final_message, str)
    assert outcome.error is None or "\n" not in outcome.error


def test_a_setup_has_exactly_the_settings_control_md_checks():
    from control_room.adapters.base import Setup
    from control_room.room.keys import ADAPTER_SETTINGS

    assert list(Setup.NAMES) == list(ADAPTER_SETTINGS)
    assert sorted(Setup.__slots__) == sorted(ADAPTER_SETTINGS)
    for name in BUILT_IN:
        assert set(adapters.adapter_class(name).accepts) <= set(ADAPTER_SETTINGS), name


# What an adapter sets with no setup: only how its CLI prints (kimi's console would hard-wrap
# its output at 80 columns), never a login, a key, a home or an endpoint.
OUTPUT_ONLY = {"kimi": {"COLUMNS": "100000"}}


@pytest.mark.parametrize("name", BUILT_IN)
def test_without_a_setup_no_adapter_touches_the_environment_or_writes_a_file(name, tmp_path):
    from control_room.adapters.base import Invocation

    inv = Invocation(task={"id": "t", "command": ["true"]}, prompt="p", brief=tmp_path / "b",
                     workdir=tmp_path, settings={"command_argv": ["x"]})  # fmt: skip
    adapter = adapters.get(name)
    env = {"HOME": "/home/me", "PATH": "/bin", "OPENAI_API_KEY": "mine"}
    assert adapter.env(inv, dict(env)) == {**env, **OUTPUT_ONLY.get(name, {})}
    assert adapter.prepare(inv) == {}


@pytest.mark.parametrize(("name", "expected"), [
    ("amp", {"AMP_URL": "http://gw", "AMP_API_KEY": "k"}),
    ("cursor-agent", {"CURSOR_API_KEY": "k"}),
])  # fmt: skip
def test_the_cli_that_stay_on_fakes_take_their_key_and_endpoint(name, expected, tmp_path):
    from control_room.adapters.base import Invocation, Setup

    adapter = adapters.get(name)
    setup = Setup(base_url="http://gw" if "base_url" in adapter.accepts else None, api_key_env="K")
    inv = Invocation(task={"id": "t"}, prompt="p", brief=tmp_path / "b", workdir=tmp_path, setup=setup)
    assert adapter.env(inv, {"K": "k"}) == {"K": "k", **expected}
