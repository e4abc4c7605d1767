"""cleanup and the worktrees of finished routes, through the installed command, on a real git
repository driven by real cycles: a finished route's old worktree goes with its merged branch;
a queued, parked or to-test task keeps it; uncommitted changes keep it (and cleanup says why);
an unmerged branch outlives its worktree; --dry-run changes nothing."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from support import FAIL, PY, entries, git, queue, set_gate, snapshot, verify_ok, where

from control_room import errors
from control_room.room import retention
from control_room.room.layout import Room

MAKE = [PY, "-c", "open('made.txt', 'a').write('x')"]  # the agent: writes in its cwd
DAY = 86400
WHY = "route r1 has no task left to run, last change 40 days ago, past retention_days 30"


def age(path: Path, days: float) -> None:
    """Set the mtime of ``path`` and everything under it to ``days`` ago."""
    when = time.time() - days * DAY
    for p in [path, *path.rglob("*")]:
        os.utime(p, (when, when), follow_symlinks=False)


def tree(room: Room) -> Path:
    return room.cr / "worktrees" / "route-r1"


def size(room: Room) -> str:
    return retention.size_text(retention.tree(tree(room))[0])


def branches(repo: Path) -> list[str]:
    return git(repo, "branch", "--format=%(refname:short)").split()


def state(room: Room, repo: Path) -> tuple[dict[Path, bytes], str, list[str]]:
    """Every file of the room and the repository (but caches), the worktrees git lists, the branches."""
    files = {
        p: b for p, b in {**snapshot(room.root), **snapshot(repo)}.items() if room.cache not in p.parents
    }
    return files, git(repo, "worktree", "list", "--porcelain"), branches(repo)


def merged_route(cr, room: Room) -> None:  # type: ignore[no-untyped-def]
    """Route r1: t1 passed and merged (in to-test), t2 still queued: the worktree stays after
    the merge, its branch merged into main."""
    assert cr("route", "add", "r1", "--title", "the first route").returncode == 0
    queue(room, "t1", route="r1", command=MAKE, priority=1)
    queue(room, "t2", route="r1", command=MAKE)
    assert cr("cycle").returncode == errors.PASSED
    done = cr("integrate")
    assert done.returncode == errors.OK, done.stdout + done.stderr
    assert where(room, "t1") == ["to-test"] and tree(room).is_dir()


def test_a_finished_routes_old_worktree_goes_with_its_merged_branch_only_once_nothing_needs_it(
    cr, room: Room, repo: Path
) -> None:
    merged_route(cr, room)
    age(tree(room), 40)
    assert cr("cleanup").stdout == "removed nothing\n"  # t2 is queued
    assert cr("task", "park", "t2", "--reason", "later").returncode == 0
    assert cr("cleanup").stdout == "removed nothing\n"  # t2 is parked
    assert cr("task", "cancel", "t2", "--reason", "not needed").returncode == 0
    assert where(room, "t2") == ["cancelled"]
    assert cr("cleanup").stdout == "removed nothing\n"  # t1 waits in to-test for a person
    assert tree(room).is_dir() and "route/r1" in branches(repo)
    assert cr("done", "t1", "--by", "me").returncode == 0
    sized = size(room)
    done = cr("cleanup")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (
        f"removed control-room/worktrees/route-r1/ (worktree, {sized}): {WHY}; branch route/r1 deleted "
        f"(merged into main)\nremoved 1 worktree, {sized}\n"
    )
    assert not tree(room).exists() and branches(repo) == ["main"]
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1  # the main tree only
    assert (repo / "made.txt").read_text() == "x"  # t1's work is on main
    [line] = entries(room, "cleanup")
    assert (line.task, line.detail) == (
        "",
        f"control-room/worktrees/route-r1/ (worktree, {sized}): {WHY}; branch route/r1 deleted "
        "(merged into main)",
    )
    assert (room.swarm / "results" / "t1").is_dir()  # young results stay
    assert cr("cleanup").stdout == "removed nothing\n"
    verify_ok(cr)


def test_a_young_worktree_stays_and_low_disk_takes_it(cr, room: Room, repo: Path) -> None:
    merged_route(cr, room)
    assert cr("task", "cancel", "t2", "--reason", "not needed").returncode == 0
    assert cr("done", "t1", "--by", "me").returncode == 0
    assert cr("cleanup").stdout == "removed nothing\n"  # young
    set_gate(room, "min_free_gb", "100000000")  # more than any disk: everything eligible goes
    done = cr("cleanup", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    kinds = [(i["kind"], i["path"], i["task"]) for i in out["items"]]
    assert ("worktree", "control-room/worktrees/route-r1/", "") in kinds
    [wt] = [i for i in out["items"] if i["kind"] == "worktree"]
    assert wt["why"].startswith("route r1 has no task left to run, oldest first while the disk has ")
    assert wt["why"].endswith("under min_free_gb 100000000; branch route/r1 deleted (merged into main)")
    assert (out["kept"], out["worktrees_note"]) == ([], None)
    assert not tree(room).exists() and branches(repo) == ["main"]


def test_a_worktree_with_uncommitted_changes_never_goes(cr, room: Room, repo: Path) -> None:
    """A failed run leaves the agent's change uncommitted; the task is parked, then cancelled."""
    set_gate(room, "max_rounds", "1")
    assert cr("route", "add", "r1", "--title", "the first route").returncode == 0
    queue(room, "t1", route="r1", command=MAKE, validator=FAIL)
    assert cr("cycle").returncode == errors.FAILED
    assert cr("task", "cancel", "t1", "--reason", "gave up").returncode == 0
    assert git(tree(room), "status", "--porcelain") == "?? made.txt"
    age(tree(room), 40)
    sized = size(room)
    kept = (
        f"kept control-room/worktrees/route-r1/ (worktree, {sized}): {WHY}, but it has uncommitted "
        "changes: made.txt\n"
    )
    before = state(room, repo)
    dry = cr("cleanup", "--dry-run")
    assert (dry.returncode, dry.stdout) == (0, kept + "would remove nothing\n")
    assert state(room, repo) == before
    done = cr("cleanup")
    assert (done.returncode, done.stdout) == (0, kept + "removed nothing\n")
    assert state(room, repo) == before and (tree(room) / "made.txt").read_text() == "x"
    assert entries(room, "cleanup") == []
    as_json = json.loads(cr("cleanup", "--json").stdout)
    assert [(k["path"], k["kind"], k["why"]) for k in as_json["kept"]] == [
        ("control-room/worktrees/route-r1/", "worktree", kept.split(": ", 1)[1].rstrip("\n"))
    ]
    # committed by hand, it may go; its branch is not merged, so the branch stays
    git(tree(room), "add", "made.txt")
    git(tree(room), "commit", "-q", "-m", "keep it")
    age(tree(room), 40)
    done = cr("cleanup")
    assert done.stdout.splitlines() == [
        f"removed control-room/worktrees/route-r1/ (worktree, {sized}): {WHY}; branch route/r1 kept: not "
        "merged into main, its work stays in git",
        f"removed 1 worktree, {sized}",
    ]
    assert not tree(room).exists() and branches(repo) == ["main", "route/r1"]
    assert git(repo, "show", "route/r1:made.txt") == "x"
    [line] = entries(room, "cleanup")
    assert line.detail.endswith("; branch route/r1 kept: not merged into main, its work stays in git")
    verify_ok(cr)


