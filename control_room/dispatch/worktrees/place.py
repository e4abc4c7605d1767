"""Where a task's worktree is, and what a person left half done in one (SPEC §11).

Paths and file reads only, no git: ``status`` and ``task list`` ask ``ready`` about every
queued task, and ``ready`` asks here whether its worktree is in the middle of a rebase.
Making, using and removing worktrees is ``worktrees``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from control_room.room.layout import Room
from control_room.store.files import read_text

MID = {  # files in the git dir that mean an operation is half done
    "rebase-merge": "a rebase",
    "rebase-apply": "a rebase",
    "MERGE_HEAD": "a merge",
    "CHERRY_PICK_HEAD": "a cherry-pick",
    "REVERT_HEAD": "a revert",
}


def folder(room: Room) -> Path:
    return room.cr / "worktrees"


def branch_of(task: Mapping[str, Any]) -> str:
    """``route/<route>``; a task with no route: ``task/<id>``, or for a task that serves another
    (a resolver or decompose task: ``for_task``; a review: ``reviews``; an arbiter:
    ``arbitrates``), the branch of the task it serves."""
    if task.get("route"):
        return f"route/{task['route']}"
    served = task.get("for_task") or task.get("reviews") or task.get("arbitrates")
    return f"task/{served or task['id']}"


def path_of(room: Room, task: Mapping[str, Any]) -> Path:
    """Where ``task``'s worktree is (or would be)."""
    return (folder(room) / branch_of(task).replace("/", "-")).resolve()


def branch_named(name: str) -> str:
    """The branch of the worktree folder ``name``: ``route-r1`` -> ``route/r1``, ``task-t1`` ->
    ``task/t1`` (``path_of``'s inverse)."""
    kind, _, rest = name.partition("-")
    return f"{kind}/{rest}"


def git_dir(path: Path) -> Path | None:
    """The git dir of the checkout at ``path``: ``path/.git`` itself, or where its ``.git`` file
    points (``gitdir: ...``, as in every linked worktree); None if ``path`` holds no checkout.
    A folder inside some other repository is not one: only ``path/.git`` counts."""
    dot = path / ".git"
    if dot.is_dir():
        return dot
    try:
        text = read_text(dot, 4096)  # a regular file only: the work dir is the agent's
    except OSError:  # no .git (or unreadable): not a checkout
        return None
    first = text.splitlines()[0] if text else ""
    if not first.startswith("gitdir:"):
        return None
    return path / first[len("gitdir:") :].strip()  # a relative gitdir is relative to the checkout


def half_done(path: Path) -> str | None:
    """What the checkout at ``path`` is in the middle of (``a rebase``, ...), or None."""
    where = git_dir(path)
    if where is None:
        return None
    return next((what for name, what in MID.items() if (where / name).exists()), None)
