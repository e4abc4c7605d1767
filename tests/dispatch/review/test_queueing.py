"""dispatch.review.queueing: which lenses, queued reviews, what a review must answer, discarded edits."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from reviewing import lens, put, rep, warned
from support import TIME, entries, git, task, task_json, unsealed

from control_room.dispatch.review import queueing, which
from control_room.dispatch.round import report
from control_room.room import results, swarm
from control_room.room.layout import Room
from control_room.room.settings import Settings


def test_a_task_needs_a_verdict_while_it_has_reviews_and_no_accept() -> None:
    assert queueing.needs_verdict(task("t1")) is False
    assert queueing.needs_verdict(task("t1", review_tasks=["r1"])) is True
    assert queueing.needs_verdict(task("t1", review_tasks=["r1"], review_verdict="reject")) is True
    assert queueing.needs_verdict(task("t1", review_tasks=["r1"], review_verdict="accept")) is False


def test_word_is_the_decisions_first_word_in_lower_case() -> None:
    assert queueing.word(rep("Accept. Nothing breaks")) == "accept"
    assert queueing.word(rep("**B**")) == "b"
    assert queueing.word(report.Report(ok=False)) == ""


def test_check_report_asks_a_review_for_accept_or_reject_with_evidence() -> None:
    rv = {"id": "r", "reviews": "t1"}
    assert queueing.check_report(rv, rep("accept")) is None
    assert queueing.check_report(rv, rep("reject", confirmed="`ls` shows no tests")) is None
    assert queueing.check_report(rv, rep("reject")) == (
        "a review that rejects must give at least one CONFIRMED evidence item; this one gives none"
    )
    assert queueing.check_report(rv, rep("maybe, " + "x" * 80)) == (
        "a review's DECISION must be accept or reject (got 'maybe, " + "x" * 53 + "')"
    )


def test_check_report_asks_an_arbiter_for_a_b_or_escalate() -> None:
    arb = {"id": "a", "arbitrates": "t1"}
    for decision in ("A", "b", "Escalate"):
        assert queueing.check_report(arb, rep(decision)) is None
    assert (
        queueing.check_report(arb, rep("accept"))
        == "an arbiter's DECISION must be A, B or escalate (got 'accept')"
    )
    assert queueing.check_report(task("t1"), rep("whatever")) is None  # the work itself: not a verdict


def test_queue_reviews_writes_one_review_task_per_lens_and_a_ledger_line(room: Room) -> None:
    lens(room, "style", adapter="codex", model="m-style")
    lens(room, "safety", "[history]")
    target = put(room, "passed", "t1", route="r1", priority=3, review_verdict="reject", reviewed_commit="old")
    chosen = which.check_lenses(room, Settings(), task("t1", review=["style", "safety"]))
    ids = queueing.queue_reviews(room, Settings(), target, chosen, "passed")
    assert ids == ["review-style-t1", "review-safety-t1"]
    style = unsealed(task_json(room, "queue", "review-style-t1"))
    assert re.fullmatch(TIME, style.pop("created"))
    assert style == {
        "id": "review-style-t1",
        "objective": "Review task t1 through the style lens; answer accept or reject.",
        "falsifier": "the change breaks what this lens checks, and this review accepts it",
        "validator": "python bench.py --check",  # the reviewed task's, run again after the reviewer
        "max_cost_usd": 0.1,
        "wall_clock_s": 60.0,
        "kill_condition": "the review cannot be done with what the lens shows",
        "role": "reviewer",
        "route": "r1",
        "adapter": "codex",
        "model": "m-style",
        "priority": 53,
        "reviews": "t1",
        "lens": "style",
    }
    safety = task_json(room, "queue", "review-safety-t1")
    assert ("adapter" in safety, "model" in safety, safety["lens"]) == (False, False, "safety")
    now = unsealed(task_json(room, "passed", "t1"))
    drop = (
        "review_verdict",
        "reviewed_commit",
        "seal",
    )  # a verdict of earlier reviews is no verdict of these
    assert now == {**{k: v for k, v in target.items() if k not in drop}, "review_tasks": ids}
    [line] = entries(room, "review-queued")
    assert (line.task, line.route, line.detail) == (
        "t1",
        "r1",
        "style: review-style-t1, safety: review-safety-t1",
    )
    assert entries(room, "warning") == []


def ran(room: Room, tid: str, **meta: object) -> None:
    """``tid``'s last run ran on ``meta``'s adapter and model (its meta.json)."""
    folder = results.folder(room, tid)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "meta.json").write_text(json.dumps(meta))


def test_a_lens_on_the_adapter_and_model_of_the_work_it_reviews_is_warned_of(room: Room) -> None:
    lens(room, "style", model="m-work")  # no adapter: the reviewer role's, then CONTROL.md's (probe)
    target = put(room, "passed", "t1")
    ran(room, "t1", adapter="probe", model="m-work")
    put(room, "done", "review-style-t1")  # an id taken: the next free one
    chosen = which.check_lenses(room, Settings(), task("t1", review=["style"]))
    said: list[str] = []
    assert queueing.queue_reviews(room, Settings(), target, chosen, "passed", said) == ["review-style-t1-2"]
    [line] = entries(room, "warning")
    assert (line.task, line.detail) == (
        "review-style-t1-2",
        "review-style-t1-2 runs on probe, model m-work, as the work of t1 did: not an independent review; "
        "give the lens another adapter or model (agents/lenses/style.md)",
    )
    assert said == [line.detail]


def test_no_model_on_either_side_is_the_same_default_model(room: Room) -> None:
    lens(room, "style")
    target = put(room, "passed", "t1")
    ran(room, "t1", adapter="probe", model=None)  # no model named: the adapter's own default
    chosen = which.check_lenses(room, Settings(), task("t1", review=["style"]))
    queueing.queue_reviews(room, Settings(), target, chosen, "passed")
    assert [e.detail for e in entries(room, "warning")] == [
        "review-style-t1 runs on probe, model default, as the work of t1 did: not an independent review; "
        "give the lens another adapter or model (agents/lenses/style.md)"
    ]


@pytest.mark.parametrize(("adapter", "model"), [("codex", "m-work"), ("probe", "m-other"), ("codex", "")])
def test_another_adapter_or_another_model_is_independent(room: Room, adapter: str, model: str) -> None:
    lens(room, "style", adapter=adapter, model=model)
    target = put(room, "passed", "t1")
    ran(room, "t1", adapter="probe", model="m-work" if model else None)
    chosen = which.check_lenses(room, Settings(), task("t1", review=["style"]))
    queueing.queue_reviews(room, Settings(), target, chosen, "passed")
    assert entries(room, "warning") == []


def test_reviews_of_a_failed_round_become_the_tasks_deps(room: Room) -> None:
    lens(room, "style")
    target = put(room, "queue", "t1", deps=["t0"], rounds=1, last_failure="validator exited 1")
    chosen = which.check_lenses(room, Settings(), task("t1", review=["style"]))
    assert queueing.queue_reviews(room, Settings(), target, chosen, "queue") == ["review-style-t1"]
    assert task_json(room, "queue", "review-style-t1")["objective"] == (
        "Review the failed round of task t1 through the style lens: reject, with findings, what its next "
        "round must not repeat; accept if there is nothing to add."
    )
    now = task_json(room, "queue", "t1")
    assert (now["deps"], now["review_tasks"], "reviewed_state" in now) == (
        ["t0", "review-style-t1"], ["review-style-t1"], False)  # fmt: skip  # no repo: nothing to save


def test_reviews_record_the_commit_or_the_failed_rounds_work_they_review(
    room: Room, repo_room: tuple[Settings, Path]
) -> None:
    s, tree = repo_room
    lens(room, "style")
    chosen = which.check_lenses(room, s, task("t1", review=["style"]))
    queueing.queue_reviews(room, s, put(room, "passed", "t1", route="r1"), chosen, "passed")
    head = git(tree, "rev-parse", "HEAD")
    assert task_json(room, "passed", "t1")["reviewed_commit"] == head
    swarm.move(room, "t1", "passed", "queue")
    (tree / "c.txt").write_text("c\n")  # a failed round leaves its work uncommitted
    failed = put(room, "queue", "t1", route="r1", rounds=1)
    queueing.queue_reviews(room, s, failed, chosen, "queue")
    saved = task_json(room, "queue", "t1")["reviewed_state"]
    assert git(tree, "diff", "--name-only", "HEAD", saved) == "c.txt"  # a stash commit of the work
    assert git(tree, "status", "--porcelain") == "?? c.txt"  # the worktree as it was, index too


def test_a_reviewers_changes_are_discarded_with_a_warning(
    room: Room, repo_room: tuple[Settings, Path]
) -> None:
    s, tree = repo_room
    head = git(tree, "rev-parse", "HEAD")
    put(room, "passed", "t1", route="r1", review_tasks=["review-style-t1"], reviewed_commit=head)
    rv = put(room, "running", "review-style-t1", reviews="t1", lens="style", route="r1")
    queueing.discard_edits(room, s, rv, tree)  # nothing changed: nothing to do
    assert warned(room) == []
    (tree / "b.txt").write_text("a reviewer's edit\n")
    (tree / "new.txt").write_text("new\n")
    queueing.discard_edits(room, s, rv, tree)
    assert (tree / "b.txt").read_text() == "b\n" and not (tree / "new.txt").exists()
    assert git(tree, "status", "--porcelain") == ""
    (tree / "b.txt").write_text("committed by a reviewer\n")
    git(tree, "commit", "-q", "-am", "a reviewer's commit")
    queueing.discard_edits(room, s, rv, tree)
    assert git(tree, "rev-parse", "HEAD") == head
    assert warned(room) == [
        ("review-style-t1", "the review changed the worktree (b.txt, new.txt); discarded: reviewers never "
                            "edit"),
        ("review-style-t1", f"the review changed the worktree (commits on top of {head[:12]}); discarded: "
                            "reviewers never edit"),
    ]  # fmt: skip
    queueing.discard_edits(room, Settings(), rv, tree)  # no repo: not looked at
    queueing.discard_edits(room, s, task("t9"), tree)  # not a review
    assert len(warned(room)) == 2


def test_an_arbiters_changes_to_a_failed_rounds_work_are_undone_and_the_work_put_back(
    room: Room, repo_room: tuple[Settings, Path]
) -> None:
    s, tree = repo_room
    lens(room, "style")
    (tree / "c.txt").write_text("c\n")
    failed = put(room, "queue", "t1", route="r1", rounds=1)
    chosen = which.check_lenses(room, s, task("t1", review=["style"]))
    queueing.queue_reviews(room, s, failed, chosen, "queue")
    (tree / "c.txt").write_text("changed by the arbiter\n")
    arbiter = put(room, "running", "arbitrate-t1", arbitrates="t1", lens="arbiter", route="r1")
    queueing.discard_edits(room, s, arbiter, tree)
    assert (tree / "c.txt").read_text() == "c\n" and git(tree, "status", "--porcelain") == "?? c.txt"
    assert warned(room) == [
        ("arbitrate-t1", "the arbiter changed the worktree (c.txt); discarded: reviewers never edit")
    ]
