"""control_room.adapters.base: Setup, the Adapter defaults (check, read, explain...)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import pytest

from control_room import errors
from control_room.adapters.base import (
    CLI_ENV,
    MINIMAL_ENV,
    NO_KEY,
    POINTER,
    Adapter,
    Invocation,
    Outcome,
    Setup,
    allowed,
    killed,
)
from control_room.errors import InvalidError
from control_room.proc import Result, Stream


class Tool(Adapter):
    """An adapter that declares what a subclass may, and writes only ``command``."""

    name = "tool"
    binary = "tool-cli"
    exit_codes: ClassVar[dict[int, str]] = {0: "ok", 2: "usage", 75: "rate limited"}
    accepts = ("base_url", "api_key_env")
    key_needs_url = True

    def command(self, inv: Invocation) -> list[str]:
        return [self.binary or "", *self.with_model("--model", inv), *inv.extra_args]


class Bare(Adapter):
    name = "bare"
    binary = None


def inv(tmp_path: Path, **fields: object) -> Invocation:
    return Invocation(task={"id": "t1"}, prompt="do the thing: é\n", brief=tmp_path / "BRIEF.md",
                      workdir=tmp_path, **fields)  # type: ignore[arg-type]  # fmt: skip


def result(
    code: int | None, *, timed_out: bool = False, stopped: bool = False, limit_s: float | None = None
) -> Result:
    null = Stream(Path("/dev/null"))
    return Result(["tool-cli"], code, 0.1, null, null, timed_out=timed_out, stopped=stopped, limit_s=limit_s)


# Setup ------------------------------------------------------------------------------------------


def test_a_setup_gives_the_names_of_what_is_set() -> None:
    assert Setup().given() == []
    assert Setup(isolated=False, model="m").given() == ["model"]
    assert Setup(base_url="http://gw", api_key_env="K", model="m", isolated=True).given() == [
        "base_url", "api_key_env", "model", "isolated"]  # fmt: skip


def test_an_invocation_and_an_outcome_default_to_empty() -> None:
    call = Invocation(task={}, prompt="p", brief=Path("b"), workdir=Path("w"))
    assert (call.model, call.extra_args, dict(call.settings), call.setup, call.state, call.results) == (
        None, [], {}, Setup(), None, None)  # fmt: skip
    said = Outcome(ok=True, final_message="m")
    assert said == Outcome(True, "m", None, None, None, None, {})


# check --------------------------------------------------------------------------------------------


def test_check_accepts_the_empty_setup_and_what_the_adapter_acts_on() -> None:
    assert Tool().check(Setup()) is None
    assert Tool().check(Setup(base_url="http://gw", api_key_env="K")) is None
    assert Bare().check(Setup()) is None


def test_check_refuses_a_setting_the_adapter_does_not_act_on() -> None:
    assert Tool().check(Setup(base_url="http://gw", model="m", isolated=True)) == (
        "the tool adapter does not act on model, isolated (it takes: base_url, api_key_env)"
    )
    assert Bare().check(Setup(model="m")) == "the bare adapter does not act on model (it takes: none)"


def test_check_refuses_a_key_without_its_endpoint_where_the_key_is_the_endpoints() -> None:
    assert Tool().check(Setup(api_key_env="K")) == (
        "api_key_env needs a base_url: tool takes it as the key of that endpoint"
    )


# what a run is given ---------------------------------------------------------------------------------


def test_the_defaults_write_no_file_and_leave_the_environment(tmp_path: Path) -> None:
    call = inv(tmp_path)
    env = {"PATH": "/bin", "HOME": "/home/me"}
    assert (Tool().prepare(call), Tool().outputs(call), Tool().env(call, env)) == ({}, (), env)
    assert (Tool().executable(call), Bare().executable(call)) == ("tool-cli", None)


def test_command_is_the_one_method_an_adapter_must_write(tmp_path: Path) -> None:
    with pytest.raises(NotImplementedError):
        Bare().command(inv(tmp_path))
    assert Tool().command(inv(tmp_path, model="m1", extra_args=["--x"])) == [
        "tool-cli",
        "--model",
        "m1",
        "--x",
    ]
    assert Tool().command(inv(tmp_path)) == ["tool-cli"]


def test_the_prompt_goes_on_stdin_or_as_a_pointer_to_the_brief(tmp_path: Path) -> None:
    call = inv(tmp_path)
    assert Tool().stdin(call) == "do the thing: é\n".encode()

    class ByFile(Tool):
        prompt_via = "file"

    assert ByFile().stdin(call) is None
    assert Tool().pointer(call) == POINTER.format(brief=tmp_path / "BRIEF.md")
    assert Tool().pointer(call) == (
        f"Your full instructions are in the file {tmp_path / 'BRIEF.md'}. Read that file now and follow it "
        "exactly; end your answer with the report it asks for."
    )


def test_the_key_is_read_from_the_variable_the_setup_names(tmp_path: Path) -> None:
    assert Tool().key(inv(tmp_path), {"K": "secret"}) is None
    named = inv(tmp_path, setup=Setup(base_url="http://gw", api_key_env="K"))
    assert Tool().key(named, {"K": "secret"}) == "secret"
    assert Tool().key(named, {}) == ""
    assert NO_KEY == "none"


def test_a_base_url_withholds_the_users_own_vendor_keys_but_the_one_api_key_env_names(tmp_path: Path) -> None:
    class Vendor(Tool):
        vendor_keys = ("VENDOR_KEY", "VENDOR_TOKEN_*")

    env = {"VENDOR_KEY": "mine", "VENDOR_TOKEN_A": "mine too", "K": "gw", "PATH": "/bin"}
    assert Vendor().environment(inv(tmp_path), dict(env)) == env  # no base_url: the CLI's own vendor
    at_gateway = inv(tmp_path, setup=Setup(base_url="http://gw", api_key_env="K"))
    assert Vendor().environment(at_gateway, dict(env)) == {"K": "gw", "PATH": "/bin"}
    own = inv(tmp_path, setup=Setup(base_url="http://gw", api_key_env="VENDOR_KEY"))
    assert Vendor().environment(own, dict(env)) == {"VENDOR_KEY": "mine", "K": "gw", "PATH": "/bin"}


def test_allowed_takes_names_and_prefixes() -> None:
    assert allowed("PATH", ("PATH",)) and allowed("LC_ALL", ("LC_*",))
    assert not allowed("PATHS", ("PATH",)) and not allowed("XLC_ALL", ("LC_*",))
    assert set(MINIMAL_ENV) < set(CLI_ENV)


def test_home_is_the_state_folder_and_none_given_is_an_error(tmp_path: Path) -> None:
    assert Tool().home(inv(tmp_path, state=tmp_path / "state")) == str(tmp_path / "state")
    with pytest.raises(InvalidError) as caught:
        Tool().home(inv(tmp_path))
    assert (str(caught.value), caught.value.exit_code) == (
        "adapter tool: no state folder was given for its setup", errors.INVALID)  # fmt: skip


# read and explain -----------------------------------------------------------------------------------


def test_read_takes_stdout_as_the_final_message_and_the_exit_code_as_the_verdict() -> None:
    assert Tool().read(result(0), "DECISION: done\n", "warning: ignored\n") == Outcome(
        True, "DECISION: done\n"
    )
    assert Tool().read(result(75), "partial\n", "slow down\nquota exceeded\n") == Outcome(
        False, "partial\n", "tool exited 75 (rate limited): quota exceeded")  # fmt: skip


def test_explain_names_the_exit_code_its_meaning_and_the_last_line() -> None:
    assert Tool().explain(result(2), "  bad   flag --q \n\n") == "tool exited 2 (usage): bad flag --q"
    assert Tool().explain(result(3), "") == "tool exited 3 (error)"  # a code the adapter does not list
    assert Tool().explain(result(-9), "gone\n") == "tool exited -9 (error): gone"  # killed by a signal


def test_explain_says_a_kill_at_the_time_limit_or_for_stop() -> None:
    assert Tool().explain(result(None, timed_out=True, limit_s=60.0), "") == (
        "the agent was killed at its 60s time limit")  # fmt: skip
    assert Tool().explain(result(None, timed_out=True, limit_s=1.5), "step 3 of 9\n") == (
        "the agent was killed at its 1.5s time limit; its last line: step 3 of 9")  # fmt: skip
    assert Tool().explain(result(None, stopped=True), "bye\n") == "the agent was killed because STOP appeared"


def test_killed_names_the_limit_when_it_is_known() -> None:
    assert (
        killed(result(None, timed_out=True, limit_s=600.0)) == "the agent was killed at its 600s time limit"
    )
    assert killed(result(None, timed_out=True)) == "the agent was killed at its time limit"


# output helpers -----------------------------------------------------------------------------------------
