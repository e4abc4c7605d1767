"""control_room.room.settings: CONTROL.md (SPEC §8): defaults, wrong types named, fails closed."""

from __future__ import annotations

import os
import threading
import time

import pytest

from control_room.errors import InvalidError
from control_room.room import settings as control
from control_room.room.layout import Room


def write_gate(room: Room, front: str) -> None:
    room.control.write_text(f"---\n{front}---\n# CONTROL\n\nrules in prose\n")


def test_the_template_gives_the_defaults(room: Room) -> None:
    assert control.load(room) == control.DEFAULTS


def test_absent_keys_take_their_defaults(room: Room) -> None:
    write_gate(room, "max_parallel: 3\ndaily_budget_usd: 25\n")
    values = control.load(room)
    assert values == control.DEFAULTS.replace(max_parallel=3, daily_budget_usd=25)


def test_no_front_matter_at_all_fails_closed(room: Room) -> None:
    # the limits were deleted: they must not silently become the defaults
    room.control.write_text("# CONTROL\n\nno front matter here\n")
    with pytest.raises(InvalidError) as err:
        control.load(room)
    assert str(err.value).startswith(f"{room.control}: no front matter: the limits (max_parallel, ")


def test_an_empty_value_means_the_default(room: Room) -> None:
    write_gate(room, "max_parallel:\ndefault_model:\n")
    values = control.load(room)
    assert (values.max_parallel, values.default_model) == (1, None)


def test_an_unknown_key_fails_closed(room: Room) -> None:
    # a misspelt limit must not silently fall back to its default
    write_gate(room, "daily_budjet_usd: 0.5\n")
    with pytest.raises(InvalidError) as err:
        control.load(room)
    assert str(err.value).startswith(f"{room.control}: unknown key daily_budjet_usd (known: max_parallel, ")


def test_an_empty_default_adapter_is_the_default(room: Room) -> None:
    write_gate(room, "default_adapter:\n")
    assert control.load(room).default_adapter == "probe"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("max_parallel: two", "max_parallel must be a positive integer (got 'two')"),
        ("max_parallel: 0", "max_parallel must be a positive integer (got 0)"),
        ("max_queued: true", "max_queued must be a positive integer (got True)"),
        ("daily_budget_usd: -1", "daily_budget_usd must be a number of USD >= 0 (got -1)"),
        ("daily_budget_usd: .nan", "daily_budget_usd must be a number of USD >= 0 (got nan)"),
        ("grace_s: 0", "grace_s must be a number of seconds > 0 (got 0)"),
        ("allow_extra_args: 'yes'", "allow_extra_args must be true or false (got 'yes')"),
        ("default_adapter: 3", "default_adapter must be an adapter name (got 3)"),
        ("env_allow: PATH", "env_allow must be a list of names (got 'PATH')"),
        ("on_empty_queue: panic", "on_empty_queue must be one of idle, orchestrate (got 'panic')"),
        ("command_argv: [1]", "command_argv must be a list of strings (got [1])"),
        ("approvals: {}", "approvals must be a list (got {})"),
        ("retention_days: -1", "retention_days must be an integer >= 0 (got -1)"),
        pytest.param("daily_budget_usd: 1" + "0" * 400,
                     "daily_budget_usd must be a number of USD >= 0 (got 1" + "0" * 400 + ")",
                     id="int-beyond-float"),
    ],
)  # fmt: skip
def test_a_wrong_type_names_the_key(room: Room, line: str, message: str) -> None:
    write_gate(room, line + "\n")
    with pytest.raises(InvalidError) as err:
        control.load(room)
    assert str(err.value) == f"{room.control}: {message}"
    assert err.value.exit_code == 4


def test_broken_yaml_names_the_file_and_line(room: Room) -> None:
    write_gate(room, "max_parallel: 1\nbad: [unclosed\n")
    with pytest.raises(InvalidError) as err:
        control.load(room)
    assert str(err.value).startswith(f"{room.control}: line ")
    assert "front matter is not valid YAML" in str(err.value)


def test_a_list_as_front_matter_is_refused(room: Room) -> None:
    # a gate that cannot be read fails closed: it must not silently become all defaults
    room.control.write_text("---\n- max_parallel: 8\n- daily_budget_usd: 0.5\n---\nbody\n")
    with pytest.raises(InvalidError) as err:
        control.load(room)
    assert str(err.value) == f"{room.control}: front matter must be a mapping of keys to values"


