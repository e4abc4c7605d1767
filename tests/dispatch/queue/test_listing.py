"""dispatch.queue.listing: the run order a cycle walks (the saved order trusted briefly, one full
check at a time), and the candidates a run loop's cycles take from a listing at most a second old."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import order, queue, task

from control_room.dispatch.queue import index, listing
from control_room.room import swarm
from control_room.room.layout import Room


def names(room: Room) -> list[str]:
    return [t.id for t in listing.candidates(room)]


def test_run_order_trusts_its_index_briefly_then_checks_every_file(
    room: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    queue(room, "a", priority=1)
    queue(room, "b", priority=0)
    assert order(room) == ["a", "b"]  # a full check: every file read
    path = room.state_dir("queue") / "b.json"
    task = json.loads(path.read_text())
    task["priority"] = 5
    with open(path, "r+") as f:  # edited in place, as some editors do
        f.seek(0)
        f.write(json.dumps(task))
        f.truncate()
    queue(room, "c", priority=3)  # a new name is always read
    assert order(room) == ["c", "a", "b"]  # b's new priority not seen yet: index trusted
    monkeypatch.setattr(time, "time", lambda real=time.time: real() + listing.RECHECK_S + 1)
    assert order(room) == ["b", "c", "a"]  # past RECHECK_S: every file checked again


def test_a_full_check_found_done_by_another_process_meanwhile_is_not_done_again(
    room: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    queue(room, "a")
    assert order(room) == ["a"]  # a full check
    later = time.time() + listing.RECHECK_S + 1
    monkeypatch.setattr(time, "time", lambda: later)
    scans: list[str] = []
    real_scan = index.scan

    @contextlib.contextmanager
    def waited(path: Path) -> Iterator[None]:  # another process held the lock and checked every file
        assert path == room.cr / listing.SCAN_LOCK
        real_scan(room, "queue")
        yield

    monkeypatch.setattr(listing.lock, "held", waited)
    monkeypatch.setattr(index, "scan", lambda room, state: scans.append(state) or real_scan(room, state))
    queue(room, "b", priority=1)
    assert order(room) == ["b", "a"]  # its order, and the new name read
    assert scans == []


def test_candidates_come_from_a_listing_at_most_a_second_old(
    room: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    for tid in ("t1", "t2", "t3"):
        queue(room, tid)
    assert names(room) == ["t1", "t2", "t3"]  # listed
    now = time.monotonic()
    monkeypatch.setattr(time, "monotonic", lambda: now)
    queue(room, "t0", priority=5)  # by hand, from another process
    listing.gone(room, "t2.json")  # claimed by another cycle
    assert names(room) == ["t1", "t3"]  # the same listing, less what is gone
    monkeypatch.setattr(time, "monotonic", lambda: now + listing.LIST_S + 0.1)
    assert names(room) == ["t0", "t1", "t2", "t3"]  # listed again (t2 is still there: gone said so wrongly)


def test_a_task_this_process_queues_is_a_candidate_at_once(
    room: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    queue(room, "t1")
    assert names(room) == ["t1"]
    now = time.monotonic()
    monkeypatch.setattr(time, "monotonic", lambda: now)
    swarm.write_new(room, json.loads(json.dumps(task("t0", priority=3))))  # as `task add`, a review
    assert names(room) == ["t0", "t1"]
    swarm.move(room, "t0", "queue", "running")
    listing.gone(room, "t0.json")
    assert names(room) == ["t1"]
    swarm.move(room, "t0", "running", "queue")  # a failed round, back
    assert names(room) == ["t0", "t1"]


def test_a_listing_of_another_room_is_not_used(room: Room, tmp_path: Path) -> None:
    queue(room, "t1")
    assert names(room) == ["t1"]
    other = Room(tmp_path / "other")
    (other.swarm / "queue").mkdir(parents=True)
    other.cache.mkdir(parents=True)
    assert names(other) == []
    listing.gone(room, "t1.json")  # not the room listed last: nothing to pass by
    assert names(room) == ["t1"]
