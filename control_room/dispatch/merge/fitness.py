"""What the merge queue checks before it merges (SPEC §11), asking git and changing nothing
but what it must undo: the main tree is fit for a fast-forward, the task's worktree was not left
half done, the rebased diff stays inside the task's ``owns``, and no file grows past
``megafile_lines``.
"""

from __future__ import annotations

from pathlib import Path

from control_room import git
from control_room.dispatch.worktrees import place, worktree
from control_room.errors import RoomInvalidError
from control_room.room.layout import Room
from control_room.room.settings import Settings
from control_room.room.tasks import Task, owned


def main_tree_fit(room: Room, settings: Settings, repo: Path) -> str:
    """The base branch, once the main tree is fit for a fast-forward; else RoomInvalidError."""
    why = worktree.check(room, settings)
    if why is not None:
        raise RoomInvalidError(f"room invalid: {why}; nothing was merged")
    base = worktree.base_of(repo, settings)
    current = git.run(repo, "rev-parse", "--abbrev-ref", "HEAD")[1].strip()
    if current != base:
        raise RoomInvalidError(
            f"room invalid: {repo} has {current} checked out, not the base branch {base}; "
            f"`git -C {repo} switch {base}` first (nothing was merged)"
        )
    left = worktree.dirty(repo, room=room)
    if left:
        raise RoomInvalidError(
            f"room invalid: {repo} has uncommitted changes ({names(left)}); commit or stash them "
            "first (nothing was merged)"
        )
    return base


def half_done(wt: Path) -> str | None:
    """What the worktree was left in the middle of (a resolver that did not finish its rebase),
    undone so that the next round starts clean; None if nothing."""
    what = place.half_done(wt)
    if what is not None:
        git.run(wt, what.split()[-1], "--abort")  # "a rebase" -> git rebase --abort
    return what


def changed(wt: Path, base: str) -> list[tuple[str, int, int]]:
    """(path, lines added, lines deleted) of each file the branch changes against ``base``
    (a binary file: 0, 0)."""
    code, out, _ = git.run(wt, "diff", "--numstat", "--no-renames", base, "HEAD")
    found = []
    for line in out.splitlines() if code == 0 else ():
        added, deleted, name = line.split("\t", 2)
        found.append((name, int(added) if added.isdigit() else 0, int(deleted) if deleted.isdigit() else 0))
    return found


def outside_owns(task: Task, paths: list[str]) -> list[str]:
    owns = [owned(str(o)) for o in task.get("owns", [])]
    if not owns:
        return []  # no owns declared: any path
    return [p for p in paths if not any(o in (".", p) or p.startswith(o + "/") for o in owns)]


def megafiles(
    wt: Path, base: str, changed: list[tuple[str, int, int]], limit: int
) -> list[tuple[str, int, int]]:
    """(path, lines before, lines after) of each file the change grows to more than ``limit``."""
    big = []
    for name, added, deleted in changed:
        if added <= deleted:
            continue
        code, out, _ = git.run(wt, "cat-file", "-p", f"{base}:{name}")
        before = out.count("\n") + (1 if out and not out.endswith("\n") else 0) if code == 0 else 0
        after = before + added - deleted
        if after > limit:
            big.append((name, before, after))
    return big


def names(paths: list[str], shown: int = 5) -> str:
    more = f" and {len(paths) - shown} more" if len(paths) > shown else ""
    return ", ".join(paths[:shown]) + more
