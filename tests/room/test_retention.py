"""control_room.room.retention: what cleanup removes (finished, unpinned, old; or oldest first
while the disk is low), what it never removes, pins, one ledger line per removal."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from support import entries, set_gate, task

from control_room.errors import NotFoundError
from control_room.ledger import verify
from control_room.room import retention
from control_room.room.layout import Room

DAY = 86400
NOW = time.time()


def age(path: Path, days: float) -> None:
    """Set the mtime of ``path`` and everything under it to ``days`` ago."""
    when = NOW - days * DAY
    for p in [path, *(path.rglob("*") if path.is_dir() else [])]:
        os.utime(p, (when, when))


def finished(room: Room, tid: str, state: str, days: float, *, archive_days: float | None = None) -> None:
    """A task in ``state`` with a results folder (3000 bytes, and run-1/ of 100 bytes) and an
    outbox snapshot, all last changed ``days`` ago (run-1/ ``archive_days`` ago if given)."""
    path = room.state_dir(state) / f"{tid}.json"
    path.write_text(json.dumps(task(tid)))
    res = room.swarm / "results" / tid
    (res / "run-1").mkdir(parents=True)
    (res / "report.md").write_text("r" * 3000)
    (res / "run-1" / "report.md").write_text("a" * 100)
    snap = room.swarm / "outbox" / f"{tid}.md"
    snap.write_text("snap")
    for p in (path, res, snap):
        age(p, days)
    if archive_days is not None:
        age(res / "run-1", archive_days)


def gone(room: Room, items: list[retention.Item]) -> list[tuple[str, str]]:
    return [(i.where(room), i.why.split(",")[0]) for i in items]


def test_old_finished_results_go_young_ones_stay(room: Room) -> None:
    finished(room, "old-done", "done", 40)
    finished(room, "old-cancelled", "cancelled", 31)
    finished(room, "young-done", "done", 29)
    items = retention.plan(room, now=NOW)
    assert gone(room, items) == [
        ("swarm/results/old-cancelled/", "cancelled"),
        ("swarm/outbox/old-cancelled.md", "cancelled"),
        ("swarm/results/old-done/", "done"),
        ("swarm/outbox/old-done.md", "done"),
    ]
    assert items[2].why == "done, last change 40 days ago, past retention_days 30"
    assert retention.clean(room, items) == items
    assert sorted(p.name for p in (room.swarm / "results").iterdir()) == ["young-done"]
    assert sorted(p.name for p in (room.swarm / "outbox").iterdir()) == ["young-done.md"]
    # the task files are records: they stay
    assert (room.state_dir("done") / "old-done.json").exists()
    assert (room.state_dir("cancelled") / "old-cancelled.json").exists()


def test_an_old_archive_of_a_young_finished_task_goes_alone(room: Room) -> None:
    finished(room, "t1", "done", 2, archive_days=45)
    items = retention.plan(room, now=NOW)
    assert [(i.where(room), i.kind, i.size) for i in items] == [("swarm/results/t1/run-1/", "archive", 100)]
    retention.clean(room, items)
    assert sorted(p.name for p in (room.swarm / "results" / "t1").iterdir()) == ["report.md"]
    # removing the archive does not make the task look younger or older: nothing more goes
    assert retention.plan(room, now=NOW) == []


@pytest.mark.parametrize("state", ["queue", "running", "parked"])
def test_a_queued_running_or_parked_task_never_loses_anything(
    room: Room, state: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    finished(room, "t1", state, 400, archive_days=400)
    set_gate(room, "min_free_gb", "1000000")
    monkeypatch.setattr(retention, "disk_free", lambda _p: 0)
    assert retention.plan(room, now=NOW) == []


def test_a_pinned_task_never_loses_anything(room: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    finished(room, "t1", "done", 400, archive_days=400)
    assert retention.pin(room, "t1") is True
    assert retention.pin(room, "t1") is False
    set_gate(room, "min_free_gb", "1000000")
    monkeypatch.setattr(retention, "disk_free", lambda _p: 0)
    assert retention.plan(room, now=NOW) == []
    assert retention.unpin(room, "t1") is True
    assert retention.unpin(room, "t1") is False
    assert [i.where(room) for i in retention.plan(room, now=NOW)] == [
        "swarm/results/t1/",
        "swarm/outbox/t1.md",
    ]
    assert [e.task for e in entries(room, "pin")] == ["t1"]
    assert [e.task for e in entries(room, "unpin")] == ["t1"]


def test_low_disk_takes_the_oldest_finished_first_until_there_is_enough(
    room: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    for tid, days in (("a", 3), ("b", 1), ("c", 2)):
        finished(room, tid, "done", days)
    finished(room, "p", "parked", 50)
    finished(room, "q", "queue", 60)
    set_gate(room, "min_free_gb", "1")
    # 4 KiB short of 1 GiB: the oldest task's 3,104 + 4 bytes are not enough, two tasks' are
    monkeypatch.setattr(retention, "disk_free", lambda _p: retention.GIB - 4096)
    items = retention.plan(room, now=NOW)
    assert [i.where(room) for i in items] == [
        "swarm/results/a/",
        "swarm/outbox/a.md",
        "swarm/results/c/",
        "swarm/outbox/c.md",
    ]
    assert items[0].why.startswith("done, oldest first while the disk has 1.0 GiB free, under min_free_gb 1")
    # with enough free, nothing goes; min_free_gb 0 is off
    monkeypatch.setattr(retention, "disk_free", lambda _p: retention.GIB)
    assert retention.plan(room, now=NOW) == []
    set_gate(room, "min_free_gb", "0")
    monkeypatch.setattr(retention, "disk_free", lambda _p: 0)
    assert retention.plan(room, now=NOW) == []


def test_retention_days_zero_removes_nothing_by_age(room: Room) -> None:
    finished(room, "t1", "done", 4000, archive_days=4000)
    set_gate(room, "retention_days", "0")
    set_gate(room, "min_free_gb", "0")
    assert retention.plan(room, now=NOW) == []


def test_each_removal_writes_one_ledger_line_and_the_ledger_verifies(room: Room) -> None:
    finished(room, "t1", "rejected", 40)
    removed = retention.clean(room, retention.plan(room, now=NOW))
    why = "rejected, last change 40 days ago, past retention_days 30"
    assert [e.detail for e in entries(room, "cleanup")] == [
        f"swarm/results/t1/ (results folder, 3.0 KiB): {why}",
        f"swarm/outbox/t1.md (outbox snapshot, 4 B): {why}",
    ]
    assert [e.task for e in entries(room, "cleanup")] == ["t1", "t1"]
    assert retention.summary(removed, "removed") == "removed 1 results folder, 1 outbox snapshot, 3.0 KiB"
    assert verify.verify(room.ledger).ok


def test_a_task_retried_after_the_plan_keeps_its_results(room: Room) -> None:
    finished(room, "t1", "done", 40)
    items = retention.plan(room, now=NOW)
    os.rename(room.state_dir("done") / "t1.json", room.state_dir("queue") / "t1.json")
    assert retention.clean(room, items) == []
    assert (room.swarm / "results" / "t1" / "report.md").exists()
    assert entries(room, "cleanup") == []


def test_pin_of_an_unknown_task_is_not_found(room: Room) -> None:
    with pytest.raises(NotFoundError) as err:
        retention.pin(room, "nope")
    assert str(err.value) == f"no task nope in {room.swarm}"
    with pytest.raises(NotFoundError):
        retention.unpin(room, "nope")
    assert not room.pins.exists()


def test_the_pin_list_keeps_a_persons_comments(room: Room) -> None:
    finished(room, "t1", "done", 1)
    finished(room, "t2", "done", 1)
    room.pins.write_text("# mine\nt2  # the good run\n")
    assert retention.pinned(room) == {"t2"}
    retention.pin(room, "t1")
    retention.unpin(room, "t2")
    assert room.pins.read_text() == "# mine\nt1\n"


@pytest.mark.parametrize(
    ("n", "text"),
    [(0, "0 B"), (1023, "1023 B"), (3000, "2.9 KiB"), (12 * 2**20, "12.0 MiB"), (3 * 2**30, "3.0 GiB")],
)
def test_size_text(n: int, text: str) -> None:
    assert retention.size_text(n) == text


def worktree(room: Room, name: str, days: float, size: int) -> retention.Item:
    """A worktree candidate as dispatch/merge/sweep.py hands it over: ``why`` says what it is."""
    path = room.cr / "worktrees" / name
    return retention.Item(path, "worktree", "", "", size, NOW - days * DAY, f"{name} has no task left")


def test_worktrees_go_by_the_same_rules_interleaved_with_results_by_age(
    room: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    old, young = worktree(room, "route-old", 40, 5000), worktree(room, "route-young", 2.5, 7000)
    finished(room, "a", "done", 3)
    finished(room, "b", "done", 1)
    items = retention.plan(room, now=NOW, worktrees=[old, young])
    assert [(i.where(room), i.why) for i in items] == [
        (
            "control-room/worktrees/route-old/",
            "route-old has no task left, last change 40 days ago, past retention_days 30",
        )
    ]
    # low disk: oldest first, worktrees and finished tasks' results alike, until there is enough
    set_gate(room, "min_free_gb", "1")
    monkeypatch.setattr(retention, "disk_free", lambda _p: retention.GIB - 5000 - 3104 - 7000 - 1)
    items = retention.plan(room, now=NOW, worktrees=[old, young])
    assert [i.where(room) for i in items] == [
        "control-room/worktrees/route-old/",  # by age
        "swarm/results/a/",
        "swarm/outbox/a.md",
        "control-room/worktrees/route-young/",
        "swarm/results/b/",
        "swarm/outbox/b.md",
    ]
    assert items[3].why == (
        "route-young has no task left, oldest first while the disk has 1.0 GiB free, under min_free_gb 1"
    )
    assert retention.summary(items, "would remove") == (
        "would remove 2 results folders, 2 outbox snapshots, 2 worktrees, 17.8 KiB"
    )
    # clean() leaves worktrees to dispatch/merge/sweep.py: it never removes one itself
    assert retention.clean(room, [old]) == []


def test_due_says_why_something_would_go(room: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    assert retention.due(room, NOW - 31 * DAY, NOW) == "last change 31 days ago, past retention_days 30"
    assert retention.due(room, NOW - 29 * DAY, NOW) is None
    set_gate(room, "min_free_gb", "2")
    monkeypatch.setattr(retention, "disk_free", lambda _p: retention.GIB)
    assert retention.due(room, NOW, NOW) == "the disk has 1.0 GiB free, under min_free_gb 2"


def test_temp_files_a_crash_left_go_once_an_hour_old_and_only_ours(room: Room) -> None:
    # a write killed between its temp file and the rename leaves `.tmp-<12 hex>` beside the file
    old, young = NOW - 2 * 3600, NOW - 60
    places = {
        "control-room/.tmp-0123456789ab": old,
        "swarm/results/t1/.tmp-aaaaaaaaaaaa": old,
        "swarm/queue/.tmp-bbbbbbbbbbbb": young,  # a write that may still be under way
        "control-room/.tmp-not-ours": old,  # not control-room's name
        "src/.tmp-cccccccccccc": old,  # an agent's work dir (the room's own here): never looked at
    }
    for rel, when in places.items():
        path = room.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("half a file")
        os.utime(path, (when, when))
    items = [i for i in retention.plan(room, now=NOW) if i.kind == "temp"]
    assert [(i.where(room), i.why) for i in items] == [
        ("control-room/.tmp-0123456789ab", "left by a write that never finished, 2 hours ago"),
        ("swarm/results/t1/.tmp-aaaaaaaaaaaa", "left by a write that never finished, 2 hours ago"),
    ]
    assert retention.clean(room, items) == items
    left = {rel for rel in places if (room.root / rel).exists()}
    assert left == {"swarm/queue/.tmp-bbbbbbbbbbbb", "control-room/.tmp-not-ours", "src/.tmp-cccccccccccc"}
    assert [e.detail for e in entries(room, "cleanup")] == [
        "control-room/.tmp-0123456789ab (leftover temp file, 11 B): left by a write that never finished, "
        "2 hours ago",
        "swarm/results/t1/.tmp-aaaaaaaaaaaa (leftover temp file, 11 B): left by a write that never "
        "finished, 2 hours ago",
    ]
    assert retention.summary(items, "removed") == "removed 2 leftover temp files, 22 B"