def test_dry_run_changes_nothing(cr, room: Room, repo: Path) -> None:
    merged_route(cr, room)
    assert cr("task", "cancel", "t2", "--reason", "not needed").returncode == 0
    assert cr("done", "t1", "--by", "me").returncode == 0
    age(tree(room), 40)
    sized = size(room)
    before = state(room, repo)
    mtimes = {p: p.stat().st_mtime_ns for p in tree(room).rglob("*")}
    done = cr("cleanup", "--dry-run")
    assert (done.returncode, done.stdout) == (
        0,
        f"would remove control-room/worktrees/route-r1/ (worktree, {sized}): {WHY}\n"
        f"would remove 1 worktree, {sized}\n",
    )
    assert state(room, repo) == before  # git's own files too: it only looked
    assert {p: p.stat().st_mtime_ns for p in tree(room).rglob("*")} == mtimes


def test_a_leftover_folder_goes_only_when_empty(cr, room: Room, repo: Path) -> None:
    """Folders git does not list: an empty one goes; one with files is kept (they cannot be
    checked for uncommitted work); a folder control-room did not name is not looked at."""
    top = room.cr / "worktrees"
    for name in ("route-gone", "task-lost", "mine"):
        (top / name).mkdir(parents=True)
    (top / "task-lost" / "notes.txt").write_text("a person's notes")
    age(top, 40)
    done = cr("cleanup")
    assert done.stdout.splitlines() == [
        "removed control-room/worktrees/route-gone/ (worktree, 0 B): route gone has no task left to run, "
        "last change 40 days ago, past retention_days 30; branch route/gone was gone already",
        "kept control-room/worktrees/task-lost/ (worktree, 16 B): task lost has no task file, last change "
        f"40 days ago, past retention_days 30, but git does not list it as a worktree of {repo}, so its "
        "files cannot be checked for uncommitted work; look at it and remove it by hand",
        "removed 1 worktree, 0 B",
    ]
    assert sorted(p.name for p in top.iterdir()) == ["mine", "task-lost"]


def test_a_repository_mid_rebase_is_not_looked_at(cr, room: Room, repo: Path) -> None:
    merged_route(cr, room)
    assert cr("task", "cancel", "t2", "--reason", "not needed").returncode == 0
    assert cr("done", "t1", "--by", "me").returncode == 0
    age(tree(room), 40)
    (repo / ".git" / "rebase-merge").mkdir()
    done = cr("cleanup")
    assert done.stdout == (
        f"worktrees: no worktree was looked at: {repo} is in the middle of a rebase; finish or abort it "
        "there (no worktree is made or touched until then)\nremoved nothing\n"
    )
    assert tree(room).is_dir() and "route/r1" in branches(repo)


def test_without_repo_worktree_folders_are_not_looked_at(cr, room: Room) -> None:
    (room.cr / "worktrees" / "route-r1").mkdir(parents=True)
    age(room.cr / "worktrees", 400)
    assert cr("cleanup").stdout == "removed nothing\n"
    assert (room.cr / "worktrees" / "route-r1").is_dir()
