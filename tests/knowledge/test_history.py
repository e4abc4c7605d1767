"""control_room.knowledge.history: the ledger folded per route: identical failures in a row make
a death loop, unsupported claims are counted, old and new result lines read alike."""

from __future__ import annotations

import sys

import pytest
from support import drop_task as drop
from support import probe_task as task
from support import set_gate

from control_room import ledger
from control_room.dispatch.run import cycle
from control_room.knowledge import digest, findings, history
from control_room.ledger import events, result
from control_room.room import settings as control
from control_room.room.layout import Room
from control_room.store import cache

PY = sys.executable


def test_three_different_probe_failures_are_not_a_death_loop(room: Room) -> None:
    set_gate(room, "max_rounds", "1")
    for n in range(3):  # the probe's DECISION is always "the command exited 1": not a decision
        drop(room, task(f"v-{n}", route="varied",
                        validator=[PY, "-c",
                                   f"import sys; print('case {chr(97 + n)}'); sys.exit(1)"]))  # fmt: skip
        cycle.cycle(room)
    assert findings.gather(room, control.load(room))["death_loops"] == []


def _result(room: Room, task: str, outcome: str, run: result.RunResult, route: str = "r1") -> None:
    ledger.append(room.ledger, events.RESULT, task=task, route=route, adapter="claude", outcome=outcome,
                  detail=run.detail())  # fmt: skip


def test_the_fold_reads_the_flag_on_the_result_line_and_old_unsupported_claim_lines(room: Room) -> None:
    _result(room, "t1", "fail", result.RunResult(decision="done", failed="validator exited 1",
                                                  unsupported=True, validator="exited 1"))  # fmt: skip
    ledger.append(
        room.ledger,
        events.UNSUPPORTED_CLAIM,
        task="t0",
        route="r0",
        adapter="claude",
        detail="report says CONFIRMED success; validator exited 2",
    )  # a line written before 0.2
    st, _ = history.state(room)
    assert st["unsupported_n"] == 2
    assert [u[2:] for u in st["unsupported"]] == [
        ["t1", "r1", "report says CONFIRMED success; validator exited 1"],
        ["t0", "r0", "report says CONFIRMED success; validator exited 2"],
    ]


def test_a_decision_that_looks_like_a_failure_is_not_one(room: Room) -> None:
    """The bug the structured line fixes: a DECISION with '; failed: x' in it, on a pass."""
    _result(room, "t1", "pass", result.RunResult(decision="tried x; failed: nothing", validator="passed"))
    st, _ = history.state(room)
    r = st["routes"]["r1"]
    assert (r["passes"], r["fails"], r["last"][-1][3:]) == (1, 0, ["tried x; failed: nothing", ""])
    assert st["causes"] == {}


def test_legacy_and_new_result_lines_fold_the_same_way(room: Room) -> None:
    legacy = "round 1; agent exit 0 in 0.1s; decision: did it; failed: validator exited 1: case 7 wrong"
    for n in range(2):
        ledger.append(room.ledger, events.RESULT, task=f"old-{n}", route="r1", adapter="claude",
                      outcome="fail", detail=legacy)  # fmt: skip
    _result(
        room, "new", "fail", result.RunResult(decision="did it", failed="validator exited 1: case 9 wrong")
    )
    st, _ = history.state(room)
    loops = history.death_loops(st, 3)
    assert list(loops) == ["r1"] and loops["r1"]["n"] == 3
    assert loops["r1"]["cause"] == "validator exited N: case N wrong"


def test_a_person_acting_on_a_route_ends_its_streak(room: Room) -> None:
    for n in range(3):
        _result(room, f"t{n}", "fail", result.RunResult(decision="same", failed="same error"))
    assert list(history.held(room, control.load(room))) == ["r1"]
    ledger.append(room.ledger, events.ROUTE_RESUME, route="r1", detail="fixed the bench")
    assert history.held(room, control.load(room)) == {}


