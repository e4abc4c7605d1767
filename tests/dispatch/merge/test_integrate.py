"""dispatch.merge.integrate: the merge queue on a real repository, its refusals, why a task waits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support import entries, git, make_repo, passed_on_branch, set_gate, snapshot, task_json, where, written

from control_room import errors
from control_room.dispatch.merge import integrate
from control_room.dispatch.round.outcome import CycleResult
from control_room.dispatch.worktrees import place
from control_room.git import run as git_run
from control_room.knowledge import routes
from control_room.room import settings as settings_file
from control_room.room.layout import Room
from control_room.room.settings import Settings

LINES = "".join(f"line {k}\n" for k in range(1, 6))  # shared.txt on main
TRUE = ["true"]  # a validator that passes without starting a Python


@pytest.fixture
def repo(tmp_path: Path, room: Room) -> Path:
    """A repository beside the room with shared.txt on `main`, named in CONTROL.md."""
    path = make_repo(tmp_path / "repo", {"shared.txt": LINES})
    set_gate(room, "repo", "../repo")
    return path


def settings(room: Room) -> Settings:
    return settings_file.load(room)


def commit_on_main(repo: Path, name: str, text: str, message: str) -> str:
    """A person's commit on main meanwhile; its hash."""
    (repo / name).write_text(text)
    git(repo, "add", name)
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def lines_of(room: Room, event: str) -> list[tuple[str, str, str, str]]:
    """(task, route, outcome, detail) of each ledger line of ``event``."""
    return [(e.task, e.route, e.outcome, e.detail) for e in entries(room, event)]


def state(room: Room, repo: Path) -> tuple[dict[Path, bytes], str]:
    """The swarm's files, the ledger and CONTROL.md; the repository's branches and their heads."""
    files = {**snapshot(room.swarm), **{p: p.read_bytes() for p in (room.ledger, room.control)}}
    return files, git(repo, "branch", "--format=%(refname:short) %(objectname)")


def merged(head: str) -> str:
    """The detail of route/r1's merge, one file, onto main at ``head``."""
    return (
        f"route/r1 onto main: 1 file; validator passed after the rebase; main fast-forwarded to {head[:12]}"
    )


def round_failed(why: str) -> CycleResult:
    """What integrate returns for t1's first failed round."""
    return CycleResult(errors.FAILED, f"not merged: t1 ({why}); back in the queue for round 2 of 2", "t1")


# merged ---------------------------------------------------------------------------------------


def test_a_passed_task_is_rebased_checked_again_and_fast_forwarded(room: Room, repo: Path) -> None:
    # its validator passes only where main's notes.txt is: after the rebase
    check = ["test", "-e", "notes.txt"]
    passed_on_branch(room, "t1", {"src/a.py": "A = 1\n"}, route="r1", validator=check)
    commit_on_main(repo, "notes.txt", "n\n", "a person's commit on main meanwhile")
    done = integrate.integrate(room, settings(room), "t1")
    head = git(repo, "rev-parse", "HEAD")
    detail = merged(head)
    assert done == [CycleResult(errors.PASSED, f"merged: t1 ({detail}); in swarm/to-test/", "t1")]
    assert git(repo, "log", "--format=%s") == (
        "t1: objective of t1\na person's commit on main meanwhile\nfirst"
    )  # rebased onto what main gained, then fast-forwarded: no merge commit
    assert git(repo, "rev-list", "--merges", "main") == "" and git(repo, "status", "--porcelain") == ""
    assert (repo / "src" / "a.py").read_text() == "A = 1\n"
    t = task_json(room, "to-test", "t1")
    assert where(room, "t1") == ["to-test"] and t["merged_commit"] == head
    assert t["merged_at"] >= t["passed_at"]
    assert lines_of(room, "integrate") == [("t1", "r1", "merged", detail)]
    # route r1 has nothing left to run: its worktree and its merged branch go, with one line
    assert lines_of(room, "worktree-remove") == [(
        "t1", "r1", "ok",
        "control-room/worktrees/route-r1 removed: route r1 has nothing left to run; "
        "branch route/r1 deleted (merged into main)",
    )]  # fmt: skip
    assert not (room.cr / "worktrees" / "route-r1").exists()
    assert git(repo, "branch", "--format=%(refname:short)") == "main"


