"""dispatch.merge.fitness: what the merge queue asks before it merges, on real repositories."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from support import git, make_repo, task

from control_room.dispatch.merge import fitness
from control_room.errors import RoomInvalidError
from control_room.room import settings
from control_room.room.layout import Room


def branch(tmp_path: Path, files: dict[str, str], change: dict[str, str | bytes]) -> Path:
    """A repository on `main` with ``files``, and a commit of ``change`` on branch `work`."""
    repo = make_repo(tmp_path / "repo", files)
    git(repo, "switch", "-q", "-c", "work")
    for name, text in change.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "work")
    return repo


def test_changed_counts_lines_added_and_deleted_per_file_and_a_binary_as_zero(tmp_path: Path) -> None:
    repo = branch(
        tmp_path, {"a.txt": "1\n2\n3\n"}, {"a.txt": "1\n3\n4\n5\n", "b.bin": b"\0\1\2", "d/c.txt": "c\n"}
    )
    assert sorted(fitness.changed(repo, "main")) == [("a.txt", 2, 1), ("b.bin", 0, 0), ("d/c.txt", 1, 0)]


def test_changed_against_a_base_that_does_not_exist_is_nothing(tmp_path: Path) -> None:
    repo = branch(tmp_path, {"a.txt": "a\n"}, {"a.txt": "b\n"})
    assert fitness.changed(repo, "no-such-branch") == []


@pytest.mark.parametrize(
    ("owns", "outside"),
    [
        ([], []),  # no owns: any path
        (["src"], ["docs/x.md", "srcx/y.py"]),  # a folder owns what is under it, not a name it prefixes
        (["src/", "docs/x.md"], ["srcx/y.py"]),
        (["."], []),
        (["./src", "docs//x.md"], ["srcx/y.py"]),  # spelt another way, the same paths
        (["./"], []),
    ],
)
def test_outside_owns_names_the_paths_no_owned_path_covers(owns: list[str], outside: list[str]) -> None:
    paths = ["src/a.py", "src/deep/b.py", "docs/x.md", "srcx/y.py"]
    assert fitness.outside_owns(task("t1", owns=owns), paths) == outside


def test_megafiles_are_the_files_the_change_grows_past_the_limit(tmp_path: Path) -> None:
    before = "".join(f"{i}\n" for i in range(8))
    repo = branch(
        tmp_path,
        {"big.txt": before, "shrinks.txt": before},
        {
            "big.txt": before + "8\n9\n10\n",
            "shrinks.txt": "0\n",
            "new.txt": "".join(f"{i}\n" for i in range(12)),
        },
    )
    found = fitness.megafiles(repo, "main", fitness.changed(repo, "main"), 10)
    assert sorted(found) == [("big.txt", 8, 11), ("new.txt", 0, 12)]
    assert fitness.megafiles(repo, "main", fitness.changed(repo, "main"), 12) == []


def test_names_shows_five_and_counts_the_rest() -> None:
    assert fitness.names(["a", "b"]) == "a, b"
    assert fitness.names([str(i) for i in range(8)]) == "0, 1, 2, 3, 4 and 3 more"


def test_half_done_undoes_a_rebase_left_in_the_middle(tmp_path: Path) -> None:
    repo = branch(tmp_path, {"a.txt": "base\n"}, {"a.txt": "work\n"})
    git(repo, "switch", "-q", "main")
    (repo / "a.txt").write_text("main\n")
    git(repo, "commit", "-qam", "main moves")
    git(repo, "switch", "-q", "work")
    with pytest.raises(subprocess.CalledProcessError):  # the rebase conflicts
        git(repo, "rebase", "-q", "main")
    assert fitness.half_done(repo) == "a rebase"
    assert fitness.half_done(repo) is None  # undone: nothing left in the middle
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD") == "work"


def test_the_main_tree_is_fit_only_on_its_base_branch_and_clean(room: Room, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    s = settings.load(room).replace(repo="../repo", base_branch="main")
    assert fitness.main_tree_fit(room, s, repo) == "main"
    (repo / "a.txt").write_text("edited\n")
    with pytest.raises(RoomInvalidError, match=r"has uncommitted changes \(a.txt\); commit or stash them"):
        fitness.main_tree_fit(room, s, repo)
    git(repo, "stash", "-q")
    git(repo, "switch", "-q", "-c", "other")
    with pytest.raises(RoomInvalidError, match="has other checked out, not the base branch main"):
        fitness.main_tree_fit(room, s, repo)
