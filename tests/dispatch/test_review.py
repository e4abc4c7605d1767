"""control_room.dispatch.review: lenses, queued reviews, verdicts, arbitration sides, escalation, discards."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from support import TIME, entries, git, make_repo, task, task_json, where

from control_room.dispatch import report, review, worktrees
from control_room.errors import RoomInvalidError
from control_room.knowledge import routes
from control_room.room import results, settings, swarm
from control_room.room.layout import Room
from control_room.room.settings import Settings

TIDY = {"created": "2024-01-01T00:00:00Z"}


def lens(room: Room, name: str, sees: str = "[diff]", *, adapter: str = "", model: str = "") -> None:
    (room.root / "agents" / "lenses" / f"{name}.md").write_text(
        f"---\nsees: {sees}\nadapter: {adapter}\nmodel: {model}\nmax_cost_usd: 0.1\nwall_clock_s: 60\n---\n"
        f"# Lens: {name}\n"
    )


def put(room: Room, state: str, tid: str, **fields: Any) -> dict[str, Any]:
    t = {**task(tid, **fields), **TIDY}
    swarm.task_file(room, state, tid).write_text(swarm.dumps(t))
    return t


def rep(decision: str, why: str = "because", confirmed: str = "") -> report.Report:
    item = f"- CONFIRMED: {confirmed}" if confirmed else "- INFERRED: nothing looks wrong"
    return report.validate(
        f"DECISION: {decision}\nWHY: {why}\nEVIDENCE:\n{item}\nMISSING: none\n"
        "NEXT COMMAND: control-room status\nSTOP RULE: stop when the verdict is in\n"
    )


def verdict(
    room: Room, rid: str, target: str, lens_name: str, decision: str, why: str, confirmed: str = ""
) -> None:
    """A review of ``target`` done with its verdict, and its report in its results folder."""
    put(room, "done", rid, reviews=target, lens=lens_name, verdict=decision, route="r1")
    folder = results.folder(room, rid)
    folder.mkdir(parents=True, exist_ok=True)
    item = f"- CONFIRMED: {confirmed}" if confirmed else "- INFERRED: nothing"
    (folder / "report.md").write_text(f"DECISION: {decision}\nWHY: {why}\nEVIDENCE:\n{item}\n")


def waiting(room: Room, *reviews: str, **fields: Any) -> dict[str, Any]:
    """t1 (route r1) passed and waits for these reviews."""
    return put(room, "passed", "t1", route="r1", review_tasks=list(reviews), **fields)


# Which lenses, read --------------------------------------------------------------------------


def test_lenses_for_a_task_are_its_own_else_its_routes_else_the_rooms() -> None:
    listed = Settings(review=["correctness", "security"])
    assert review.lenses_for(listed, task("t1")) == ["correctness", "security"]
    assert review.lenses_for(listed, task("t1", review=[])) == []  # its own overrides
    assert review.lenses_for(listed, task("t1", review=["claims"])) == ["claims"]
    by_route = Settings(review={"r1": ["falsifier"], "*": ["correctness"]})
    assert review.lenses_for(by_route, task("t1", route="r1")) == ["falsifier"]
    assert review.lenses_for(by_route, task("t1", route="r2")) == ["correctness"]
    assert review.lenses_for(by_route, task("t1")) == ["correctness"]
    assert review.lenses_for(Settings(review={"r1": ["falsifier"]}), task("t1", route="r2")) == []


def test_reviews_arbiters_and_helpers_are_never_reviewed() -> None:
    s = Settings(review=["correctness"])
    for served in ({"reviews": "t0"}, {"arbitrates": "t0"}, {"for_task": "t0"}):
        assert review.lenses_for(s, task("t1", review=["claims"], **served)) == []


def test_check_lenses_reads_them_and_a_missing_or_broken_one_is_the_rooms_fault(room: Room) -> None:
    s = Settings(review=["security"])
    [sec] = review.check_lenses(room, s, task("t1"))
    assert (sec.name, sec.sees, sec.max_cost_usd, sec.wall_clock_s) == ("security", ("diff",), 0.5, 600.0)
    path = room.root / "agents" / "lenses"
    with pytest.raises(RoomInvalidError) as err:
        review.check_lenses(room, s, task("t1", review=["security", "nope"]))
    assert str(err.value) == (
        f"room invalid: lens 'nope' has no file: {path / 'nope.md'} is missing (lenses here: arbiter, "
        "claims, correctness, falsifier, security)"
    )
    (path / "odd.md").write_text("---\nsees: [smell]\n---\nbody\n")
    with pytest.raises(RoomInvalidError) as err:
        review.check_lenses(room, s, task("t1", review=["odd"]))
    assert str(err.value) == (
        f"room invalid: {path / 'odd.md'}: sees must list some of diff, history, code, spec, positions "
        "(got ['smell'])"
    )


def test_a_task_needs_a_verdict_while_it_has_reviews_and_no_accept() -> None:
    assert review.needs_verdict(task("t1")) is False
    assert review.needs_verdict(task("t1", review_tasks=["r1"])) is True
    assert review.needs_verdict(task("t1", review_tasks=["r1"], review_verdict="reject")) is True
    assert review.needs_verdict(task("t1", review_tasks=["r1"], review_verdict="accept")) is False


# A report that is a verdict ------------------------------------------------------------------


def test_word_is_the_decisions_first_word_in_lower_case() -> None:
    assert review.word(rep("Accept. Nothing breaks")) == "accept"
    assert review.word(rep("**B**")) == "b"
    assert review.word(report.Report(ok=False)) == ""


def test_check_report_asks_a_review_for_accept_or_reject_with_evidence() -> None:
    rv = {"id": "r", "reviews": "t1"}
    assert review.check_report(rv, rep("accept")) is None
    assert review.check_report(rv, rep("reject", confirmed="`ls` shows no tests")) is None
    assert review.check_report(rv, rep("reject")) == (
        "a review that rejects must give at least one CONFIRMED evidence item; this one gives none"
    )
    assert review.check_report(rv, rep("maybe, " + "x" * 80)) == (
        "a review's DECISION must be accept or reject (got 'maybe, " + "x" * 53 + "')"
    )


def test_check_report_asks_an_arbiter_for_a_b_or_escalate() -> None:
    arb = {"id": "a", "arbitrates": "t1"}
    for decision in ("A", "b", "Escalate"):
        assert review.check_report(arb, rep(decision)) is None
    assert (
        review.check_report(arb, rep("accept"))
        == "an arbiter's DECISION must be A, B or escalate (got 'accept')"
    )
    assert review.check_report(task("t1"), rep("whatever")) is None  # the work itself: not a verdict


# Queueing the reviews ------------------------------------------------------------------------


def test_queue_reviews_writes_one_review_task_per_lens_and_a_ledger_line(room: Room) -> None:
    lens(room, "style", adapter="codex", model="m-style")
    lens(room, "safety", "[history]")
    target = put(room, "passed", "t1", route="r1", priority=3, review_verdict="reject", reviewed_commit="old")
    chosen = review.check_lenses(room, Settings(), task("t1", review=["style", "safety"]))
    ids = review.queue_reviews(room, Settings(), target, chosen, "passed")
    assert ids == ["review-style-t1", "review-safety-t1"]
    style = task_json(room, "queue", "review-style-t1")
    assert re.fullmatch(TIME, style.pop("created"))
    assert style == {
        "id": "review-style-t1",
        "objective": "Review task t1 through the style lens; answer accept or reject.",
        "falsifier": "the change breaks what this lens checks, and this review accepts it",
        "validator": ["true"],
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
    now = task_json(room, "passed", "t1")
    drop = ("review_verdict", "reviewed_commit")  # a verdict of earlier reviews is no verdict of these
    assert now == {**{k: v for k, v in target.items() if k not in drop}, "review_tasks": ids}
    [line] = entries(room, "review-queued")
    assert (line.task, line.route, line.detail) == (
        "t1",
        "r1",
        "style: review-style-t1, safety: review-safety-t1",
    )
    assert entries(room, "warning") == []


def test_a_lens_on_the_model_of_the_work_it_reviews_is_warned_of(room: Room) -> None:
    lens(room, "style", model="m-work")
    target = put(room, "passed", "t1")
    folder = results.folder(room, "t1")
    folder.mkdir(parents=True)
    (folder / "meta.json").write_text(json.dumps({"adapter": "probe", "model": "m-work"}))
    put(room, "done", "review-style-t1")  # an id taken: the next free one
    chosen = review.check_lenses(room, Settings(), task("t1", review=["style"]))
    assert review.queue_reviews(room, Settings(), target, chosen, "passed") == ["review-style-t1-2"]
    [line] = entries(room, "warning")
    assert (line.task, line.detail) == (
        "review-style-t1-2",
        "lens style runs on m-work, the model of the work it reviews; give the lens another model "
        "(agents/lenses/style.md)",
    )


def test_reviews_of_a_failed_round_become_the_tasks_deps(room: Room) -> None:
    lens(room, "style")
    target = put(room, "queue", "t1", deps=["t0"], rounds=1, last_failure="validator exited 1")
    chosen = review.check_lenses(room, Settings(), task("t1", review=["style"]))
    assert review.queue_reviews(room, Settings(), target, chosen, "queue") == ["review-style-t1"]
    assert task_json(room, "queue", "review-style-t1")["objective"] == (
        "Review the failed round of task t1 through the style lens: reject, with findings, what its next "
        "round must not repeat; accept if there is nothing to add."
    )
    now = task_json(room, "queue", "t1")
    assert (now["deps"], now["review_tasks"], "reviewed_state" in now) == (
        ["t0", "review-style-t1"], ["review-style-t1"], False)  # fmt: skip  # no repo: nothing to save


# Verdicts ------------------------------------------------------------------------------------


def test_settle_waits_for_every_review(room: Room) -> None:
    assert review.settle(room, Settings(), "t1") == ("t1 is no longer waiting for its reviews", None)
    waiting(room, "review-a-t1", "review-b-t1", "review-c-t1")
    verdict(room, "review-a-t1", "t1", "a", "accept", "fine")
    put(room, "queue", "review-b-t1", reviews="t1")
    assert review.settle(room, Settings(), "t1") == ("t1 waits for review-b-t1 (queue)", None)
    swarm.task_file(room, "queue", "review-b-t1").unlink()
    assert review.settle(room, Settings(), "t1") == ("t1 waits for review-b-t1 (gone)", None)
    assert where(room, "t1") == ["passed"] and entries(room, "review") == []


def test_all_accept_without_a_repo_is_done(room: Room) -> None:
    waiting(room, "review-a-t1", "review-b-t1")
    verdict(room, "review-a-t1", "t1", "a", "accept", "fine")
    verdict(room, "review-b-t1", "t1", "b", "accept", "fine too")
    assert review.settle(room, Settings(), "t1") == ("t1 accepted (all 2 reviews accept); done", None)
    assert where(room, "t1") == ["done"] and task_json(room, "done", "t1")["review_verdict"] == "accept"
    [line] = entries(room, "review")
    assert (line.task, line.route, line.outcome, line.detail) == (
        "t1",
        "r1",
        "accepted",
        "all 2 reviews accept",
    )


def test_only_rejects_are_a_failed_round_with_the_anonymised_findings(room: Room) -> None:
    routes.add(room, "r1", "Route one")
    waiting(room, "review-a-t1", "review-b-t1")
    verdict(room, "review-a-t1", "t1", "style", "reject", "the style lens says no", "b.txt has tabs")
    verdict(room, "review-b-t1", "t1", "safety", "reject", "review-a-t1 missed the key", "b.txt holds a key")
    said = review.settle(room, Settings(), "t1")
    assert said == ("t1 rejected by review (every review rejects); back in the queue for round 2 of 2", None)
    back = task_json(room, "queue", "t1")
    assert (back["rounds"], back["last_failure"]) == (1, (
        "review: every review rejects:\n"
        "review 1: the [withheld] lens says no\n  - CONFIRMED: b.txt has tabs\n"
        "review 2: [withheld] missed the key\n  - CONFIRMED: b.txt holds a key"))  # fmt: skip
    [line] = entries(room, "review")
    assert (line.outcome, line.detail) == ("rejected", "every review rejects")
    row = routes.find(room, "r1")
    assert row is not None and (row["attempts"], row["verdict"]) == ("1", "alive")  # a failed run of r1


@pytest.mark.parametrize("first", ["accept", "reject"])
def test_accept_against_reject_queues_an_arbiter_with_the_sides_as_a_and_b(
    room: Room, monkeypatch: pytest.MonkeyPatch, first: str
) -> None:
    monkeypatch.setattr(review.random, "choice", lambda options: first)  # which side is A
    waiting(room, "review-a-t1", "review-b-t1", "review-c-t1", priority=2)
    verdict(room, "review-a-t1", "t1", "a", "accept", "fine")
    verdict(room, "review-b-t1", "t1", "b", "reject", "no", "b.txt holds a key")
    verdict(room, "review-c-t1", "t1", "c", "accept", "fine")
    said = review.settle(room, Settings(), "t1")
    assert said == ("t1's reviews disagree (2 accept, 1 reject); queued arbitrate-t1", None)
    sides = {"accept": ["review-a-t1", "review-c-t1"], "reject": ["review-b-t1"]}
    second = "reject" if first == "accept" else "accept"
    arbiter = task_json(room, "queue", "arbitrate-t1")
    assert re.fullmatch(TIME, arbiter.pop("created"))
    assert arbiter == {
        "id": "arbitrate-t1",
        "objective": "Two reviews of task t1 disagree: decide by evidence, Position A or Position B.",
        "falsifier": "the chosen position's evidence does not hold when checked",
        "validator": ["true"],
        "max_cost_usd": 0.5,  # the room's arbiter lens
        "wall_clock_s": 600.0,
        "kill_condition": "the evidence cannot be checked here",
        "role": "arbiter",
        "route": "r1",
        "priority": 62,
        "arbitrates": "t1",
        "lens": "arbiter",
        "sides": {"A": sides[first], "B": sides[second]},
        "meaning": {"A": first, "B": second},
    }
    assert task_json(room, "passed", "t1")["arbitrations"] == 1 and where(room, "t1") == ["passed"]
    [line] = entries(room, "arbitration")
    assert (line.task, line.outcome, line.detail) == (
        "t1", "queued", f"2 accept, 1 reject: arbitrate-t1 decides (Position A is {first})")  # fmt: skip


def test_a_second_arbitration_escalates_to_a_person_with_both_positions(
    room: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(review.random, "choice", lambda options: "reject")
    waiting(room, "review-a-t1", "review-b-t1", arbitrations=1)
    verdict(room, "review-a-t1", "t1", "style", "accept", "the style lens likes it")
    verdict(room, "review-b-t1", "t1", "safety", "reject", "no", "b.txt holds a key")
    said = review.settle(room, Settings(), "t1")
    assert said == (
        "t1 escalated to a person (a second arbitration was needed); parked with both positions",
        None,
    )
    assert where(room, "t1") == ["parked"] and where(room, "arbitrate-t1") == []
    reason = (room.state_dir("parked") / "t1.reason").read_text()
    assert re.fullmatch(
        f"Parked at {TIME} for a person: its reviews disagree and a second arbitration was needed.\n\n"
        "Both positions, side by side \\(who wrote each is withheld here too; the review tasks are "
        "review-b-t1, review-a-t1\\):\n\n"
        "## Position A\n\nDECISION: reject\nWHY: no\nEVIDENCE:\n- CONFIRMED: b.txt holds a key\n\n"
        "## Position B\n\nDECISION: accept\nWHY: the \\[withheld\\] lens likes it\nEVIDENCE:\n"
        "- INFERRED: nothing\n\n"
        "A person decides: `control-room task retry t1`, `control-room task cancel t1`, or kill its route.\n",
        reason,
    )
    [line] = entries(room, "escalated")
    assert (line.task, line.route, line.outcome, line.detail) == (
        "t1", "r1", "parked", "a second arbitration was needed")  # fmt: skip
    assert entries(room, "park")[-1].detail == "escalated: a second arbitration was needed"


def test_a_passed_review_records_its_verdict_then_settles(room: Room) -> None:
    waiting(room, "review-a-t1", "review-b-t1")
    put(room, "queue", "review-b-t1", reviews="t1")
    done = put(room, "done", "review-a-t1", reviews="t1", lens="style", route="r1")
    said = review.after_pass(room, Settings(), done, rep("Accept.", "  nothing breaks  "), "codex")
    assert said == ("t1 waits for review-b-t1 (queue)", None)
    assert task_json(room, "done", "review-a-t1")["verdict"] == "accept"
    [line] = entries(room, "review")
    assert (line.task, line.route, line.adapter, line.outcome, line.detail) == (
        "t1", "r1", "codex", "accept", "style (review-a-t1): nothing breaks")  # fmt: skip


def arbitrated(room: Room) -> dict[str, Any]:
    """t1 waits for its arbiter: A is review-b-t1 (rejects), B is review-a-t1 (accepts)."""
    waiting(room, "review-a-t1", "review-b-t1", arbitrations=1)
    verdict(room, "review-a-t1", "t1", "style", "accept", "fine")
    verdict(room, "review-b-t1", "t1", "safety", "reject", "the safety lens says no", "b.txt holds a key")
    sides, meaning = {"A": ["review-b-t1"], "B": ["review-a-t1"]}, {"A": "reject", "B": "accept"}
    return put(room, "done", "arbitrate-t1", arbitrates="t1", lens="arbiter", route="r1", sides=sides,
               meaning=meaning)  # fmt: skip


def test_an_arbiter_choosing_the_accepting_side_accepts_the_task(room: Room) -> None:
    arbiter = arbitrated(room)
    said = review.after_pass(room, Settings(), arbiter, rep("B", "A checked nothing"), "probe")
    assert said == ("t1 accepted (the arbiter arbitrate-t1 chose the accepting side); done", None)
    assert where(room, "t1") == ["done"] and task_json(room, "done", "arbitrate-t1")["verdict"] == "b"
    [line] = entries(room, "arbitration")
    assert (line.task, line.outcome, line.detail) == (
        "t1",
        "B",
        "arbitrate-t1 chose B (accept): A checked nothing",
    )
    assert entries(room, "review")[-1].detail == "the arbiter arbitrate-t1 chose the accepting side"


def test_an_arbiter_choosing_the_rejecting_side_fails_the_round_with_that_sides_findings(room: Room) -> None:
    arbiter = arbitrated(room)
    said, ready = review.after_pass(room, Settings(), arbiter, rep("A", "the key is there"), "probe")
    why = "the arbiter arbitrate-t1 chose the rejecting side: the key is there"
    assert (said, ready) == (f"t1 rejected by review ({why}); back in the queue for round 2 of 2", None)
    assert task_json(room, "queue", "t1")["last_failure"] == (
        f"review: {why}:\nreview 1: the [withheld] lens says no\n  - CONFIRMED: b.txt holds a key"
    )
    assert entries(room, "arbitration")[-1].detail == "arbitrate-t1 chose A (reject): the key is there"


def test_an_arbiter_that_escalates_parks_the_task(room: Room) -> None:
    arbiter = arbitrated(room)
    said = review.after_pass(
        room, Settings(), arbiter, rep("escalate", "both cite files I cannot read"), "probe"
    )
    assert said == (
        "t1 escalated to a person (the arbiter escalated: both cite files I cannot read); parked with both "
        "positions",
        None,
    )
    assert where(room, "t1") == ["parked"] and entries(room, "arbitration") == []
    assert "## Position A\n\nDECISION: reject" in (room.state_dir("parked") / "t1.reason").read_text()


def test_an_arbiter_for_a_task_no_longer_waiting_changes_nothing(room: Room) -> None:
    arbiter = arbitrated(room)
    swarm.move(room, "t1", "passed", "cancelled")
    said = review.after_pass(room, Settings(), arbiter, rep("B"), "probe")
    assert said == ("t1 is no longer waiting for its arbiter", None)
    assert where(room, "t1") == ["cancelled"] and entries(room, "arbitration") == []


def test_the_reviews_of_a_failed_round_join_its_next_brief(room: Room) -> None:
    routes.add(room, "r1", "Route one")
    put(room, "queue", "t1", route="r1", rounds=1, last_failure="validator exited 1",
        review_tasks=["review-a-t1", "review-b-t1"], reviewed_state="abc", reviewed_commit="def")  # fmt: skip
    verdict(room, "review-a-t1", "t1", "style", "accept", "fine")
    verdict(room, "review-b-t1", "t1", "safety", "reject", "c.txt is never made", "`ls` shows b.txt only")
    said = review.settle(room, Settings(), "t1")
    assert said == ("t1's failed round was reviewed (1 of 2 reject); the findings join its next brief", None)
    now = task_json(room, "queue", "t1")
    assert now["last_failure"] == (
        "validator exited 1\n\nWhat the reviews of that round found:\n"
        "review 1: c.txt is never made\n  - CONFIRMED: `ls` shows b.txt only"
    )
    assert not {"review_tasks", "reviewed_state", "reviewed_commit"} & set(now)
    [line] = entries(room, "review")
    assert (line.outcome, line.detail) == (
        "rejected", "after a failed round: 1 of 2 reject; their findings join its next brief")  # fmt: skip
    row = routes.find(room, "r1")
    assert row is not None and row["attempts"] == "0"  # the round failed once: not twice


def test_reviews_of_a_failed_round_that_all_accept_say_so(room: Room) -> None:
    put(room, "queue", "t1", last_failure="x", review_tasks=["review-a-t1"])
    verdict(room, "review-a-t1", "t1", "style", "accept", "fine")
    review.settle(room, Settings(), "t1")
    assert task_json(room, "queue", "t1")["last_failure"] == (
        "x\n\nWhat the reviews of that round found:\nevery review accepts what the round left"
    )
    assert entries(room, "review")[-1].outcome == "accepted"


# With a repository: what was reviewed, and what a reviewer changed -----------------------------


@pytest.fixture
def repo_room(room: Room, tmp_path: Path) -> tuple[Settings, Path]:
    """A repository beside the room, and route r1's worktree with one commit (b.txt) on it."""
    make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    s = settings.load(room).replace(repo="../repo")
    tree = worktrees.workdir(room, s, task("t1", route="r1"))
    (tree / "b.txt").write_text("b\n")
    git(tree, "add", "b.txt")
    git(tree, "commit", "-q", "-m", "b")
    return s, tree


