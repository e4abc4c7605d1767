"""dispatch.review.verdicts: what the reviews add up to: accepted, rejected, arbitrated, escalated."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from reviewing import arbitrated, put, rep, verdict, waiting
from support import TIME, entries, task_json, unsealed, where

from control_room import errors
from control_room.dispatch.review import queueing, verdicts
from control_room.knowledge import routes
from control_room.room import swarm
from control_room.room.layout import Room
from control_room.room.settings import Settings


def test_settle_waits_for_every_review(room: Room) -> None:
    assert verdicts.settle(room, Settings(), "t1") == ("t1 is no longer waiting for its reviews", None)
    waiting(room, "review-a-t1", "review-b-t1", "review-c-t1")
    verdict(room, "review-a-t1", "t1", "a", "accept", "fine")
    put(room, "queue", "review-b-t1", reviews="t1")
    assert verdicts.settle(room, Settings(), "t1") == ("t1 waits for review-b-t1 (queue)", None)
    swarm.task_file(room, "queue", "review-b-t1").unlink()
    assert verdicts.settle(room, Settings(), "t1") == ("t1 waits for review-b-t1 (gone)", None)
    assert where(room, "t1") == ["passed"] and entries(room, "review") == []


def test_all_accept_without_a_repo_is_done(room: Room) -> None:
    waiting(room, "review-a-t1", "review-b-t1")
    verdict(room, "review-a-t1", "t1", "a", "accept", "fine")
    verdict(room, "review-b-t1", "t1", "b", "accept", "fine too")
    assert verdicts.settle(room, Settings(), "t1") == ("t1 accepted (all 2 reviews accept); done", None)
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
    said = verdicts.settle(room, Settings(), "t1")
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
    monkeypatch.setattr(verdicts.random, "choice", lambda options: first)  # which side is A
    waiting(room, "review-a-t1", "review-b-t1", "review-c-t1", priority=2)
    verdict(room, "review-a-t1", "t1", "a", "accept", "fine")
    verdict(room, "review-b-t1", "t1", "b", "reject", "no", "b.txt holds a key")
    verdict(room, "review-c-t1", "t1", "c", "accept", "fine")
    said = verdicts.settle(room, Settings(), "t1")
    assert said == ("t1's reviews disagree (2 accept, 1 reject); queued arbitrate-t1", None)
    sides = {"accept": ["review-a-t1", "review-c-t1"], "reject": ["review-b-t1"]}
    second = "reject" if first == "accept" else "accept"
    arbiter = unsealed(task_json(room, "queue", "arbitrate-t1"))
    assert re.fullmatch(TIME, arbiter.pop("created"))
    assert arbiter == {
        "id": "arbitrate-t1",
        "objective": "Two reviews of task t1 disagree: decide by evidence, Position A or Position B.",
        "falsifier": "the chosen position's evidence does not hold when checked",
        "validator": "python bench.py --check",  # t1's, run again after the arbiter
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
    passed = task_json(room, "passed", "t1")
    assert (passed["arbitrations"], passed["arbiter"]) == (1, "arbitrate-t1") and where(room, "t1") == [
        "passed"
    ]
    [line] = entries(room, "arbitration")
    assert (line.task, line.outcome, line.detail) == (
        "t1", "queued", f"2 accept, 1 reject: arbitrate-t1 decides (Position A is {first})")  # fmt: skip


def test_a_second_arbitration_escalates_to_a_person_with_both_positions(
    room: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(verdicts.random, "choice", lambda options: "reject")
    waiting(room, "review-a-t1", "review-b-t1", arbitrations=1)
    verdict(room, "review-a-t1", "t1", "style", "accept", "the style lens likes it")
    verdict(room, "review-b-t1", "t1", "safety", "reject", "no", "b.txt holds a key")
    said = verdicts.settle(room, Settings(), "t1")
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
        "The verdict may be a person's: `control-room task accept t1` accepts it.\n"
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
    said = verdicts.after_pass(room, Settings(), done, rep("Accept.", "  nothing breaks  "), "codex")
    assert said == ("t1 waits for review-b-t1 (queue)", None)
    assert task_json(room, "done", "review-a-t1")["verdict"] == "accept"
    [line] = entries(room, "review")
    assert (line.task, line.route, line.adapter, line.outcome, line.detail) == (
        "t1", "r1", "codex", "accept", "style (review-a-t1): nothing breaks")  # fmt: skip


def test_an_arbiter_choosing_the_accepting_side_accepts_the_task(room: Room) -> None:
    arbiter = arbitrated(room)
    said = verdicts.after_pass(room, Settings(), arbiter, rep("B", "A checked nothing"), "probe")
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
    said, ready = verdicts.after_pass(room, Settings(), arbiter, rep("A", "the key is there"), "probe")
    why = "the arbiter arbitrate-t1 chose the rejecting side: the key is there"
    assert (said, ready) == (f"t1 rejected by review ({why}); back in the queue for round 2 of 2", None)
    assert task_json(room, "queue", "t1")["last_failure"] == (
        f"review: {why}:\nreview 1: the [withheld] lens says no\n  - CONFIRMED: b.txt holds a key"
    )
    assert entries(room, "arbitration")[-1].detail == "arbitrate-t1 chose A (reject): the key is there"


def test_an_arbiter_that_escalates_parks_the_task(room: Room) -> None:
    arbiter = arbitrated(room)
    said = verdicts.after_pass(
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
    said = verdicts.after_pass(room, Settings(), arbiter, rep("B"), "probe")
    assert said == ("t1 is no longer waiting for its arbiter", None)
    assert where(room, "t1") == ["cancelled"] and entries(room, "arbitration") == []


def test_the_reviews_of_a_failed_round_join_its_next_brief(room: Room) -> None:
    routes.add(room, "r1", "Route one")
    put(room, "queue", "t1", route="r1", rounds=1, last_failure="validator exited 1",
        review_tasks=["review-a-t1", "review-b-t1"], reviewed_state="abc", reviewed_commit="def")  # fmt: skip
    verdict(room, "review-a-t1", "t1", "style", "accept", "fine")
    verdict(room, "review-b-t1", "t1", "safety", "reject", "c.txt is never made", "`ls` shows b.txt only")
    said = verdicts.settle(room, Settings(), "t1")
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
    verdicts.settle(room, Settings(), "t1")
    assert task_json(room, "queue", "t1")["last_failure"] == (
        "x\n\nWhat the reviews of that round found:\nevery review accepts what the round left"
    )
    assert entries(room, "review")[-1].outcome == "accepted"


def test_an_accepted_task_with_commits_waits_to_integrate(
    room: Room, repo_room: tuple[Settings, Path]
) -> None:
    s, _ = repo_room
    waiting(room, "review-a-t1")
    verdict(room, "review-a-t1", "t1", "style", "accept", "fine")
    assert verdicts.settle(room, s, "t1") == ("t1 accepted (its one review accepts); it may integrate", "t1")
    assert where(room, "t1") == ["passed"] and task_json(room, "passed", "t1")["review_verdict"] == "accept"
    assert queueing.needs_verdict(task_json(room, "passed", "t1")) is False


# a person's accept -------------------------------------------------------------------------


def test_a_person_accepts_a_waiting_task_and_a_late_verdict_changes_nothing(room: Room) -> None:
    waiting(room, "review-a-t1", "review-b-t1")
    put(room, "queue", "review-a-t1", reviews="t1", route="r1")
    running = put(room, "running", "review-b-t1", reviews="t1", lens="safety", route="r1")
    said = verdicts.accept(room, Settings(), "t1", "ann", "read it myself")
    assert said == ("t1 accepted (by a person, ann: read it myself); done", None)  # no repo: nothing to merge
    assert where(room, "t1") == ["done"] and where(room, "review-a-t1") == ["cancelled"]
    assert [(e.task, e.detail) for e in entries(room, "cancel")] == [
        ("review-a-t1", "t1 was accepted by a person (ann)")
    ]
    assert [(e.outcome, e.detail) for e in entries(room, "review")] == [
        ("accepted", "by a person, ann: read it myself")
    ]
    swarm.move(room, "review-b-t1", "running", "done")
    assert verdicts.after_pass(room, Settings(), running, rep("reject", confirmed="x"), "probe")[0] == (
        "t1 is no longer waiting for its reviews"
    )


def test_accept_refuses_a_task_not_waiting_for_a_verdict(room: Room) -> None:
    put(room, "passed", "t1", route="r1")
    with pytest.raises(errors.ConflictError) as err:
        verdicts.accept(room, Settings(), "t1", "ann", "")
    assert str(err.value) == (
        "cannot accept t1: it waits for no verdict (it has no reviews, or they accepted it); "
        "`control-room integrate t1` merges it"
    )
    put(room, "queue", "q")
    with pytest.raises(errors.ConflictError) as err:
        verdicts.accept(room, Settings(), "q", "ann", "")
    assert str(err.value) == "cannot accept q: it is in swarm/queue/, not in swarm/passed/"


def test_a_late_verdict_for_a_task_a_person_accepted_changes_nothing(room: Room) -> None:
    arbiter = arbitrated(room)
    put(
        room, "passed", "t1", route="r1", review_tasks=["review-a-t1", "review-b-t1"], review_verdict="accept"
    )
    assert verdicts.after_pass(room, Settings(), arbiter, rep("A", "the key is there"), "probe") == (
        "t1 has its verdict already",
        None,
    )
    assert where(room, "t1") == ["passed"] and entries(room, "arbitration") == []


def test_a_parked_task_is_accepted_only_once_escalated(room: Room) -> None:
    put(room, "parked", "t1", route="r1", review_tasks=["review-a-t1"])
    with pytest.raises(errors.ConflictError) as err:
        verdicts.accept(room, Settings(), "t1", "ann", "")
    assert str(err.value) == (
        "cannot accept t1: it is in swarm/parked/, not in swarm/passed/ (a parked task only when its "
        "reviews' disagreement was escalated)"
    )
    put(room, "parked", "t1", route="r1", review_tasks=["review-a-t1"], escalated="2026-01-01T00:00:00Z")
    assert verdicts.accept(room, Settings(), "t1", "ann", "") == (
        "t1 accepted (by a person, ann); done",
        None,
    )
    assert where(room, "t1") == ["done"] and "escalated" not in task_json(room, "done", "t1")