def served_t1(room: Room) -> None:
    """t1 in the queue, waiting for its resolver resolve-t1, which passed with shared.txt grown to 6 lines."""
    (room.state_dir("queue") / "t1.json").write_text(json.dumps({
        "id": "t1", "objective": "o", "falsifier": "f", "validator": TRUE, "max_cost_usd": 0.1,
        "wall_clock_s": 60, "kill_condition": "k", "adapter": "probe", "route": "r1", "deps": ["resolve-t1"],
    }))  # fmt: skip
    passed_on_branch(room, "resolve-t1", {"shared.txt": LINES + "line 6\n"}, route="r1", for_task="t1",
                     validator=TRUE)  # fmt: skip


def test_a_helper_merged_takes_the_task_it_served_along(room: Room, repo: Path) -> None:
    """A resolver's change (``for_task``) is the served task's change: both go to to-test."""
    set_gate(room, "megafile_lines", "6")  # checked, and 6 lines is not past it
    served_t1(room)
    [done] = integrate.integrate(room, settings(room))
    head = git(repo, "rev-parse", "HEAD")
    detail = merged(head)
    assert done == CycleResult(
        errors.PASSED, f"merged: resolve-t1 ({detail}); t1 merged with it; in swarm/to-test/", "resolve-t1"
    )
    assert where(room, "resolve-t1") == ["to-test"] and where(room, "t1") == ["to-test"]
    assert task_json(room, "to-test", "t1")["merged_commit"] == head
    assert lines_of(room, "integrate") == [
        ("resolve-t1", "r1", "merged", detail),
        ("t1", "r1", "merged", f"merged with resolve-t1, which served it: {detail}"),
    ]
    assert entries(room, "megafile") == []


def test_a_helper_past_megafile_lines_is_refused_and_queues_no_helper(room: Room, repo: Path) -> None:
    """The megafile check applies to every merge: a helper that grows a file past the limit fails
    its own round (a decompose that did nothing carries the served task's megafile)."""
    set_gate(room, "megafile_lines", "5")
    served_t1(room)
    [done] = integrate.integrate(room, settings(room))
    why = "it grows shared.txt (5 -> 6 lines) past megafile_lines 5"
    assert done == CycleResult(
        errors.FAILED, f"not merged: resolve-t1 ({why}); back in the queue for round 2 of 2", "resolve-t1"
    )
    assert where(room, "resolve-t1") == ["queue"] and where(room, "t1") == ["queue"]
    assert git(repo, "log", "--format=%s") == "first"
    assert git(repo, "show", "main:shared.txt") + "\n" == LINES
    assert lines_of(room, "megafile") == [
        ("resolve-t1", "r1", "refused", "shared.txt: 5 -> 6 lines, over megafile_lines 5")
    ]
    assert lines_of(room, "integrate") == [("resolve-t1", "r1", "refused", why)]
    assert sorted(p.name for p in room.state_dir("queue").glob("*.json")) == ["resolve-t1.json", "t1.json"]


# refused: nothing merged, nothing moved ---------------------------------------------------------


def refused(room: Room, says: str) -> None:
    """integrate raises RoomInvalidError saying ``says``; exit 15."""
    with pytest.raises(errors.RoomInvalidError) as refusal:
        integrate.integrate(room, settings(room), "t1")
    assert (str(refusal.value), refusal.value.exit_code) == (f"room invalid: {says}", errors.ROOM_INVALID)