def warned(room: Room) -> list[tuple[str, str]]:
    """The warnings about a task (not the one about the base branch that making a worktree set)."""
    return [(e.task, e.detail) for e in entries(room, "warning") if e.task]


def test_reviews_record_the_commit_or_the_failed_rounds_work_they_review(
    room: Room, repo_room: tuple[Settings, Path]
) -> None:
    s, tree = repo_room
    lens(room, "style")
    chosen = review.check_lenses(room, s, task("t1", review=["style"]))
    review.queue_reviews(room, s, put(room, "passed", "t1", route="r1"), chosen, "passed")
    head = git(tree, "rev-parse", "HEAD")
    assert task_json(room, "passed", "t1")["reviewed_commit"] == head
    swarm.move(room, "t1", "passed", "queue")
    (tree / "c.txt").write_text("c\n")  # a failed round leaves its work uncommitted
    failed = put(room, "queue", "t1", route="r1", rounds=1)
    review.queue_reviews(room, s, failed, chosen, "queue")
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
    review.discard_edits(room, s, rv, tree)  # nothing changed: nothing to do
    assert warned(room) == []
    (tree / "b.txt").write_text("a reviewer's edit\n")
    (tree / "new.txt").write_text("new\n")
    review.discard_edits(room, s, rv, tree)
    assert (tree / "b.txt").read_text() == "b\n" and not (tree / "new.txt").exists()
    assert git(tree, "status", "--porcelain") == ""
    (tree / "b.txt").write_text("committed by a reviewer\n")
    git(tree, "commit", "-q", "-am", "a reviewer's commit")
    review.discard_edits(room, s, rv, tree)
    assert git(tree, "rev-parse", "HEAD") == head
    assert warned(room) == [
        ("review-style-t1", "the review changed the worktree (b.txt, new.txt); discarded: reviewers never "
                            "edit"),
        ("review-style-t1", f"the review changed the worktree (commits on top of {head[:12]}); discarded: "
                            "reviewers never edit"),
    ]  # fmt: skip
    review.discard_edits(room, Settings(), rv, tree)  # no repo: not looked at
    review.discard_edits(room, s, task("t9"), tree)  # not a review
    assert len(warned(room)) == 2


