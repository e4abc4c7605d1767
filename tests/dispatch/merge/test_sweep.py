"""dispatch.merge.sweep: which finished routes' worktrees cleanup removes or keeps, and why."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

from support import entries, git, set_gate, task

from control_room.dispatch.merge import sweep
from control_room.dispatch.worktrees import place, worktree
from control_room.room import retention
from control_room.room import settings as settings_file
from control_room.room.layout import Room
from control_room.room.retention import Item

DAY = 86400
R1 = {"id": "t1", "route": "r1"}
OLD = "last change 40 days ago, past retention_days 30"


def later(days: float = 40) -> float:
    """A ``now`` that many days ahead: what exists now is that old then."""
    return time.time() + days * DAY


def route_tree(room: Room, repo: Path, *, merged: bool = True) -> Path:
    """Route r1's worktree with one commit on its branch, merged into main or not."""
    tree = worktree.workdir(room, settings_file.load(room), R1)
    (tree / "made.txt").write_text("x")
    git(tree, "add", "made.txt")
    git(tree, "commit", "-q", "-m", "t1's work")
    if merged:
        git(repo, "merge", "-q", "--ff-only", "route/r1")
    return tree


def item(path: Path, why: str, task: str = "", state: str = "") -> Item:
    """The worktree item cleanup plans for ``path`` as it is now."""
    return Item(path.resolve(), "worktree", task, state, *retention.tree(path), why)


def put(room: Room, state: str, tid: str, **fields: object) -> None:
    (room.state_dir(state) / f"{tid}.json").write_text(json.dumps(task(tid, **fields)))


def test_without_a_repo_no_worktree_folder_is_looked_at(room: Room) -> None:
    (place.folder(room) / "route-r1").mkdir(parents=True)
    assert sweep.plan(room, now=later(400)) == sweep.Plan([], [], None)


def test_while_the_repository_is_mid_rebase_no_worktree_is_looked_at(room: Room, repo: Path) -> None:
    tree = route_tree(room, repo)
    (repo / ".git" / "rebase-merge").mkdir()
    assert sweep.plan(room, now=later()) == sweep.Plan(
        [],
        [],
        f"no worktree was looked at: {repo} is in the middle of a rebase; finish or abort it there (no "
        "worktree is made or touched until then)",
    )
    assert tree.is_dir()


def test_a_finished_routes_old_worktree_goes_with_its_merged_branch(room: Room, repo: Path) -> None:
    tree = route_tree(room, repo)
    assert sweep.plan(room) == sweep.Plan([], [], None)  # young: it stays
    why = f"route r1 has no task left to run, {OLD}"
    planned = sweep.plan(room, now=later())
    assert planned == sweep.Plan([item(tree, why)], [], None)
    seen: list[Item] = []
    gone = sweep.clean(room, planned.items, on_removed=seen.append)
    removed = replace(planned.items[0], why=f"{why}; branch route/r1 deleted (merged into main)")
    assert gone == seen == [removed]
    assert not tree.exists() and git(repo, "branch", "--format=%(refname:short)") == "main"
    size = retention.size_text(removed.size)
    assert [(e.task, e.detail) for e in entries(room, "cleanup")] == [
        ("", f"control-room/worktrees/route-r1/ (worktree, {size}): {removed.why}")
    ]
    assert sweep.plan(room, now=later()) == sweep.Plan([], [], None)


def test_a_task_of_the_route_not_finished_keeps_its_worktree(room: Room, repo: Path) -> None:
    tree = route_tree(room, repo)
    for state in sweep.PENDING:  # queued, running, passed, parked, to-test
        put(room, state, "t2", route="r1")
        assert sweep.plan(room, now=later()) == sweep.Plan([], [], None), state
        (room.state_dir(state) / "t2.json").unlink()
    assert [i.path for i in sweep.plan(room, now=later()).items] == [tree]


def test_uncommitted_changes_keep_a_worktree_and_cleanup_says_why(room: Room, repo: Path) -> None:
    tree = route_tree(room, repo)
    for k in range(1, 7):
        (tree / f"f{k}.txt").write_text("a person's work")
    why = f"route r1 has no task left to run, {OLD}, but it has uncommitted changes: f1.txt, f2.txt, f3.txt, "
    planned = sweep.plan(room, now=later())
    assert planned == sweep.Plan([], [item(tree, why + "f4.txt, f5.txt and 1 more")], None)
    assert sweep.plan(room) == sweep.Plan([], [], None)  # young: not due, so not said to be kept


