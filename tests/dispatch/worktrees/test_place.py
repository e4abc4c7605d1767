"""dispatch.worktrees.place: where a task's worktree is, and what a person left half
done in one, read from files (git itself is asked only to make the checkouts looked at)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from support import git, make_repo

from control_room.dispatch.worktrees import place
from control_room.room.layout import Room

R1 = {"id": "t1", "route": "r1"}


def test_a_task_works_on_its_routes_branch_or_on_the_one_of_the_task_it_serves(room: Room) -> None:
    assert place.branch_of(R1) == "route/r1"
    assert place.branch_of({"id": "t1"}) == "task/t1"
    assert place.branch_of({"id": "resolve-t9", "for_task": "t9"}) == "task/t9"
    assert place.branch_of({"id": "review-tests-t8", "reviews": "t8"}) == "task/t8"
    assert place.branch_of({"id": "arbitrate-t7", "arbitrates": "t7"}) == "task/t7"
    assert place.branch_of({"id": "resolve-t9", "for_task": "t9", "route": "r2"}) == "route/r2"
    assert place.path_of(room, R1) == (room.cr / "worktrees" / "route-r1").resolve()
    assert place.path_of(room, {"id": "t1"}) == (room.cr / "worktrees" / "task-t1").resolve()
    assert place.folder(room) == room.cr / "worktrees"
    for task in (R1, {"id": "t1"}, {"id": "x", "route": "a-b.c"}):  # branch_named inverts path_of
        name = place.path_of(room, task).name
        assert place.branch_named(name) == place.branch_of(task)


@pytest.fixture
def linked(tmp_path: Path) -> Path:
    """A linked worktree of a fresh repository (its `.git` is a file: `gitdir: ...`)."""
    repo = make_repo(tmp_path / "repo")
    tree = tmp_path / "tree"
    git(repo, "worktree", "add", "-q", "-b", "route/r1", str(tree))
    return tree


def test_git_dir_is_the_one_git_itself_names(linked: Path, tmp_path: Path) -> None:
    assert place.git_dir(linked) == Path(git(linked, "rev-parse", "--absolute-git-dir"))
    repo = tmp_path / "repo"
    assert place.git_dir(repo) == repo / ".git"  # a checkout whose .git is a folder


def test_a_relative_gitdir_is_read_from_the_checkout(linked: Path) -> None:
    target = Path(git(linked, "rev-parse", "--absolute-git-dir"))
    (linked / ".git").write_text("gitdir: ../repo/.git/worktrees/tree\n")  # git's own relative form
    assert place.git_dir(linked).resolve() == target.resolve()  # type: ignore[union-attr]
    assert git(linked, "rev-parse", "--absolute-git-dir") == str(target)  # git reads it the same


def test_a_folder_that_holds_no_checkout_has_no_git_dir(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    inside = repo / "sub"
    inside.mkdir()
    assert place.git_dir(inside) is None  # git would find the repository above: not ours
    assert place.git_dir(tmp_path / "missing") is None
    garbled = tmp_path / "garbled"
    garbled.mkdir()
    (garbled / ".git").write_text("not a gitdir line\n")
    assert place.git_dir(garbled) is None
    (garbled / ".git").write_text("")
    assert place.git_dir(garbled) is None


@pytest.mark.parametrize(("name", "what"), list(place.MID.items()))
def test_half_done_names_what_the_checkout_is_in_the_middle_of(linked: Path, name: str, what: str) -> None:
    assert place.half_done(linked) is None
    marker = Path(git(linked, "rev-parse", "--absolute-git-dir")) / name
    marker.mkdir() if name.startswith("rebase-") else marker.write_text(git(linked, "rev-parse", "HEAD"))
    assert place.half_done(linked) == what


def test_half_done_sees_a_real_rebase_stopped_at_a_conflict(linked: Path) -> None:
    (linked / "README").write_text("theirs\n")
    git(linked, "commit", "-q", "-am", "theirs")
    repo = linked.parent / "repo"
    (repo / "README").write_text("ours\n")
    git(repo, "commit", "-q", "-am", "ours")
    with pytest.raises(subprocess.CalledProcessError):  # the conflict stops it
        git(linked, "rebase", "main")
    assert place.half_done(linked) == "a rebase"
    git(linked, "rebase", "--abort")
    assert place.half_done(linked) is None


def test_a_folder_that_holds_no_checkout_is_in_the_middle_of_nothing(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    assert place.half_done(tmp_path / "plain") is None
    assert place.half_done(tmp_path / "missing") is None
