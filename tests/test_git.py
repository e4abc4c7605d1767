"""control_room.git: the one git runner: its answer to a git that hangs, and who commits."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support import git as checked
from support import make_repo

from control_room import git, proc


def test_it_runs_git_in_the_repository_without_a_shell(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    assert git.run(repo, "rev-parse", "--abbrev-ref", "HEAD") == (0, "main\n", "")
    code, _, err = git.run(repo, "log", "no-such-rev; echo pwned")
    assert code != 0 and "no-such-rev; echo pwned" in err  # one argument, as given


def test_commits_are_control_rooms_on_its_host(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "a.txt").write_text("a\n")
    checked(repo, "add", "a.txt")
    assert git.run(repo, "commit", "-q", "-m", "work", committer="m7")[0] == 0
    who = checked(repo, "log", "-1", "--format=%an <%ae>|%cn <%ce>")
    assert who == "control-room (m7) <control-room@m7>|control-room (m7) <control-room@m7>"


def test_a_git_that_gives_no_answer_is_exit_124_with_a_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    slow = bin_dir / "git"
    slow.write_text("#!/bin/sh\nexec sleep 30\n")
    slow.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    assert git.run(tmp_path, "fetch", "origin", timeout_s=0.2) == (
        124,
        "",
        "git fetch gave no answer in 0.2s",
    )


def test_a_remote_that_asks_for_a_password_is_not_asked(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    code, _, err = git.run(repo, "ls-remote", "http://127.0.0.1:9/nothing.git", timeout_s=30)
    assert code not in (0, git.NO_ANSWER) and err  # refused at once, no prompt waits on a terminal


def test_no_git_is_an_error_that_names_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(proc.ExecutableNotFound, match="git: command not found on PATH"):
        git.run(tmp_path, "status")


def test_gits_own_words_are_its_fatal_and_error_lines_else_its_last_two() -> None:
    assert git.said("hint: x\nfatal: no such remote\nerror: failed\nerror: third\n") == (
        "fatal: no such remote / error: failed"
    )
    assert git.said("one\ntwo\nthree\n") == "two / three"
    assert git.said("  \n") == ""
    assert git.told("  \n") == "no message"  # an error line still names something
    assert git.told("fatal: no such remote\n") == "fatal: no such remote"
