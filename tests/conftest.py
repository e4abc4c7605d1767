"""Shared fixtures: every test runs in its own empty folder, as a fixed writer, with no
CONTROL_ROOM in the environment."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from support import make_repo, set_gate

from control_room.cli import cli
from control_room.ledger.line import PREAMBLE
from control_room.room import scaffold
from control_room.room.layout import Room

WRITER = "tester"
E2E, REALCLI = Path(__file__).parent / "e2e", Path(__file__).parent / "realcli"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The e2e tier (`pytest -m e2e`): every test in tests/e2e/ and every test that runs the
    installed command as a process (the ``exe`` fixture), unless it is already slow or realcli.
    Marked here, before ``-m`` selects, so the default tier stays the fast loop."""
    for item in items:
        if item.get_closest_marker("slow") or item.path.is_relative_to(REALCLI):
            continue  # (tests/realcli/conftest.py marks its tests realcli after this runs)
        if item.path.is_relative_to(E2E) or "exe" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CONTROL_ROOM_WRITER", WRITER)
    monkeypatch.delenv("CONTROL_ROOM", raising=False)
    monkeypatch.chdir(tmp_path)


_MADE: list[Path] = []  # this process's fresh room, made by scaffold.init once


@pytest.fixture
def room(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, _isolated: None) -> Room:
    """A fresh room at tmp_path/room (made by the library, not the CLI): a copy of one room
    that ``scaffold.init`` made in this test process, as the writer every test is. A copy
    costs 5 ms, ``init`` 30 ms, and about 1,500 tests start from a fresh room."""
    if not _MADE:
        made = tmp_path_factory.mktemp("fresh") / "room"
        scaffold.init(made)
        _MADE.append(made)
    root = tmp_path / "room"
    shutil.copytree(_MADE[0], root, symlinks=True)
    return Room(root)


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    """An empty ledger (its preamble only) at tmp_path/LEDGER.md, outside any room."""
    path = tmp_path / "LEDGER.md"
    path.write_text(PREAMBLE, encoding="utf-8")
    return path


@pytest.fixture
def repo(tmp_path: Path, room: Room) -> Path:
    """A repository beside the room, one commit on `main`, named in CONTROL.md (``repo:``).
    A test file may define its own (other files in it, more settings)."""
    path = make_repo(tmp_path / "repo")
    set_gate(room, "repo", "../repo")
    return path


@pytest.fixture
def inside(room: Room) -> Room:
    """The fresh room, as the current folder: commands find it as a person's shell would."""
    os.chdir(room.root)
    return room


@pytest.fixture
def run() -> Callable[..., Result]:
    """Invoke the click app in-process; stdout and stderr are separate (click >= 8.2)."""
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None) -> Result:
        return runner.invoke(cli, list(args), input=input, prog_name="control-room", catch_exceptions=False)

    return invoke


@pytest.fixture(scope="session")
def exe() -> str:
    """The installed `control-room` executable: beside this interpreter (a venv used without
    activating it), else on PATH. Missing is a failure, never a skip."""
    search = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    found = shutil.which("control-room", path=search)
    if found is None:
        pytest.fail(
            "the `control-room` executable is not installed: it is neither beside "
            f"{sys.executable} nor on PATH; run `pip install -e .` in this environment"
        )
    return found


@pytest.fixture
def cr(exe: str, room: Room):  # type: ignore[no-untyped-def]
    """Run the installed command in the fresh room, as a separate process; a traceback fails."""
    env = {k: v for k, v in os.environ.items() if k != "CONTROL_ROOM"}
    env.update(CONTROL_ROOM=str(room.root), CONTROL_ROOM_WRITER="e2e")

    def run(*args: str, extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([exe, *args], cwd=room.root, env={**env, **(extra_env or {})},
                              capture_output=True, text=True, timeout=120)  # fmt: skip
        assert "Traceback" not in done.stderr, done.stderr
        return done

    run.env = env  # type: ignore[attr-defined]
    run.exe = exe  # type: ignore[attr-defined]
    return run
