"""dispatch.merge.landed: a merge that landed (the base fast-forwarded, its line written) before a
crash stopped the task's move is told from one that did not (tests/reliability/
test_crash_injection_git.py kills the merge queue there: the task merged twice, on the tree before)."""

from __future__ import annotations

from pathlib import Path

from support import git, passed_on_branch, task_json

from control_room import ledger
from control_room.dispatch.merge.landed import landed
from control_room.ledger import events
from control_room.room.layout import Room


def test_only_a_merged_line_since_its_pass_with_its_branch_on_the_base_says_it_landed(
    room: Room, repo: Path
) -> None:
    passed_on_branch(room, "t1", {"a.txt": "a\n"}, route="r1")
    task = task_json(room, "passed", "t1")
    tip = git(repo, "rev-parse", "route/r1")
    git(repo, "merge", "--ff-only", "-q", "route/r1")
    assert landed(room, repo, task, "main") is None  # the fast-forward alone: no line, merge it again
    ledger.append(room.ledger, events.INTEGRATE, task="t1", outcome="merged", detail="route/r1 onto main")
    assert landed(room, repo, task, "main") == tip
    assert (
        landed(room, repo, {**task, "passed_at": "2999-01-01T00:00:00Z"}, "main") is None
    )  # an older pass's
    ledger.append(room.ledger, events.INTEGRATE, task="t1", outcome="failed", detail="a later try")
    assert landed(room, repo, task, "main") is None  # its last word is not the merge


def test_a_merged_line_whose_branch_is_not_on_the_base_is_no_landing(room: Room, repo: Path) -> None:
    passed_on_branch(room, "t1", {"a.txt": "a\n"}, route="r1")
    ledger.append(room.ledger, events.INTEGRATE, task="t1", outcome="merged", detail="route/r1 onto main")
    assert landed(room, repo, task_json(room, "passed", "t1"), "main") is None
