"""dispatch.review.which: the task a review serves, which lenses review a task, and reading them."""

from __future__ import annotations

import pytest
from support import task

from control_room.dispatch.review import which
from control_room.errors import RoomInvalidError
from control_room.room.layout import Room
from control_room.room.settings import Settings


def test_a_review_serves_the_task_it_reviews_and_an_arbiter_the_task_it_arbitrates() -> None:
    assert which.serves(task("t1")) is None
    assert which.serves(task("r1", reviews="t1")) == "t1"
    assert which.serves(task("a1", arbitrates="t1")) == "t1"


def test_lenses_for_a_task_are_its_own_else_its_routes_else_the_rooms() -> None:
    listed = Settings(review=["correctness", "security"])
    assert which.lenses_for(listed, task("t1")) == ["correctness", "security"]
    assert which.lenses_for(listed, task("t1", review=[])) == []  # its own overrides
    assert which.lenses_for(listed, task("t1", review=["claims"])) == ["claims"]
    by_route = Settings(review={"r1": ["falsifier"], "*": ["correctness"]})
    assert which.lenses_for(by_route, task("t1", route="r1")) == ["falsifier"]
    assert which.lenses_for(by_route, task("t1", route="r2")) == ["correctness"]
    assert which.lenses_for(by_route, task("t1")) == ["correctness"]
    assert which.lenses_for(Settings(review={"r1": ["falsifier"]}), task("t1", route="r2")) == []


def test_reviews_arbiters_and_helpers_are_never_reviewed() -> None:
    s = Settings(review=["correctness"])
    for served in ({"reviews": "t0"}, {"arbitrates": "t0"}, {"for_task": "t0"}):
        assert which.lenses_for(s, task("t1", review=["claims"], **served)) == []


def test_check_lenses_reads_them_and_a_missing_or_broken_one_is_the_rooms_fault(room: Room) -> None:
    s = Settings(review=["security"])
    [sec] = which.check_lenses(room, s, task("t1"))
    assert (sec.name, sec.sees, sec.max_cost_usd, sec.wall_clock_s) == ("security", ("diff",), 0.5, 600.0)
    path = room.root / "agents" / "lenses"
    with pytest.raises(RoomInvalidError) as err:
        which.check_lenses(room, s, task("t1", review=["security", "nope"]))
    assert str(err.value) == (
        f"room invalid: lens 'nope' has no file: {path / 'nope.md'} is missing (lenses here: arbiter, "
        "claims, correctness, falsifier, security)"
    )
    (path / "odd.md").write_text("---\nsees: [smell]\n---\nbody\n")
    with pytest.raises(RoomInvalidError) as err:
        which.check_lenses(room, s, task("t1", review=["odd"]))
    assert str(err.value) == (
        f"room invalid: {path / 'odd.md'}: sees must list some of diff, history, code, spec, positions "
        "(got ['smell'])"
    )


def test_a_task_no_lens_reviews_reads_no_lens_file(room: Room) -> None:
    (room.root / "agents" / "lenses").rename(room.root / "agents" / "gone")  # none could be read
    assert which.check_lenses(room, Settings(), task("t1")) == []
