"""dispatch.worktrees.worktree: a worktree per route on a real repository: made, reused, removed."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from support import entries, git, make_repo, set_gate

from control_room import errors
from control_room.dispatch.worktrees import place, worktree
from control_room.room import scaffold
from control_room.room import settings as settings_file
from control_room.room.layout import Room
from control_room.room.settings import Settings

R1 = {"id": "t1", "route": "r1"}


def settings(room: Room) -> Settings:
    return settings_file.load(room)


def lines_of(room: Room, event: str) -> list[tuple[str, str, str]]:
    """(task, route, detail) of each ledger line of ``event``."""
    return [(e.task, e.route, e.detail) for e in entries(room, event)]


def commit_file(tree: Path, name: str, text: str) -> str:
    (tree / name).write_text(text)
    git(tree, "add", name)
    git(tree, "commit", "-q", "-m", f"{name} in {tree.name}")
    return git(tree, "rev-parse", "HEAD")


def test_repo_of_is_the_repo_named_in_control_md_from_the_room(room: Room, tmp_path: Path) -> None:
    assert worktree.repo_of(room, settings(room)) is None
    set_gate(room, "repo", "../repo")
    assert worktree.repo_of(room, settings(room)) == (tmp_path / "repo").resolve()


# check: fail closed ------------------------------------------------------------------------------


def test_check_says_what_stops_worktrees_from_being_made(room: Room, tmp_path: Path) -> None:
    assert worktree.check(room, settings(room)) is None  # no repo: nothing to check
    set_gate(room, "repo", "../repo")
    repo = tmp_path / "repo"
    assert worktree.check(room, settings(room)) == (
        f"{room.control}: repo {repo} does not exist; fix repo in CONTROL.md"
    )
    repo.mkdir()
    said = worktree.check(room, settings(room))
    assert said is not None and said.startswith(
        f"{room.control}: repo {repo} is not a git repository (fatal: "
    )
    shutil.rmtree(repo)
    make_repo(repo)
    assert worktree.check(room, settings(room)) is None
    for name, what in place.MID.items():
        mark = repo / ".git" / name
        mark.mkdir() if name.startswith("rebase") else mark.write_text("0" * 40)
        assert worktree.check(room, settings(room)) == (
            f"{repo} is in the middle of {what}; finish or abort it there (no worktree is made or touched "
            "until then)"
        )
        shutil.rmtree(mark) if mark.is_dir() else mark.unlink()


def test_no_worktree_is_made_while_the_repository_is_mid_merge(room: Room, repo: Path) -> None:
    (repo / ".git" / "MERGE_HEAD").write_text(git(repo, "rev-parse", "HEAD"))
    before = room.ledger.read_bytes()
    with pytest.raises(errors.RoomInvalidError) as refused:
        worktree.workdir(room, settings(room), R1)
    assert str(refused.value) == (
        f"room invalid: {repo} is in the middle of a merge; finish or abort it there (no worktree is made "
        "or touched until then)"
    )
    assert not place.folder(room).exists() and room.ledger.read_bytes() == before


# workdir: made, reused, made again ---------------------------------------------------------------


def test_a_routes_worktree_is_made_once_from_the_base_and_reused(room: Room, repo: Path) -> None:
    tree = worktree.workdir(room, settings(room), R1)
    assert tree == place.path_of(room, R1) and (tree / "README").read_text() == "hello\n"
    assert git(tree, "rev-parse", "--abbrev-ref", "HEAD") == "route/r1"
    assert git(tree, "rev-parse", "HEAD") == git(repo, "rev-parse", "main")
    assert (place.folder(room) / ".gitignore").read_text() == worktree.IGNORE
    assert lines_of(room, "worktree-add") == [
        ("t1", "r1", "route/r1 made at control-room/worktrees/route-r1 from main")
    ]
    # the first worktree fixes the base: a person switching branches later does not change it
    assert settings(room).base_branch == "main"
    assert lines_of(room, "warning") == [
        ("", "", "base_branch was empty: set to main, the repository's current branch, in CONTROL.md")
    ]
    git(repo, "switch", "-q", "-c", "elsewhere")
    assert worktree.base_of(repo, settings(room)) == "main"
    again = worktree.workdir(room, settings(room), {"id": "t2", "route": "r1"})
    assert again == tree and len(entries(room, "worktree-add")) == 1 and len(entries(room, "warning")) == 1


def test_a_worktree_starts_from_base_branch_when_control_md_names_it(room: Room, repo: Path) -> None:
    git(repo, "switch", "-q", "-c", "dev")
    dev = commit_file(repo, "dev.txt", "d")
    git(repo, "switch", "-q", "main")
    set_gate(room, "base_branch", "dev")
    control = room.control.read_bytes()
    tree = worktree.workdir(room, settings(room), {"id": "solo"})
    assert (
        git(tree, "rev-parse", "HEAD") == dev
        and git(tree, "rev-parse", "--abbrev-ref", "HEAD") == "task/solo"
    )
    assert lines_of(room, "worktree-add") == [
        ("solo", "", "task/solo made at control-room/worktrees/task-solo from dev")
    ]
    assert room.control.read_bytes() == control and entries(room, "warning") == []


def test_a_worktree_whose_folder_vanished_is_made_again_from_its_branch(room: Room, repo: Path) -> None:
    tree = worktree.workdir(room, settings(room), R1)
    work = commit_file(tree, "made.txt", "x")
    shutil.rmtree(tree)
    again = worktree.workdir(room, settings(room), R1)
    assert again == tree and (tree / "made.txt").read_text() == "x"  # the branch kept the work
    assert git(tree, "rev-parse", "HEAD") == work
    assert lines_of(room, "worktree-rebuilt") == [
        ("t1", "r1", "route/r1 made again at control-room/worktrees/route-r1 from route/r1")
    ]


def test_a_worktree_left_in_the_middle_of_a_rebase_is_neither_used_nor_made_again(
    room: Room, repo: Path
) -> None:
    tree = worktree.workdir(room, settings(room), R1)
    head = commit_file(tree, "mine.txt", "a person's work")
    git(tree, "checkout", "-q", "--detach")  # what a rebase does to the branch
    git_dir = Path(git(tree, "rev-parse", "--absolute-git-dir"))
    (git_dir / "rebase-merge").mkdir()
    before = room.ledger.read_bytes()
    with pytest.raises(errors.RoomInvalidError) as refused:
        worktree.workdir(room, settings(room), {"id": "t2", "route": "r1"})
    assert str(refused.value) == (
        f"room invalid: the worktree {tree} is in the middle of a rebase; finish or abort it there "
        "(its task waits until then)"
    )
    assert (tree / "mine.txt").exists() and git(tree, "rev-parse", "HEAD") == head  # untouched
    assert (git_dir / "rebase-merge").is_dir() and room.ledger.read_bytes() == before


def test_a_reused_worktree_catches_up_with_the_base_only_once_its_work_is_merged(
    room: Room, repo: Path
) -> None:
    tree = worktree.workdir(room, settings(room), R1)
    commit_file(tree, "a.txt", "a")
    git(repo, "merge", "-q", "--ff-only", "route/r1")  # r1's work merged
    other = commit_file(repo, "b.txt", "b")  # another route's, merged meanwhile
    worktree.workdir(room, settings(room), R1)
    assert git(tree, "rev-parse", "HEAD") == other and (tree / "b.txt").exists()
    mine = commit_file(tree, "c.txt", "c")  # work of its own, not merged: left to the merge queue
    commit_file(repo, "d.txt", "d")
    worktree.workdir(room, settings(room), R1)
    assert git(tree, "rev-parse", "HEAD") == mine and not (tree / "d.txt").exists()


def test_base_of_a_detached_repository_without_base_branch_is_the_rooms_fault(room: Room, repo: Path) -> None:
    git(repo, "switch", "-q", "--detach")
    with pytest.raises(errors.RoomInvalidError) as refused:
        worktree.base_of(repo, settings(room))
    assert str(refused.value) == (
        f"room invalid: {repo} has no current branch to start worktrees from; set base_branch in CONTROL.md"
    )
    set_gate(room, "base_branch", "main")
    assert worktree.base_of(repo, settings(room)) == "main"


# commit, ahead, dirty ----------------------------------------------------------------------------


def test_commit_commits_everything_as_control_room_on_its_host_or_says_nothing_changed(
    room: Room, repo: Path
) -> None:
    tree = worktree.workdir(room, settings(room), R1)
    assert worktree.commit(tree, "t1: nothing", "m1") is None
    assert worktree.ahead(room, settings(room), tree) is False
    (tree / "README").write_text("changed\n")
    (tree / "src").mkdir()
    (tree / "src" / "new.py").write_text("x = 1\n")
    made = worktree.commit(tree, "t1: the agent's work", "m1")
    assert made == git(tree, "rev-parse", "HEAD")
    assert (
        git(tree, "log", "-1", "--format=%an <%ae>|%s")
        == "control-room (m1) <control-room@m1>|t1: the agent's work"
    )
    assert git(tree, "show", "--name-only", "--format=", "HEAD").split() == ["README", "src/new.py"]
    assert git(tree, "status", "--porcelain") == ""
    assert worktree.ahead(room, settings(room), tree) is True


def test_a_commit_git_refuses_is_an_error_with_gits_words(room: Room, repo: Path) -> None:
    tree = worktree.workdir(room, settings(room), R1)
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'no commits today' >&2\nexit 1\n")
    hook.chmod(0o755)
    (tree / "a.txt").write_text("a")
    with pytest.raises(errors.ControlRoomError) as refused:
        worktree.commit(tree, "t1: work", "m1")
    assert str(refused.value) == f"git commit in {tree} failed: no commits today"
    assert git(tree, "log", "--format=%s") == "first"


def test_dirty_lists_uncommitted_paths_but_not_the_rooms_own_files(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project", {"code.py": "x = 1\n"})
    assert worktree.dirty(repo) == []
    scaffold.init(repo / "ops")  # a room in the repository, its files never committed
    room = Room(repo / "ops")
    room.stop.write_text("")
    (repo / "code.py").write_text("x = 2\n")
    (repo / "notes").mkdir()
    (repo / "notes" / "todo.txt").write_text("t")
    assert worktree.dirty(repo, room=room) == ["code.py", "notes/todo.txt"]
    assert "ops/control-room/LEDGER.md" in worktree.dirty(repo)  # without the room: everything


def test_dirty_outside_a_repository_is_the_rooms_fault(tmp_path: Path) -> None:
    with pytest.raises(errors.RoomInvalidError) as refused:
        worktree.dirty(tmp_path)
    assert str(refused.value).startswith(
        f"room invalid: git status in {tmp_path} failed: fatal: not a git repository"
    )


# remove, and cleanup's pieces --------------------------------------------------------------------


def test_remove_takes_the_worktree_and_its_merged_branch_with_one_line(room: Room, repo: Path) -> None:
    tree = worktree.workdir(room, settings(room), R1)
    commit_file(tree, "a.txt", "a")
    git(repo, "merge", "-q", "--ff-only", "route/r1")
    assert worktree.remove(room, settings(room), R1, "route r1 has nothing left to run") is True
    assert not tree.exists() and git(repo, "branch", "--format=%(refname:short)") == "main"
    assert worktree.under(room, settings(room)) == {}
    assert lines_of(room, "worktree-remove") == [(
        "t1", "r1",
        "control-room/worktrees/route-r1 removed: route r1 has nothing left to run; branch route/r1 deleted "
        "(merged into main)",
    )]  # fmt: skip


def test_remove_keeps_an_unmerged_branch_and_a_worktree_with_changes(room: Room, repo: Path) -> None:
    tree = worktree.workdir(room, settings(room), R1)
    work = commit_file(tree, "a.txt", "a")
    (tree / "left.txt").write_text("uncommitted")
    assert worktree.remove(room, settings(room), R1, "parked") is False  # git would lose left.txt
    assert (tree / "left.txt").exists() and entries(room, "worktree-remove") == []
    (tree / "left.txt").unlink()
    assert worktree.remove(room, settings(room), R1, "cancelled") is True
    assert git(repo, "rev-parse", "route/r1") == work  # the work stays in git
    assert lines_of(room, "worktree-remove") == [(
        "t1", "r1",
        "control-room/worktrees/route-r1 removed: cancelled; branch route/r1 kept: not merged into main, its "
        "work stays in git",
    )]  # fmt: skip
    assert worktree.drop_branch(repo, "route/gone", "main") == "branch route/gone was gone already"


def test_under_lists_the_rooms_worktrees_only(room: Room, repo: Path, tmp_path: Path) -> None:
    tree = worktree.workdir(room, settings(room), R1)
    git(repo, "worktree", "add", "-q", "-b", "mine", str(tmp_path / "elsewhere"))  # a person's own
    git(repo, "worktree", "add", "-q", "--detach", str(place.folder(room) / "task-x"))
    assert worktree.under(room, settings(room)) == {
        tree: "route/r1",
        (place.folder(room) / "task-x").resolve(): "",
    }


def test_retire_removes_a_clean_worktree_and_gives_gits_reason_for_one_it_refuses(
    room: Room, repo: Path
) -> None:
    tree = worktree.workdir(room, settings(room), R1)
    (tree / "left.txt").write_text("uncommitted")
    said = subprocess.run(
        ["git", "-C", str(repo), "worktree", "remove", str(tree)], capture_output=True, text=True
    )
    assert said.returncode != 0
    assert worktree.retire(repo, tree) == " / ".join(said.stderr.strip().splitlines()[-2:])
    assert (tree / "left.txt").exists()
    os.unlink(tree / "left.txt")
    assert worktree.retire(repo, tree) is None
    assert not tree.exists() and "route-r1" not in git(repo, "worktree", "list")