def test_a_main_tree_unfit_for_a_fast_forward_is_refused_and_nothing_moves(room: Room, repo: Path) -> None:
    passed_on_branch(room, "t1", {"a.txt": "a"}, route="r1", validator=TRUE)
    (repo / "notes.txt").write_text("a person's unfinished work")
    before = state(room, repo)
    refused(
        room, f"{repo} has uncommitted changes (notes.txt); commit or stash them first (nothing was merged)"
    )
    assert state(room, repo) == before and where(room, "t1") == ["passed"]
    (repo / "notes.txt").unlink()
    git(repo, "switch", "-q", "-c", "other")
    before = state(room, repo)
    switch = f"`git -C {repo} switch main` first (nothing was merged)"
    refused(room, f"{repo} has other checked out, not the base branch main; {switch}")
    assert state(room, repo) == before and where(room, "t1") == ["passed"]


def test_the_rooms_own_files_inside_the_repository_are_not_a_dirty_tree(tmp_path: Path) -> None:
    from control_room.room import scaffold

    repo = make_repo(tmp_path / "project", {"code.py": "x = 1\n"})
    scaffold.init(repo)  # the room lives in the repository, its files uncommitted
    room = Room(repo)
    set_gate(room, "repo", ".")
    passed_on_branch(room, "t1", {"code.py": "x = 2\n"}, owns=["src"], validator=TRUE)
    # past the main tree's check (no RoomInvalidError), on to the task's own refusal
    [done] = integrate.integrate(room, settings(room), "t1")
    assert done == round_failed("its diff touches paths outside its owns: code.py")


def test_a_diff_outside_owns_is_a_failed_round_naming_the_paths(room: Room, repo: Path) -> None:
    change = {"src/a.py": "a", "setup.cfg": "b"}
    passed_on_branch(room, "t1", change, route="r1", owns=["src"], validator=TRUE)
    head = git(repo, "rev-parse", "main")
    [done] = integrate.integrate(room, settings(room), "t1")
    why = "its diff touches paths outside its owns: setup.cfg"
    assert done == round_failed(why)
    t = task_json(room, "queue", "t1")
    assert (t["rounds"], t["last_failure"]) == (1, f"integration: {why}")
    assert lines_of(room, "integrate") == [("t1", "r1", "refused", why)]
    assert git(repo, "rev-parse", "main") == head
    assert (room.cr / "worktrees" / "route-r1").is_dir()  # the route has its task to run again
    row = routes.find(room, "r1")
    assert row is not None and (row["attempts"], row["last_result"].split()[:2]) == ("1", ["fail", "t1"])
    assert routes.recount(room) == []  # counted as the ledger says: one failed run of r1


def test_uncommitted_changes_in_its_worktree_make_it_unfit(room: Room, repo: Path) -> None:
    wt = passed_on_branch(room, "t1", {"a.txt": "a"}, route="r1", validator=TRUE)
    (wt / "left.txt").write_text("after the dispatcher's commit")
    [done] = integrate.integrate(room, settings(room), "t1")
    why = "uncommitted changes in its worktree: left.txt"
    assert done == round_failed(why)
    assert lines_of(room, "integrate") == [("t1", "r1", "unfit", why)]
    assert git(repo, "log", "--format=%s", "main") == "first"


def conflicting(room: Room, repo: Path, **fields: Any) -> tuple[Path, str]:
    """t1 changed line 3 of shared.txt on route/r1; main changed the same line meanwhile.
    The worktree and the branch's head."""
    wt = passed_on_branch(room, "t1", {"shared.txt": LINES.replace("line 3", "three")}, route="r1",
                          validator=TRUE, **fields)  # fmt: skip
    commit_on_main(repo, "shared.txt", LINES.replace("line 3", "drei"), "main's own line 3")
    return wt, git(repo, "rev-parse", "route/r1")


def test_a_conflicting_rebase_is_undone_and_fails_the_round(room: Room, repo: Path) -> None:
    wt, branch_head = conflicting(room, repo)
    main_head = git(repo, "rev-parse", "main")
    [done] = integrate.integrate(room, settings(room), "t1")
    why = (
        "rebasing route/r1 onto main conflicted in shared.txt; the rebase was undone. Rebase route/r1 onto "
        "main in the worktree and resolve them"
    )
    assert done == round_failed(why)
    assert place.half_done(wt) is None and git(wt, "status", "--porcelain") == ""
    assert git(repo, "rev-parse", "route/r1") == branch_head  # the task's work as it was
    assert git(repo, "rev-parse", "main") == main_head
    assert lines_of(room, "integrate") == [("t1", "r1", "conflict", why)]
    assert task_json(room, "queue", "t1")["rounds"] == 1


