"""A worktree per route, through the installed command, on a real git repository: the agent and
its validator run in `route/<route>`'s worktree, which later tasks of the route reuse; a
repository mid-rebase stops the cycle before the claim; a vanished worktree is made again."""

from __future__ import annotations

import subprocess
from pathlib import Path

from support import PY, events, git, queue, set_gate, where

from control_room import errors
from control_room.room.layout import Room

MAKE = [PY, "-c", "open('made.txt', 'a').write('x')"]  # the agent: writes in its cwd


def exists(name: str) -> list[str]:
    return [PY, "-c", f"import os, sys; sys.exit(0 if os.path.exists({name!r}) else 1)"]


def test_a_route_runs_in_its_own_worktree_and_later_tasks_reuse_it(cr, room: Room, repo: Path) -> None:
    assert cr("route", "add", "r1", "--title", "the first route").returncode == 0
    queue(room, "t1", route="r1", command=MAKE, validator=exists("made.txt"), priority=1)
    queue(room, "t2", route="r1", command=MAKE, validator=exists("made.txt"))
    done = cr("cycle")
    assert done.returncode == errors.PASSED, done.stdout + done.stderr
    tree = room.cr / "worktrees" / "route-r1"
    assert (tree / "made.txt").read_text() == "x" and (tree / "README").exists()
    assert not (repo / "made.txt").exists() and not (room.root / "made.txt").exists()
    assert git(tree, "rev-parse", "--abbrev-ref", "HEAD") == "route/r1"
    assert (
        git(tree, "log", "-1", "--format=%an|%s") == "control-room (e2e)|t1: objective of t1"
    )  # the dispatcher commits, as this host (the `cr` fixture's writer)
    assert git(repo, "status", "--porcelain") == ""  # the main tree is untouched
    assert "worktree-add" in events(room.ledger) and where(room, "t1") == ["passed"]
    assert cr("integrate", "t1").returncode == errors.OK
    assert cr("cycle").returncode == errors.PASSED
    assert (tree / "made.txt").read_text() == "xx"  # the same worktree: the route's work goes on
    assert events(room.ledger).count("worktree-add") == 1
    assert (room.cr / "worktrees" / ".gitignore").read_text().endswith("*\n")


def test_a_task_without_a_route_gets_a_branch_of_its_own(cr, room: Room, repo: Path) -> None:
    queue(room, "solo", route=None, command=MAKE)
    assert cr("cycle").returncode == errors.PASSED
    tree = room.cr / "worktrees" / "task-solo"
    assert git(tree, "rev-parse", "--abbrev-ref", "HEAD") == "task/solo" and (tree / "made.txt").exists()


def test_a_repository_mid_rebase_stops_the_cycle_before_the_claim(cr, room: Room, repo: Path) -> None:
    queue(room, "t1", route=None, command=MAKE)
    (repo / ".git" / "rebase-merge").mkdir()
    before = room.ledger.read_bytes()
    done = cr("cycle")
    assert (done.returncode, done.stderr) == (errors.ROOM_INVALID, (
        f"Error: room invalid: {repo} is in the middle of a rebase; finish or abort it there (no worktree is "
        "made or touched until then); nothing was claimed\n"))  # fmt: skip
    assert where(room, "t1") == ["queue"] and room.ledger.read_bytes() == before
    assert not (room.cr / "worktrees").exists()


def test_a_worktree_whose_folder_vanished_is_made_again(cr, room: Room, repo: Path) -> None:
    assert cr("route", "add", "r1", "--title", "the first route").returncode == 0
    queue(room, "t1", route="r1", command=MAKE, priority=1)
    queue(room, "t2", route="r1", command=MAKE, validator=exists("made.txt"))
    assert cr("cycle").returncode == errors.PASSED
    assert cr("integrate").returncode == errors.OK  # t1's work is on the base; t2 keeps the worktree
    tree = room.cr / "worktrees" / "route-r1"
    subprocess.run(["rm", "-rf", str(tree)], check=True)
    done = cr("cycle")
    assert done.returncode == errors.PASSED, done.stdout + done.stderr
    assert (tree / "made.txt").read_text() == "xx"  # the branch kept the committed work
    assert events(room.ledger).count("worktree-rebuilt") == 1


def test_a_repo_that_is_not_a_git_repository_is_the_rooms_fault(cr, room: Room, tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    set_gate(room, "repo", "../plain")
    queue(room, "t1", route=None, command=MAKE)
    done = cr("cycle")
    assert done.returncode == errors.ROOM_INVALID
    assert done.stderr.startswith(
        f"Error: room invalid: {room.control}: repo {tmp_path / 'plain'} is not a git repository ("
    )
    assert where(room, "t1") == ["queue"]


def test_a_route_runs_one_task_at_a_time_in_its_worktree(cr, room: Room, repo: Path, tmp_path: Path) -> None:
    from support import FAKES, wait_for

    set_gate(room, "max_parallel", "2")
    assert cr("route", "add", "r1", "--title", "the first route").returncode == 0
    ready = tmp_path / "ready"
    queue(room, "slow", route="r1", priority=2,
          command=[PY, str(FAKES / "sleeper.py"), "--pidfile", str(tmp_path / "pid"),
                   "--ready", str(ready)])  # fmt: skip
    queue(room, "next", route="r1", command=MAKE)
    first = subprocess.Popen([cr.exe, "cycle"], env=cr.env, cwd=room.root, stdout=subprocess.PIPE, text=True)
    try:
        wait_for(ready)
        second = cr("cycle")
        assert (second.returncode, second.stdout) == (errors.OK, (
            "nothing to do: 1 queued task not ready: next waits for running task slow: route r1 has one "
            "worktree\n"))  # fmt: skip
    finally:
        room.stop.write_text("")
        first.communicate(timeout=60)
    assert where(room, "next") == ["queue"]