def test_a_worktree_in_the_middle_of_a_cherry_pick_is_kept(room: Room, repo: Path) -> None:
    tree = route_tree(room, repo)
    git_dir = Path(git(tree, "rev-parse", "--absolute-git-dir"))
    (git_dir / "CHERRY_PICK_HEAD").write_text(git(tree, "rev-parse", "HEAD"))
    why = f"route r1 has no task left to run, {OLD}, but it is in the middle of a cherry-pick"
    assert sweep.plan(room, now=later()) == sweep.Plan([], [item(tree, why)], None)


def test_a_leftover_folder_goes_only_when_empty(room: Room, repo: Path) -> None:
    """Folders git does not list: an empty one goes, one with files is kept (they cannot be checked
    for uncommitted work), one control-room did not name is not looked at."""
    top = place.folder(room)
    for name in ("route-gone", "task-lost", "task-t9", "mine"):
        (top / name).mkdir(parents=True)
    (top / "task-lost" / "notes.txt").write_text("a person's notes")
    put(room, "done", "t9")
    planned = sweep.plan(room, now=later())
    assert planned.items == [
        item(top / "route-gone", f"route gone has no task left to run, {OLD}"),
        item(top / "task-t9", f"task t9 is done, {OLD}", "t9", "done"),
    ]
    assert planned.kept == [
        item(top / "task-lost", (
            f"task lost has no task file, {OLD}, but git does not list it as a worktree of {repo}, so its "
            "files cannot be checked for uncommitted work; look at it and remove it by hand"), "lost"),
    ]  # fmt: skip
    gone = sweep.clean(room, planned.items)
    assert [i.why for i in gone] == [
        f"route gone has no task left to run, {OLD}; branch route/gone was gone already",
        f"task t9 is done, {OLD}; branch task/t9 was gone already",
    ]
    assert sorted(p.name for p in top.iterdir()) == ["mine", "task-lost"]
    assert [e.task for e in entries(room, "cleanup")] == ["", "t9"]


def test_clean_checks_each_worktree_again_just_before(room: Room, repo: Path) -> None:
    tree = route_tree(room, repo)
    (place.folder(room) / "route-gone").mkdir()
    planned = sweep.plan(room, now=later())
    assert [i.path.name for i in planned.items] == ["route-gone", "route-r1"]
    put(room, "queue", "t2", route="r1")  # r1 has work again
    (place.folder(room) / "route-gone").rmdir()  # a person removed it meanwhile
    assert sweep.clean(room, planned.items) == []
    assert tree.is_dir() and "route/r1" in git(repo, "branch") and entries(room, "cleanup") == []


def test_clean_removes_finished_results_and_worktrees_alike(room: Room, repo: Path) -> None:
    tree = route_tree(room, repo)
    put(room, "done", "old")
    (room.swarm / "results" / "old").mkdir(parents=True)
    (room.swarm / "results" / "old" / "report.md").write_text("r" * 100)
    planned = sweep.plan(room, now=later())
    assert [(i.kind, i.path) for i in planned.items] == [
        ("results", room.swarm / "results" / "old"),
        ("worktree", tree),
    ]
    assert [i.kind for i in sweep.clean(room, planned.items)] == ["results", "worktree"]
    assert not (room.swarm / "results" / "old").exists() and not tree.exists()
    assert [e.task for e in entries(room, "cleanup")] == ["old", ""]


def test_a_branch_is_kept_when_there_is_no_base_to_check_it_against(room: Room, repo: Path) -> None:
    tree = route_tree(room, repo)
    set_gate(room, "base_branch", "")
    git(repo, "switch", "-q", "--detach")
    [gone] = sweep.clean(room, sweep.plan(room, now=later()).items)
    assert gone.why == (
        f"route r1 has no task left to run, {OLD}; branch route/r1 kept: no base branch to check it is "
        "merged into"
    )
    assert not tree.exists() and "route/r1" in git(repo, "branch")
