"""control_room.room.gitmerge: the .gitattributes lines, command lines, -c options, register, missing."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from support import git, make_repo

from control_room import proc
from control_room.room import gitmerge
from control_room.room.gitmerge import DRIVER, DRIVERS

NAMES = ["control-room-ledger", "control-room-routes", "control-room-view"]


@pytest.fixture(autouse=True)
def _no_global_git_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Only the repository's own config counts: not this machine's ~/.gitconfig or /etc/gitconfig."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "global.gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


@pytest.fixture
def cmd(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """This process runs as an installed `control-room` at a path with a space in it."""
    path = tmp_path / "my bin" / "control-room"
    path.parent.mkdir()
    path.write_text("#!/bin/sh\n")
    monkeypatch.setattr(sys, "argv", [str(path), "init"])
    return shlex.quote(str(path))


def test_the_attributes_name_a_driver_for_each_file() -> None:
    assert gitmerge.attributes() == (
        "LEDGER.md merge=control-room-ledger\n"
        "ROUTES.md merge=control-room-routes\n"
        "CURRENT_CONTEXT.md merge=control-room-view\n"
        "DIGEST.md merge=control-room-view\n"
    )
    assert [d.name for d in DRIVERS] == NAMES and DRIVER == "control-room-ledger"


def test_the_command_is_this_control_room_by_absolute_path_quoted(cmd: str) -> None:
    assert cmd.startswith("'") and cmd.endswith("/my bin/control-room'")
    assert [gitmerge.command(d) for d in DRIVERS] == [
        f"{cmd} ledger merge %O %A %B",
        f"{cmd} merge-driver routes %O %A %B",
        f"{cmd} merge-driver view %O %A %B %P",
    ]


def test_the_command_is_the_one_on_path_when_not_run_as_control_room(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    found = tmp_path / "bin" / "control-room"
    found.parent.mkdir()
    found.write_text("#!/bin/sh\n")
    found.chmod(0o755)
    monkeypatch.setattr(sys, "argv", ["pytest"])
    monkeypatch.setenv("PATH", str(found.parent))
    assert gitmerge.command(DRIVERS[1]) == f"{found} merge-driver routes %O %A %B"


def test_the_command_is_python_dash_m_when_there_is_no_control_room(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(sys, "argv", ["pytest"])
    monkeypatch.setenv("PATH", str(tmp_path))  # holds no control-room
    expected = f"{shlex.quote(sys.executable)} -m control_room ledger merge %O %A %B"
    assert gitmerge.command(DRIVERS[0]) == expected


def test_config_args_pass_every_driver_to_one_git_run(cmd: str) -> None:
    assert gitmerge.config_args() == [
        "-c", "merge.control-room-ledger.name=control-room ledger: every line of both sides once, "
        "by event id",
        "-c", f"merge.control-room-ledger.driver={cmd} ledger merge %O %A %B",
        "-c", "merge.control-room-routes.name=control-room routes: row by row, keyed by route",
        "-c", f"merge.control-room-routes.driver={cmd} merge-driver routes %O %A %B",
        "-c", "merge.control-room-view.name=control-room views: the auto block and DIGEST.md ours, "
        "the people's part three-way",
        "-c", f"merge.control-room-view.driver={cmd} merge-driver view %O %A %B %P",
    ]  # fmt: skip


def test_register_writes_each_driver_into_the_repositorys_config_once(cmd: str, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    room = repo / "rooms" / "one"  # a room anywhere in the work tree: the config is the repository's
    room.mkdir(parents=True)
    assert gitmerge.missing(room) == NAMES and gitmerge.registered(room) is False
    assert gitmerge.register(room) == [
        f"registered  git merge driver control-room-ledger in {repo}: {cmd} ledger merge %O %A %B",
        f"registered  git merge driver control-room-routes in {repo}: {cmd} merge-driver routes %O %A %B",
        f"registered  git merge driver control-room-view in {repo}: {cmd} merge-driver view %O %A %B %P",
    ]
    assert (
        git(repo, "config", "--local", "merge.control-room-view.driver")
        == f"{cmd} merge-driver view %O %A %B %P"
    )
    assert git(repo, "config", "--local", "merge.control-room-routes.name") == DRIVERS[1].title
    assert gitmerge.missing(room) == [] and gitmerge.registered(room) is True
    assert gitmerge.register(room) == [
        f"kept  git merge driver {name} (registered already in {repo})" for name in NAMES
    ]


def test_a_driver_registered_with_another_command_is_registered_again(cmd: str, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    gitmerge.register(repo)
    git(
        repo,
        "config",
        "--local",
        "merge.control-room-routes.driver",
        "/old/control-room merge-driver routes %O %A %B",
    )
    assert gitmerge.missing(repo) == []  # any command line counts as there
    assert gitmerge.register(repo) == [
        f"kept  git merge driver control-room-ledger (registered already in {repo})",
        f"registered  git merge driver control-room-routes in {repo}: {cmd} merge-driver routes %O %A %B",
        f"kept  git merge driver control-room-view (registered already in {repo})",
    ]
    assert (
        git(repo, "config", "--local", "merge.control-room-routes.driver")
        == f"{cmd} merge-driver routes %O %A %B"
    )


def test_a_dry_run_says_what_it_would_register_and_writes_nothing(cmd: str, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    config = (repo / ".git" / "config").read_bytes()
    assert gitmerge.register(repo, dry_run=True) == [
        f"would register  git merge driver {name} in {repo}" for name in NAMES
    ]
    assert (repo / ".git" / "config").read_bytes() == config
    gitmerge.register(repo)
    assert gitmerge.register(repo, dry_run=True) == [
        f"kept  git merge driver {name} (registered already in {repo})" for name in NAMES
    ]


def test_a_config_git_cannot_write_is_said_per_driver(cmd: str, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / ".git" / "config.lock").write_text("")  # another git holds the config
    assert gitmerge.register(repo) == [
        f"could not register  git merge driver {name} in {repo} (git config exit 255)" for name in NAMES
    ]
    assert gitmerge.missing(repo) == NAMES


def test_missing_counts_a_driver_of_the_users_global_config(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (tmp_path / "global.gitconfig").write_text('[merge "control-room-view"]\n\tdriver = elsewhere %O %A %B\n')
    assert gitmerge.missing(repo) == ["control-room-ledger", "control-room-routes"]


def test_outside_a_work_tree_there_is_nothing_to_register(
    cmd: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    assert (gitmerge.register(plain), gitmerge.missing(plain), gitmerge.registered(plain)) == ([], None, None)
    repo = make_repo(tmp_path / "repo")
    inside_git_dir = repo / ".git"  # in a repository, but in no work tree
    assert (gitmerge.register(inside_git_dir), gitmerge.missing(inside_git_dir)) == ([], None)


def test_without_git_there_is_nothing_to_register(
    cmd: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo")
    monkeypatch.setattr(proc, "which", lambda program, env=None: None)
    assert (gitmerge.register(repo), gitmerge.missing(repo), gitmerge.registered(repo)) == ([], None, None)
