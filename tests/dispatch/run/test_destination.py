"""dispatch.run.destination: where a task that passed goes, row by row of its table."""

from __future__ import annotations

import itertools

import pytest

from control_room.dispatch.run import destination
from control_room.dispatch.run.destination import Destination, decide


@pytest.mark.parametrize(
    ("facts", "state", "then"),
    [
        ({"serves": True}, "done", destination.VERDICT),
        ({"lenses": True}, "passed", destination.REVIEWS),
        ({"lenses": True, "repo": True, "ahead": True}, "passed", destination.REVIEWS),  # reviews first
        ({"repo": True, "ahead": True}, "passed", destination.MERGE),
        ({"repo": True}, "done", destination.NOTHING_TO_MERGE),
        ({}, "done", destination.NOTHING),
        ({"ahead": True}, "done", destination.NOTHING),  # no repo: nothing to merge into
    ],
)
def test_each_row_of_the_table(facts: dict[str, bool], state: str, then: str) -> None:
    given = {"serves": False, "lenses": False, "repo": False, "ahead": False, **facts}
    assert decide(**given) == Destination(state, then)


def test_only_work_waiting_for_the_merge_queue_is_ready_to_merge() -> None:
    for serves, lenses, repo, ahead in itertools.product((False, True), repeat=4):
        goes = decide(serves=serves, lenses=lenses, repo=repo, ahead=ahead)
        assert goes.merge == (not serves and not lenses and repo and ahead)
        assert goes.state == ("passed" if goes.then in (destination.REVIEWS, destination.MERGE) else "done")


def test_a_role_that_writes_tasks_has_its_proposals_read_wherever_it_goes() -> None:
    assert decide(serves=False, lenses=False, repo=False, ahead=False, writes_tasks=True).proposals
    assert decide(serves=False, lenses=True, repo=True, ahead=True, writes_tasks=True).proposals
    assert not decide(serves=False, lenses=False, repo=False, ahead=False).proposals
