"""The review tests' fixture: a repository beside the room, route r1's worktree with one commit."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import git, make_repo, task

from control_room.dispatch.worktrees import worktree
from control_room.room import settings
from control_room.room.layout import Room
from control_room.room.settings import Settings


@pytest.fixture
def repo_room(room: Room, tmp_path: Path) -> tuple[Settings, Path]:
    """A repository beside the room, and route r1's worktree with one commit (b.txt) on it."""
    make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    s = settings.load(room).replace(repo="../repo")
    tree = worktree.workdir(room, s, task("t1", route="r1"))
    (tree / "b.txt").write_text("b\n")
    git(tree, "add", "b.txt")
    git(tree, "commit", "-q", "-m", "b")
    return s, tree
