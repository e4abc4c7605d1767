"""control_room.knowledge.graveyard: kill and reopen a route; a killed route's tasks are refused."""

from __future__ import annotations

import pytest
from support import drop_task as drop
from support import events
from support import probe_task as task

from control_room import errors
from control_room.dispatch.queue import admission
from control_room.dispatch.run import cycle
from control_room.errors import ConflictError, InvalidError
from control_room.knowledge import graveyard, routes
from control_room.room import settings as control
from control_room.room.layout import Room


def test_a_killed_routes_task_is_refused_with_the_tombstone_and_reopen_lets_it_through(room: Room) -> None:
    routes.add(room, "c-ext", "rewrite the hot loop in C")
    drop(room, task("c-1", route="c-ext"))
    assert cycle.cycle(room).code == errors.PASSED
    graveyard.kill(room, "c-ext", "the C extension did not beat the sieve", "the sieve is ruled out", ["c-1"])
    assert routes.get(room, "c-ext")["verdict"] == "killed"
    with pytest.raises(InvalidError) as err:
        admission.add(room, control.load(room), task("c-2", route="c-ext"))
    assert str(err.value).startswith("task refused: route c-ext is killed: see graveyard/c-ext.md (verdict: ")
    drop(room, task("c-3", route="c-ext"))  # by hand: the cycle refuses it
    assert cycle.cycle(room).code == errors.OK
    reason = (room.state_dir("rejected") / "c-3.json.reason").read_text()
    assert "- route c-ext is killed: see graveyard/c-ext.md (verdict: the C extension did not beat" in reason
    graveyard.reopen(room, "c-ext", "the sieve turned out to be wrong for big n")
    tomb = (room.root / "graveyard" / "c-ext.md").read_text()
    assert "## Why it died\n\nthe C extension did not beat the sieve" in tomb
    assert "## Reopened " in tomb and "the sieve turned out to be wrong for big n" in tomb
    admission.add(room, control.load(room), task("c-4", route="c-ext"))
    assert cycle.cycle(room).task_id == "c-4"
    assert [e for e in events(room.ledger) if e.startswith("route-")] == [
        "route-add",
        "route-kill",
        "route-reopen",
    ]
    with pytest.raises(ConflictError):
        graveyard.reopen(room, "c-ext", "again")


def test_a_kill_needs_a_verdict_and_reopen_conditions(room: Room) -> None:
    with pytest.raises(InvalidError) as err:
        graveyard.kill(room, "x", "", "never", [])
    assert (
        str(err.value) == "a kill needs both --verdict (why it died) and --reopen-if (what would revive it)"
    )


def test_an_unreadable_tombstone_refuses_its_route_only(room: Room) -> None:
    (room.root / "graveyard" / "broken.md").write_text("---\nverdict: [unclosed\n---\nbody\n")
    drop(room, task("on-broken", route="broken", priority=5))
    drop(room, task("elsewhere"))
    assert cycle.cycle(room).task_id == "elsewhere"
    reason = (room.state_dir("rejected") / "on-broken.json.reason").read_text()
    assert "graveyard/broken.md cannot be read (" in reason


def test_killing_a_reopened_route_again_keeps_the_whole_story(room: Room) -> None:
    drop(room, task("k-1", route="twice"))
    cycle.cycle(room)
    graveyard.kill(room, "twice", "first verdict", "first condition", ["k-1"])
    graveyard.reopen(room, "twice", "first condition met")
    drop(room, task("k-2", route="twice"))
    cycle.cycle(room)
    graveyard.kill(room, "twice", "second verdict", "second condition", ["k-2"])
    meta, body = graveyard.read(room, "twice")
    assert (meta["state"], meta["verdict"], meta["reopen_if"], meta["evidence"]) == (
        "killed",
        "second verdict",
        "second condition",
        ["k-1", "k-2"],
    )
    assert "reopened_at" not in meta
    assert (
        "first verdict" in body and "## Killed again " in body and "Reopen only if: second condition" in body
    )


def test_a_killed_routes_refusal_is_one_line_whatever_its_verdict_says(room: Room) -> None:
    """Found by the fuzz tests: `route kill --verdict` with a line break (or a tombstone edited
    so) made every refusal of the route's tasks span lines."""
    graveyard.kill(room, "r1", "it failed\nbadly", "the\ninputs grow", [])
    assert graveyard.refusal(room, "r1") == (
        "route r1 is killed: see graveyard/r1.md (verdict: it failed badly; reopen if: the inputs grow)"
    )