def test_a_conflict_with_a_resolver_queues_it_and_uses_no_round(room: Room, repo: Path) -> None:
    set_gate(room, "conflict_resolver", "engineer")
    wt, branch_head = conflicting(room, repo, priority=3)
    [done] = integrate.integrate(room, settings(room), "t1")
    why = "rebasing route/r1 onto main conflicted in shared.txt"
    assert done == CycleResult(
        errors.FAILED, f"not merged: t1 ({why}); queued resolve-t1, and t1 waits for it", "t1"
    )
    t = task_json(room, "queue", "t1")
    assert (t["deps"], "rounds" in t) == (["resolve-t1"], False)
    r = task_json(room, "queue", "resolve-t1")
    assert (r["role"], r["route"], r["for_task"], r["validator"], r["priority"]) == (
        "engineer", "r1", "t1", TRUE, 103,
    )  # fmt: skip
    assert r["objective"].startswith(
        "Rebase branch route/r1 onto main in this worktree (`git rebase main`) and resolve the conflicts in "
        "shared.txt, keeping what both sides meant."
    )
    assert lines_of(room, "integrate") == [("t1", "r1", "conflict", f"waits for resolve-t1: {why}")]
    assert routes.find(room, "r1") is None  # waiting for a helper is no failed run
    assert place.half_done(wt) is None and git(repo, "rev-parse", "route/r1") == branch_head


def test_a_worktree_left_mid_rebase_is_unfit_and_the_rebase_is_aborted(room: Room, repo: Path) -> None:
    wt, branch_head = conflicting(room, repo)
    assert git_run(wt, "rebase", "main")[0] != 0  # a resolver that stopped at the conflict
    assert place.half_done(wt) == "a rebase"
    [done] = integrate.integrate(room, settings(room), "t1")
    why = f"its worktree {wt} was left in the middle of a rebase"
    assert done == round_failed(why)
    assert place.half_done(wt) is None and git(wt, "rev-parse", "HEAD") == branch_head
    assert git(wt, "rev-parse", "--abbrev-ref", "HEAD") == "route/r1"  # aborted, not made again
    assert lines_of(room, "integrate") == [("t1", "r1", "unfit", why)]
    assert entries(room, "worktree-rebuilt") == []


def test_a_megafile_waits_for_one_decompose_task(room: Room, repo: Path) -> None:
    set_gate(room, "megafile_lines", "6")
    passed_on_branch(room, "t1", {"shared.txt": LINES + "line 6\nline 7\n"}, route="r1", validator=TRUE)
    [done] = integrate.integrate(room, settings(room), "t1")
    why = "it grows shared.txt (5 -> 7 lines) past megafile_lines 6"
    assert done == CycleResult(
        errors.FAILED, f"not merged: t1 ({why}); queued decompose-shared.txt, and t1 waits for it", "t1"
    )
    big = "shared.txt: 5 -> 7 lines, over megafile_lines 6"
    assert lines_of(room, "megafile") == [("t1", "r1", "refused", big)]
    assert lines_of(room, "integrate") == [("t1", "r1", "refused", f"waits for decompose-shared.txt: {why}")]
    d = task_json(room, "queue", "decompose-shared.txt")
    assert (d["role"], d["owns"], d["route"], d["for_task"]) == ("engineer", ["shared.txt"], "r1", "t1")
    assert d["objective"] == (
        "Split shared.txt (7 lines, over the room's megafile_lines 6) into smaller files beside it, "
        "each under 6 lines, without changing behaviour."
    )
    assert task_json(room, "queue", "t1")["deps"] == ["decompose-shared.txt"]
    assert git(repo, "log", "--format=%s", "main") == "first"


