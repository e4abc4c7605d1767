"""control-room adapters: every adapter, and whether its CLI is installed on this PATH."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

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
        assert (by_name[name]["binary"], by_name[name]["installed"], by_name[name]["path"]) == (None, True, None)
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
