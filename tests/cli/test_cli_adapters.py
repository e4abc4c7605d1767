"""control-room adapters: every adapter, and whether its CLI is installed on this PATH."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from support import events, set_gate

from control_room.adapters import ADAPTERS, adapter_class

Run = Callable[..., Result]
FAKES = Path(__file__).parent.parent / "fakes"
BUILT_IN = {"probe", "command"}  # run nothing but what the task or CONTROL.md names


@pytest.fixture
def empty_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))


@pytest.fixture
def fakes_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{FAKES}")


def rows(run: Run) -> dict[str, dict[str, object]]:
    result = run("adapters", "--json")
    assert (result.exit_code, result.stderr) == (0, "")
    listed = json.loads(result.stdout)
    names = [r["name"] for r in listed]
    assert len(names) == len(set(names)), names
    return {r["name"]: r for r in listed}


def test_json_lists_every_adapter(run: Run, empty_path: None) -> None:
    by_name = rows(run)
    assert set(ADAPTERS) <= set(by_name)
    for name in ADAPTERS:
        assert by_name[name]["binary"] == adapter_class(name).binary
        assert by_name[name]["note"] == adapter_class(name).install
    for name in BUILT_IN:
        assert (by_name[name]["binary"], by_name[name]["installed"], by_name[name]["path"]) == (
            None,
            True,
            None,
        )
    for name in set(ADAPTERS) - BUILT_IN:
        assert (by_name[name]["installed"], by_name[name]["path"]) == (False, None), name


def test_the_fake_clis_show_as_installed_with_their_path(run: Run, fakes_path: None) -> None:
    by_name = rows(run)
    for name in set(ADAPTERS) - BUILT_IN:
        binary = adapter_class(name).binary
        assert binary is not None and (FAKES / binary).exists(), f"tests/fakes has no {binary}"
        assert (by_name[name]["installed"], by_name[name]["path"]) == (True, str(FAKES / binary)), name
    for name in BUILT_IN:
        assert (by_name[name]["installed"], by_name[name]["path"]) == (True, None)


def test_text_says_not_installed_without_the_clis(run: Run, empty_path: None) -> None:
    result = run("adapters")
    assert (result.exit_code, result.stderr) == (0, "")
    lines = {ln.split()[0]: ln for ln in result.stdout.splitlines()}
    assert set(ADAPTERS) <= set(lines)
    for name in BUILT_IN:
        assert lines[name] == f"{name:<13} built in"
    for name in set(ADAPTERS) - BUILT_IN:
        assert lines[name] == f"{name:<13} not installed ({adapter_class(name).install})"


def test_text_shows_the_path_of_each_installed_cli(run: Run, fakes_path: None) -> None:
    result = run("adapters")
    assert result.exit_code == 0
    lines = {ln.split()[0]: ln for ln in result.stdout.splitlines()}
    for name in set(ADAPTERS) - BUILT_IN:
        assert lines[name] == f"{name:<13} {FAKES / adapter_class(name).binary}"  # type: ignore[operator]
    assert "not installed" not in result.stdout


def test_adapters_needs_no_room(run: Run, empty_path: None, tmp_path: Path) -> None:
    assert not (tmp_path / "control-room").exists()
    assert run("adapters").exit_code == 0


# adapters --check: a one-turn hello, run as a cycle runs the adapter ----------------------------


def set_adapters(room: Path, setup: dict) -> None:  # type: ignore[type-arg]
    control = room / "control-room" / "CONTROL.md"
    text = control.read_text()
    assert "adapters: {}" in text
    control.write_text(text.replace("adapters: {}", f"adapters: {json.dumps(setup)}", 1))


@pytest.fixture
def with_fakes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{FAKES}{os.pathsep}{os.environ['PATH']}")


def test_check_says_ok_through_the_fake_and_logs_it(
    run: Run, inside, with_fakes: None, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("GATEWAY_KEY", "a-key")
    set_adapters(inside.root, {"claude": {"base_url": "http://127.0.0.1:9/", "api_key_env": "GATEWAY_KEY",
                                          "model": "m1", "isolated": True}})  # fmt: skip
    result = run("adapters", "--check", "claude")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout.startswith("claude        OK    answered (m1) in ")
    assert result.stdout.endswith(
        ", tokens 1200/345: Done; here is my report. DECISION: fake claude finished task\n"
    )
    tail = (inside.ledger.read_text().splitlines())[-1]
    assert "| adapter-check |" in tail and "| claude | ok | 0.0123 |" in tail
    assert (inside.cr / ".adapters" / "claude").is_dir()  # its isolated home, as in a cycle


def test_check_names_what_is_wrong_and_exits_14(
    run: Run, inside, with_fakes: None, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("FAKE_AGENT_MODE", "down")
    set_gate(inside, "env_allow", "[FAKE_AGENT_MODE]")  # the fake's own variable reaches it
    set_adapters(inside.root, {"claude": {"base_url": "http://127.0.0.1:9", "isolated": True},
                               "codex": {"base_url": "http://127.0.0.1:9/v1",
                                         "api_key_env": "UNSET_KEY_X"}})  # fmt: skip
    monkeypatch.delenv("UNSET_KEY_X", raising=False)
    claude = run("adapters", "--check", "claude")
    assert claude.exit_code == 14
    assert claude.stdout == (
        "claude        FAIL  claude exited 1 (API error or max turns reached): "
        "API Error: Connection refused\n"
    )
    codex = run("adapters", "--check", "codex")
    assert (codex.exit_code, codex.stdout) == (14, (
        "codex         FAIL  CONTROL.md: adapters.codex.api_key_env names UNSET_KEY_X, "
        "which is not set in this environment\n"))  # fmt: skip
    assert [e for e in events(inside.ledger) if e == "adapter-check"] == ["adapter-check"] * 2


def test_check_without_a_name_checks_what_is_installed_or_set_up(run: Run, inside, empty_path: None) -> None:  # type: ignore[no-untyped-def]
    result = run("adapters", "--check")
    assert (result.exit_code, result.stdout) == (
        14,
        "no agent CLI is installed here (control-room adapters lists them)\n",
    )


def test_check_of_an_unknown_adapter_and_name_without_check(run: Run, inside) -> None:  # type: ignore[no-untyped-def]
    result = run("adapters", "--check", "gpt9")
    assert (result.exit_code, result.stderr.splitlines()[0][:34]) == (7, "Error: no adapter 'gpt9' (known: a")
    result = run("adapters", "claude")
    assert result.exit_code == 2 and "NAME goes with --check" in result.stderr