def test_an_unclosed_front_matter_is_refused(room: Room) -> None:
    # the closing --- was deleted: the limits must not silently revert to the defaults
    room.control.write_text("---\ndaily_budget_usd: 0.5\nmax_parallel: 1\n\n# CONTROL\n")
    with pytest.raises(InvalidError) as err:
        control.load(room)
    assert str(err.value).startswith(f"{room.control}: ")
    assert err.value.exit_code == 4


def test_a_missing_control_md_is_an_error(room: Room) -> None:
    control.load(room)  # warm the cache: it must not outlive the file
    room.control.unlink()
    with pytest.raises(InvalidError) as err:
        control.load(room)
    assert str(err.value) == (
        f"{room.control} is missing: the gate is gone, so nothing runs; "
        "restore it (git checkout) or run `control-room init` to write a default one"
    )


def test_an_edit_is_seen_at_once(room: Room) -> None:
    assert control.load(room).max_parallel == 1
    text = room.control.read_text()
    room.control.write_text(text.replace("max_parallel: 1 ", "max_parallel: 4 "))
    assert control.load(room).max_parallel == 4


def test_adapters_is_a_mapping_of_setups(room: Room) -> None:
    write_gate(room, 'adapters: {codex: {base_url: "http://127.0.0.1:8080/v1", api_key_env: GATEWAY_KEY,\n'
                     "  model: qwen, isolated: true}, claude: }\n")  # fmt: skip
    assert control.load(room).adapters == {
        "codex": {"base_url": "http://127.0.0.1:8080/v1", "api_key_env": "GATEWAY_KEY", "model": "qwen",
                  "isolated": True},
        "claude": None,
    }  # fmt: skip
    assert control.DEFAULTS.adapters == {}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("adapters: [codex]", "must be a mapping of adapter name -> settings (got ['codex'])"),
        ("adapters: {codex: {base_ur: x}}",
         "codex: unknown setting 'base_ur' (known: base_url, api_key_env, model, isolated)"),
        ("adapters: {codex: {api_key_env: sk-live-123}}",
         "codex.api_key_env must be the NAME of an environment variable (letters, digits, _), never the key "
         "itself (got 'sk-live-123')"),
        ("adapters: {codex: {base_url: 'localhost:8080'}}",
         "codex.base_url must be a URL starting with http:// or https:// (got 'localhost:8080')"),
        ("adapters: {codex: {isolated: 'yes'}}", "codex.isolated must be true or false (got 'yes')"),
        ("adapters: {codex: {model: ''}}", "codex.model must be a model name (got '')"),
        ("adapters: {codex: local}",
         "codex must be a mapping of settings (base_url, api_key_env, model, isolated) (got 'local')"),
        ("adapters: {'../x': {}}", "'../x' is not an adapter name"),
    ],
)  # fmt: skip
def test_a_wrong_adapter_setup_is_named_to_the_setting(room: Room, line: str, message: str) -> None:
    # a misspelt base_url must never quietly send the run to the user's own login
    write_gate(room, line + "\n")
    with pytest.raises(InvalidError) as err:
        control.load(room)
    assert str(err.value) == f"{room.control}: adapters: {message}"


def test_a_control_md_saved_in_place_this_instant_is_read_once_the_save_is_done(room: Room) -> None:
    """An editor that truncates and then writes leaves the file empty for a moment: a read in
    that moment waits for the save instead of refusing (fail closed for a file that stays broken)."""
    good = room.control.read_text()
    room.control.write_text("")  # mid-save: empty, modified now
    writer = threading.Timer(0.03, lambda: room.control.write_text(good))
    writer.start()
    try:
        assert control.load(room).daily_budget_usd == control.DEFAULTS.daily_budget_usd
    finally:
        writer.join()
    room.control.write_text("")
    old = time.time() - 60
    os.utime(room.control, (old, old))  # broken for a minute: no save in progress
    with pytest.raises(InvalidError):
        control.load(room)


def test_an_unknown_key_is_named_on_one_line_whatever_it_holds() -> None:
    """Found by the fuzz tests: a key holding a line break (`? "a\\nb"` in YAML) split the
    refusal of CONTROL.md over two lines."""
    with pytest.raises(InvalidError) as err:
        control.parse('---\n"a\\nb": 1\n---\n', "CONTROL.md")
    assert str(err.value).startswith("CONTROL.md: unknown key a\\nb (known: max_parallel, ")
    assert "\n" not in str(err.value)