def test_review_and_arbiter_runs_are_counted_apart_from_the_routes_own(room: Room) -> None:
    """A run that serves another task (a review, an arbiter) is no attempt, pass, best or streak
    of its route: three timed-out arbiters make no death loop; their unsupported claims still count."""
    _result(room, "t1", "pass", result.RunResult(decision="cached the separator", validator="passed"))
    timed_out = "the agent was killed at its 600s time limit"
    for n in range(3):
        _result(room, f"arbitrate-t{n}", "fail", result.RunResult(failed=timed_out, serves=f"t{n}"))
    _result(room, "review-a-t1", "pass", result.RunResult(decision="accept", serves="t1", unsupported=True))
    _result(room, "review-a-t9", "pass", result.RunResult(decision="accept", serves="t9"), route="")
    st, _ = history.state(room)
    r = st["routes"]["r1"]
    assert (r["attempts"], r["passes"], r["fails"], r["best"][1:]) == (
        1,
        1,
        0,
        ["t1", "cached the separator"],
    )
    assert (r["reviews"], [t for _, t, *_ in r["last"]], r["streak"]["n"]) == (4, ["t1"], 0)
    assert history.death_loops(st, 3) == {} and st["causes"] == {}
    assert st["routes"]["task:t9"]["reviews"] == 1 and st["routes"]["task:t9"]["attempts"] == 0
    assert [u[2] for u in st["unsupported"]] == ["review-a-t1"]
    assert history.reviews(room) == {"r1": {"runs": 4, "spend_usd": 0.0}}


def test_the_holds_fold_keeps_only_routes_on_a_streak_and_says_what_the_history_says(room: Room) -> None:
    settings = control.load(room)
    assert history.held(room, settings) == {}  # a first look: seeded from the history's fold
    same = result.RunResult(decision="same", failed="same error")
    for n in range(300):  # many routes that pass, a few that loop, one that loops and is resumed
        route = f"r{n % 100}"
        outcome = "fail" if route in ("r7", "r42", "r99") else "pass"
        _result(room, f"t{n}", outcome, same, route=route)
        if n in (50, 250):
            assert history.held(room, settings) == history.death_loops(history.state(room)[0], 3)
    ledger.append(room.ledger, events.ROUTE_RESUME, route="r42", detail="fixed")
    held = history.held(room, settings)
    assert held == history.death_loops(history.state(room)[0], 3)
    assert sorted(held) == ["r7", "r99"] and held["r7"]["n"] == 3
    # its checkpoint holds the routes on a streak, not the 100 the room ran
    kept = cache.load(room.cache / "death-loops")["routes"]
    assert len(kept) < 70 and {"r7", "r99"} <= set(kept)
    assert len(history.state(room)[0]["routes"]) == 100


def test_what_is_in_trouble_counts_as_the_whole_history_does(room: Room) -> None:
    bad = result.RunResult(decision="said done", failed="validator exited 1", unsupported=True)
    for n in range(80):
        _result(room, f"t{n}", "pass", result.RunResult(decision="ok"), route=f"r{n}")
    for n in range(3):
        _result(room, f"u{n}", "fail", bad, route="loop")
    ledger.append(room.ledger, events.KILL_PROPOSED, task="u2", route="loop", detail="three the same")
    st, small = history.state(room)[0], history.trouble(room)
    assert (small["unsupported_n"], small["proposals"]) == (st["unsupported_n"], st["proposals"]) != (0, {})
    assert history.death_loops(small, 3) == history.death_loops(st, 3) != {}


def test_tasks_without_a_route_past_the_most_recent_are_folded_into_one_entry(
    room: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(history, "TASKS_KEPT", 2)
    _result(room, "stuck", "fail", result.RunResult(decision="done", failed="validator exited 3"), route="")

    def passed(n: int) -> None:
        ledger.append(room.ledger, events.RESULT, task=f"t{n}", adapter="claude", outcome="pass",
                      cost_usd=1.5, detail=result.RunResult(decision=f"did {n}").detail())  # fmt: skip

    for n in range(3):
        passed(n)
    st, _ = history.state(room)
    assert sorted(st["routes"]) == ["task:stuck", "task:t0", "task:t1", "task:t2"]  # not past 2 * 2
    passed(3)
    st, _ = history.state(room)
    assert sorted(st["routes"]) == ["task:stuck", "task:t2", "task:t3"]  # the 2 latest; stuck is on a streak
    assert (st["older_n"], st["older_tasks"]["attempts"], st["older_tasks"]["spend"], st["tasks"]) == (
        2,
        2,
        3.0,
        3,
    )
    (room.cache / "digest").unlink()  # a rebuild from the ledger folds the same
    again, _ = history.state(room)
    assert (again["older_n"], sorted(again["routes"])) == (2, sorted(st["routes"]))
    text = digest.render(room, st, control.load(room))
    assert "| (2 older tasks without a route) | $3.00 | 2 | $0.00 |" in text
