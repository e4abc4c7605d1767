"""control_room.cli.integrate: `control-room integrate [ID]`, in-process: its lines, refusals, exit codes."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from support import error, git, make_repo, no_room_error, ok, passed_on_branch, set_gate, where

from control_room import errors
from control_room.room.layout import Room

Run = Callable[..., Result]
TRUE = ["true"]  # a validator that passes without starting a Python


@pytest.fixture
def named(inside: Room) -> Room:
    """CONTROL.md names a repo beside the room (made only by the tests that reach git)."""
    set_gate(inside, "repo", "../repo")
    return inside


@pytest.fixture
def repo(named: Room, tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


def in_passed(room: Room, tid: str, **fields: object) -> None:
    """A task file in swarm/passed/, no worktree (for what is refused before any git)."""
    t = {"id": tid, "objective": "o", "falsifier": "f", "validator": TRUE, "max_cost_usd": 0.1,
         "wall_clock_s": 60, "kill_condition": "k", "passed_at": "2026-01-01T00:00:00Z",
         **fields}  # fmt: skip
    (room.state_dir("passed") / f"{tid}.json").write_text(json.dumps(t))


def test_outside_a_room_is_exit_3(run: Run, tmp_path: Path) -> None:
    result = run("integrate")
    assert (result.exit_code, result.stdout, result.stderr) == (errors.NO_ROOM, "", no_room_error(tmp_path))


def test_without_a_repo_is_exit_4(run: Run, inside: Room) -> None:
    error(
        run("integrate"),
        errors.INVALID,
        f"{inside.control}: no repo is set, so there is nothing to integrate into; set repo (and "
        "base_branch) in CONTROL.md ([integration.md])",
    )


def test_nothing_waiting_is_said_and_exit_0(run: Run, named: Room) -> None:
    ok(run("integrate"), "nothing to integrate: swarm/passed/ is empty\n")


def test_an_unknown_task_is_exit_7_and_one_elsewhere_exit_5(run: Run, named: Room) -> None:
    error(run("integrate", "nope"), errors.NOT_FOUND, f"no task nope in {named.swarm}")
    in_passed(named, "q")
    (named.state_dir("passed") / "q.json").rename(named.state_dir("queue") / "q.json")
    error(
        run("integrate", "q"),
        errors.CONFLICT,
        "cannot integrate q: it is in swarm/queue/, not in swarm/passed/",
    )
    assert where(named, "q") == ["queue"]


def test_a_held_merge_gate_is_exit_5_by_id_and_a_line_among_all(run: Run, named: Room) -> None:
    in_passed(named, "g", gate=["merge"])
    error(
        run("integrate", "g"),
        errors.CONFLICT,
        "cannot integrate g: it waits for gate merge: `control-room approve g`",
    )
    ok(run("integrate"), "g waits for gate merge: `control-room approve g`\n")
    assert where(named, "g") == ["passed"]


def test_merged_and_held_tasks_are_exit_0_one_line_each(run: Run, named: Room, repo: Path) -> None:
    in_passed(named, "g", gate=["merge"])  # passed first, so said first
    passed_on_branch(named, "t1", {"a.txt": "a"}, route="r1", validator=TRUE)
    result = run("integrate")
    head = git(repo, "rev-parse", "HEAD")
    ok(
        result,
        "g waits for gate merge: `control-room approve g`\n"
        "merged: t1 (route/r1 onto main: 1 file; validator passed after the rebase; main fast-forwarded to "
        f"{head[:12]}); in swarm/to-test/\n",
    )
    assert where(named, "t1") == ["to-test"] and (repo / "a.txt").read_text() == "a"


def test_a_task_not_merged_is_exit_11(run: Run, named: Room, repo: Path) -> None:
    passed_on_branch(named, "t1", {"a.txt": "a"}, route="r1", owns=["src"], validator=TRUE)
    result = run("integrate", "t1")
    assert (result.exit_code, result.stderr) == (errors.FAILED, "")
    assert result.stdout == (
        "not merged: t1 (its diff touches paths outside its owns: a.txt); back in the queue for round 2 "
        "of 2\n"
    )
    assert where(named, "t1") == ["queue"]


def test_a_main_tree_with_uncommitted_changes_is_exit_15(run: Run, named: Room, repo: Path) -> None:
    in_passed(named, "t1", route="r1")  # refused before its worktree is looked at
    (repo / "README").write_text("a person's edit\n")
    before = named.ledger.read_bytes()
    error(
        run("integrate"),
        errors.ROOM_INVALID,
        f"room invalid: {repo} has uncommitted changes (README); commit or stash them first (nothing was "
        "merged)",
    )
    assert where(named, "t1") == ["passed"] and named.ledger.read_bytes() == before
    assert git(repo, "log", "--format=%s") == "first"