def test_an_arbiters_changes_to_a_failed_rounds_work_are_undone_and_the_work_put_back(
    room: Room, repo_room: tuple[Settings, Path]
) -> None:
    s, tree = repo_room
    lens(room, "style")
    (tree / "c.txt").write_text("c\n")
    failed = put(room, "queue", "t1", route="r1", rounds=1)
    chosen = review.check_lenses(room, s, task("t1", review=["style"]))
    review.queue_reviews(room, s, failed, chosen, "queue")
    (tree / "c.txt").write_text("changed by the arbiter\n")
    arbiter = put(room, "running", "arbitrate-t1", arbitrates="t1", lens="arbiter", route="r1")
    review.discard_edits(room, s, arbiter, tree)
    assert (tree / "c.txt").read_text() == "c\n" and git(tree, "status", "--porcelain") == "?? c.txt"
    assert warned(room) == [
        ("arbitrate-t1", "the arbiter changed the worktree (c.txt); discarded: reviewers never edit")
    ]


def test_an_accepted_task_with_commits_waits_to_integrate(
    room: Room, repo_room: tuple[Settings, Path]
) -> None:
    s, _ = repo_room
    waiting(room, "review-a-t1")
    verdict(room, "review-a-t1", "t1", "style", "accept", "fine")
    assert review.settle(room, s, "t1") == ("t1 accepted (its one review accepts); it may integrate", "t1")
    assert where(room, "t1") == ["passed"] and task_json(room, "passed", "t1")["review_verdict"] == "accept"
    assert review.needs_verdict(task_json(room, "passed", "t1")) is False