def test_a_validator_that_fails_after_the_rebase_fails_the_round(room: Room, repo: Path) -> None:
    passed_on_branch(room, "t1", {"a.txt": "a"}, route="r1", validator=["test", "!", "-e", "base.txt"])
    commit_on_main(repo, "base.txt", "b\n", "another route's work")  # breaks t1's check
    head = git(repo, "rev-parse", "main")
    [done] = integrate.integrate(room, settings(room), "t1")
    why = "after the rebase onto main, validator exited 1"
    assert done == round_failed(why)
    assert lines_of(room, "integrate") == [("t1", "r1", "failed", why)]
    assert task_json(room, "queue", "t1")["last_failure"] == f"integration: {why}"
    assert git(repo, "rev-parse", "main") == head
    kept = room.swarm / "results" / "t1"  # its output is kept, even with no results folder before
    assert [(kept / f"post-rebase.{s}.txt").read_text() for s in ("stdout", "stderr")] == ["", ""]


# what the queue refuses before any git ----------------------------------------------------------


def in_passed(room: Room, tid: str, **fields: Any) -> dict[str, Any]:
    """A task file in swarm/passed/ (no worktree: these stop before any git)."""
    t = {"id": tid, "objective": f"objective of {tid}", "falsifier": "f", "validator": TRUE,
         "max_cost_usd": 0.1, "wall_clock_s": 60, "kill_condition": "k", "passed_at": "2026-01-01T00:00:00Z",
         **fields}  # fmt: skip
    (room.state_dir("passed") / f"{tid}.json").write_text(json.dumps(t))
    return t


@pytest.fixture
def named(room: Room) -> Room:
    """CONTROL.md names a repo (that these tests never reach)."""
    set_gate(room, "repo", "../repo")
    return room


def test_without_a_repo_there_is_nothing_to_integrate_into(room: Room) -> None:
    in_passed(room, "t1")
    with pytest.raises(errors.InvalidError) as refused:
        integrate.integrate(room, settings(room))
    assert str(refused.value) == (
        f"{room.control}: no repo is set, so there is nothing to integrate into; set repo (and base_branch) "
        "in CONTROL.md ([integration.md])"
    )


def test_a_task_not_in_passed_is_a_conflict_and_an_unknown_one_not_found(named: Room) -> None:
    (named.state_dir("queue") / "q.json").write_text(json.dumps({**in_passed(named, "x"), "id": "q"}))
    with pytest.raises(errors.ConflictError) as wrong:
        integrate.integrate(named, settings(named), "q")
    assert str(wrong.value) == "cannot integrate q: it is in swarm/queue/, not in swarm/passed/"
    with pytest.raises(errors.NotFoundError) as unknown:
        integrate.integrate(named, settings(named), "nope")
    assert str(unknown.value) == f"no task nope in {named.swarm}"


def test_a_broken_task_file_is_refused(named: Room) -> None:
    in_passed(named, "t1", falsifier="")
    with pytest.raises(errors.InvalidError) as refused:
        integrate.integrate(named, settings(named), "t1")
    path = named.state_dir("passed") / "t1.json"
    assert str(refused.value).startswith(f"cannot integrate t1: {path} is not a valid task: ")
    assert where(named, "t1") == ["passed"]


def test_a_merge_gate_holds_the_task_until_approved(named: Room) -> None:
    in_passed(named, "g", gate=["merge"])
    before = snapshot(named.swarm), named.ledger.read_bytes()
    with pytest.raises(errors.ConflictError) as held:
        integrate.integrate(named, settings(named), "g")
    assert str(held.value) == "cannot integrate g: it waits for gate merge: `control-room approve g`"
    assert integrate.integrate(named, settings(named)) == [
        CycleResult(errors.OK, "g waits for gate merge: `control-room approve g`", "g")
    ]
    assert (snapshot(named.swarm), named.ledger.read_bytes()) == before


