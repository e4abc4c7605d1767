"""control_room.views.catch_up: the whole history of a big ledger folded behind its first
commands, in the foreground (``run``) and by the detached ``ledger fold`` (``start``)."""

from __future__ import annotations

import os
import time

import pytest
from support import many_lines

from control_room.knowledge import history
from control_room.ledger import follow
from control_room.ledger.stats import summary
from control_room.room.layout import Room
from control_room.store import cache, lock
from control_room.views import catch_up

LINES = 40_000  # about 7 MB: a big ledger at the real window sizes


@pytest.fixture
def big(room: Room) -> Room:
    many_lines(room.ledger, LINES, days=30)
    follow.BEHIND.clear()
    return room


def _partial(room: Room) -> list[str]:
    summary(room.ledger, room.cache / "ledger-summary")
    history.state(room)
    return catch_up.behind(room)


def test_run_brings_every_partial_state_whole(big: Room) -> None:
    assert _partial(big) == ["ledger-summary", "digest"]
    assert {big.cache: {"ledger-summary", "digest"}} == follow.BEHIND
    assert catch_up.run(big) == ["ledger-summary", "digest"]
    assert catch_up.behind(big) == []
    s = summary(big.ledger, big.cache / "ledger-summary")
    assert (s["from"], s["lines"]) == (0, LINES + 1)  # with init's line
    st, _ = history.state(big)
    assert sum(r["attempts"] for r in st["routes"].values()) == LINES
    assert catch_up.run(big) == []  # nothing left


def test_run_leaves_the_work_to_a_fold_that_holds_the_lock(big: Room) -> None:
    _partial(big)
    held = lock.take(big.cache / catch_up.LOCK)
    assert held is not None
    try:
        assert catch_up.run(big) is None
        assert catch_up.start(big.cache, {"ledger-summary", "digest"}) is False  # one fold per room
    finally:
        os.close(held)
    assert catch_up.behind(big) == ["ledger-summary", "digest"]


def test_start_folds_in_a_process_of_its_own(big: Room) -> None:
    _partial(big)
    assert catch_up.start(big.cache, {"ledger-summary", "digest"}) is True
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (
        catch_up.behind(big) or not lock.is_free(big.cache / catch_up.LOCK)
    ):
        time.sleep(0.05)
    assert catch_up.behind(big) == []
    assert cache.load(big.cache / "ledger-summary")["lines"] == LINES + 1
    assert not (big.cache / "digest.older").exists()
