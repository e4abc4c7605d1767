"""dispatch.merge.withdraw: a person cancels a task in swarm/passed/: its work set aside on
cancelled/<id>, its branch back at the base, its waiting review and arbiter tasks let go."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import entries, git, passed_on_branch, probe_task, where, written

from control_room import errors
from control_room.dispatch.merge import withdraw
from control_room.room.layout import Room


def test_a_passed_task_is_cancelled_with_its_work_set_aside(room: Room, repo: Path) -> None:
    wt = passed_on_branch(room, "t1", {"b.txt": "b\n"}, route="r1", review_tasks=["rv1"], arbiter="arb")
    written(room, "queue", probe_task("rv1", reviews="t1", route="r1"))
    written(room, "parked", probe_task("arb", arbitrates="t1", route="r1"))
    state, kept = withdraw.cancel(room, "t1", "superseded")
    assert (state, kept) == ("passed", "its work is kept on branch cancelled/t1; route/r1 is back at main")
    assert [where(room, t) for t in ("t1", "rv1", "arb")] == [["cancelled"]] * 3
    assert git(repo, "log", "--format=%s", "cancelled/t1") == "t1: objective of t1\nfirst"
    assert git(repo, "rev-parse", "route/r1") == git(repo, "rev-parse", "main")
    assert not (wt / "b.txt").exists() and git(wt, "status", "--porcelain") == ""
    assert [(e.task, e.detail) for e in entries(room, "cancel")] == [
        ("t1", f"superseded; {kept}"),
        ("rv1", "cancelled with t1, which it served"),
        ("arb", "cancelled with t1, which it served"),
    ]
    reason = (room.state_dir("cancelled") / "t1.reason").read_text()
    assert reason.endswith(f"from swarm/passed/.\n\nsuperseded\n\nOn cancel, {kept}.\n")


def test_a_second_set_aside_of_one_id_takes_the_next_name(room: Room, repo: Path) -> None:
    git(repo, "branch", "cancelled/t1")
    passed_on_branch(room, "t1", {"b.txt": "b\n"}, route="r1")
    assert (
        withdraw.cancel(room, "t1", "")[1]
        == "its work is kept on branch cancelled/t1-2; route/r1 is back at main"
    )


def test_without_a_repo_or_outside_passed_it_is_a_plain_cancel(room: Room) -> None:
    written(room, "passed", probe_task("t1"))
    written(room, "queue", probe_task("q"))
    assert withdraw.cancel(room, "t1", "") == ("passed", "")
    assert withdraw.cancel(room, "q", "") == ("queue", "")
    written(room, "running", probe_task("busy"))
    with pytest.raises(errors.ConflictError) as err:
        withdraw.cancel(room, "busy", "")
    assert str(err.value) == (
        "cannot cancel busy: it is in swarm/running/, not in swarm/queue/ or swarm/parked/ or "
        "swarm/rejected/ or swarm/passed/ (stop it first: `control-room stop`)"
    )