def test_a_task_waiting_for_its_reviews_is_held_fail_closed(named: Room) -> None:
    in_passed(named, "t1", review_tasks=["review-tests-t1"])
    with pytest.raises(errors.ConflictError) as held:
        integrate.integrate(named, settings(named), "t1")
    assert str(held.value) == "cannot integrate t1: it waits for its reviews (review-tests-t1)"
    assert integrate.integrate(named, settings(named)) == [
        CycleResult(errors.OK, "t1 waits for its reviews: review-tests-t1", "t1")
    ]
    assert where(named, "t1") == ["passed"]


def test_every_passed_task_is_taken_oldest_pass_first(named: Room) -> None:
    in_passed(named, "b", passed_at="2026-01-02T00:00:00Z", gate=["merge"])
    in_passed(named, "c", passed_at="2026-01-01T00:00:00Z", gate=["merge"])
    in_passed(named, "a", passed_at="2026-01-02T00:00:00Z", gate=["merge"])
    assert integrate.queue_order(named) == ["c", "a", "b"]
    assert [r.task_id for r in integrate.integrate(named, settings(named))] == ["c", "a", "b"]


# why a task waits, and tidying -------------------------------------------------------------------


def test_why_waiting_names_the_merge_queue_the_gate_the_reviews_or_the_arbiter(named: Room) -> None:
    s = settings(named)
    assert integrate.why_waiting(named, s, in_passed(named, "t1")) == (
        "waits for the merge queue: `control-room integrate t1`"
    )
    assert integrate.why_waiting(named, s, in_passed(named, "g", gate=["merge", "gpu"])) == (
        "waits for gate merge: `control-room approve g`"
    )
    reviewed = in_passed(named, "r", review_tasks=["rv1", "rv2"])
    (named.state_dir("done") / "rv1.json").write_text(json.dumps({**in_passed(named, "x"), "id": "rv1"}))
    assert integrate.why_waiting(named, s, reviewed) == "waits for its reviews: rv1 (done), rv2 (gone)"
    (named.state_dir("queue") / "arbitrate-r-2.json").write_text(
        json.dumps({**reviewed, "id": "arbitrate-r-2"})
    )
    judged = {**reviewed, "arbiter": "arbitrate-r-2"}  # the id the review module gave it (a second one)
    assert integrate.why_waiting(named, s, judged) == "waits for its arbiter arbitrate-r-2 (queue)"
    assert integrate.why_waiting(named, s, {**reviewed, "review_verdict": "accept"}) == (
        "waits for the merge queue: `control-room integrate r`"
    )


def test_waits_for_gate_only_while_a_merge_gate_is_not_approved(named: Room) -> None:
    from control_room.dispatch.person import decisions

    gated = in_passed(named, "g", gate=["merge"])
    assert integrate.waits_for_gate(settings(named), gated) is True
    assert integrate.waits_for_gate(settings(named), in_passed(named, "p", gate=["gpu"])) is False
    assert decisions.approve(named, "g", ["merge"], "alice") == ["merge"]
    assert integrate.waits_for_gate(settings(named), gated) is False


def test_tidy_keeps_a_routes_worktree_while_a_task_of_it_is_pending(room: Room, repo: Path) -> None:
    wt = passed_on_branch(room, "t1", {"a.txt": "a"}, route="r1")
    git(repo, "merge", "-q", "--ff-only", "route/r1")
    t1 = task_json(room, "passed", "t1")
    written(room, "queue", {**t1, "id": "t2"})
    integrate.tidy(room, settings(room), t1)  # t1 itself does not count; t2 does
    assert wt.is_dir() and entries(room, "worktree-remove") == []
    (room.state_dir("queue") / "t2.json").unlink()
    integrate.tidy(room, settings(room), t1)
    assert not wt.exists() and git(repo, "branch", "--format=%(refname:short)") == "main"
    assert lines_of(room, "worktree-remove") == [(
        "t1", "r1", "ok",
        "control-room/worktrees/route-r1 removed: route r1 has nothing left to run; "
        "branch route/r1 deleted (merged into main)",
    )]  # fmt: skip
