"""control-room cleanup [--dry-run] [--json], task pin / unpin: through the command line, on a
real room."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from click.testing import Result
from support import entries, error, ok, queue, set_gate, snapshot, task

from control_room import errors
from control_room.room.layout import Room

Run = Callable[..., Result]
DAY = 86400


def finished(room: Room, tid: str, state: str, days: float) -> None:
    """A task in ``state`` with results (3000 bytes + run-1/ 100 bytes) and an outbox snapshot
    (4 bytes), all last changed ``days`` ago."""
    path = room.state_dir(state) / f"{tid}.json"
    path.write_text(json.dumps(task(tid)))
    res = room.swarm / "results" / tid
    (res / "run-1").mkdir(parents=True)
    (res / "report.md").write_text("r" * 3000)
    (res / "run-1" / "report.md").write_text("a" * 100)
    snap = room.swarm / "outbox" / f"{tid}.md"
    snap.write_text("snap")
    when = time.time() - days * DAY
    for p in (path, snap, res, *res.rglob("*")):
        os.utime(p, (when, when))


def files(room: Room) -> dict[Path, bytes]:
    """Every file of the room and its bytes, but derived caches (control-room/.cache/)."""
    return {p: b for p, b in snapshot(room.root).items() if room.cache not in p.parents}


def results(room: Room) -> list[str]:
    return sorted(p.name for p in (room.swarm / "results").iterdir())


def test_dry_run_lists_what_would_go_and_changes_nothing(run: Run, inside: Room) -> None:
    finished(inside, "old", "done", 40)
    finished(inside, "young", "done", 3)
    before = files(inside)
    mtimes = {p: p.stat().st_mtime_ns for p in inside.swarm.rglob("*")}
    done = run("cleanup", "--dry-run")
    ok(
        done,
        "would remove swarm/results/old/ (results folder, 3.0 KiB): done, last change 40 days ago, "
        "past retention_days 30\n"
        "would remove swarm/outbox/old.md (outbox snapshot, 4 B): done, last change 40 days ago, "
        "past retention_days 30\n"
        "would remove 1 results folder, 1 outbox snapshot, 3.0 KiB\n",
    )
    assert files(inside) == before
    assert {p: p.stat().st_mtime_ns for p in inside.swarm.rglob("*")} == mtimes  # not even touched


def test_cleanup_removes_old_finished_results_and_writes_the_ledger(run: Run, inside: Room, exe: str) -> None:
    finished(inside, "old-done", "done", 40)
    finished(inside, "old-cancelled", "cancelled", 35)
    finished(inside, "young", "done", 3)
    finished(inside, "old-parked", "parked", 400)
    finished(inside, "old-queued", "queue", 400)
    finished(inside, "old-pinned", "done", 400)
    ok(run("task", "pin", "old-pinned"), "pinned old-pinned: cleanup keeps its results\n")
    done = subprocess.run([exe, "cleanup"], capture_output=True, text=True, cwd=inside.root)
    assert (done.returncode, done.stderr) == (0, "")
    lines = done.stdout.splitlines()
    assert lines[-1] == "removed 2 results folders, 2 outbox snapshots, 6.1 KiB"
    assert [ln.split(" (")[0] for ln in lines[:-1]] == [
        "removed swarm/results/old-cancelled/",
        "removed swarm/outbox/old-cancelled.md",
        "removed swarm/results/old-done/",
        "removed swarm/outbox/old-done.md",
    ]
    assert results(inside) == ["old-parked", "old-pinned", "old-queued", "young"]
    for tid, state in (("old-done", "done"), ("old-cancelled", "cancelled")):
        assert (inside.state_dir(state) / f"{tid}.json").exists()  # the records stay
    assert [e.task for e in entries(inside, "cleanup")] == ["old-cancelled"] * 2 + ["old-done"] * 2
    verified = subprocess.run([exe, "ledger", "verify"], capture_output=True, text=True, cwd=inside.root)
    assert verified.returncode == 0, verified.stderr
    # a second run finds nothing
    ok(run("cleanup"), "removed nothing\n")


def test_a_low_disk_takes_every_eligible_task_oldest_first(run: Run, inside: Room) -> None:
    set_gate(inside, "min_free_gb", "100000000")  # more than any disk: every eligible item goes
    finished(inside, "b", "done", 2)
    finished(inside, "a", "cancelled", 5)
    finished(inside, "c", "rejected", 1)
    finished(inside, "p", "parked", 90)
    finished(inside, "q", "queue", 90)
    finished(inside, "r", "running", 90)
    finished(inside, "k", "done", 90)
    run("task", "pin", "k")
    done = run("cleanup", "--json")
    assert (done.exit_code, done.stderr) == (0, "")
    out = json.loads(done.stdout)
    assert [(i["path"], i["task"]) for i in out["items"]] == [
        ("swarm/results/a/", "a"),
        ("swarm/outbox/a.md", "a"),
        ("swarm/results/b/", "b"),
        ("swarm/outbox/b.md", "b"),
        ("swarm/results/c/", "c"),
        ("swarm/outbox/c.md", "c"),
    ]
    assert re.fullmatch(
        r"cancelled, oldest first while the disk has [\d.]+ GiB free, under min_free_gb 100000000",
        out["items"][0]["why"],
    )
    assert out["summary"] == "removed 3 results folders, 3 outbox snapshots, 9.1 KiB"
    assert out["bytes"] == 3 * 3104
    assert results(inside) == ["k", "p", "q", "r"]
    assert sorted(p.name for p in (inside.swarm / "outbox").iterdir()) == ["k.md", "p.md", "q.md", "r.md"]
    assert len(entries(inside, "cleanup")) == 6


def test_pin_and_unpin_through_the_command_line(run: Run, inside: Room) -> None:
    finished(inside, "t1", "done", 1)
    ok(run("task", "pin", "t1"), "pinned t1: cleanup keeps its results\n")
    ok(run("task", "pin", "t1"), "t1 is pinned already\n")
    assert inside.pins.read_text().splitlines()[-1] == "t1"
    ok(run("task", "unpin", "t1"), "unpinned t1\n")
    ok(run("task", "unpin", "t1"), "t1 was not pinned\n")
    assert [e.event for e in entries(inside, "pin") + entries(inside, "unpin")] == ["pin", "unpin"]


def test_pin_of_an_unknown_task_is_exit_7(run: Run, inside: Room) -> None:
    error(run("task", "pin", "nope"), 7, f"no task nope in {inside.swarm}")
    error(run("task", "unpin", "nope"), 7, f"no task nope in {inside.swarm}")
    assert not inside.pins.exists()
    assert entries(inside, "pin") == []


def test_nothing_to_clean(run: Run, inside: Room) -> None:
    ok(run("cleanup", "--dry-run"), "would remove nothing\n")
    ok(run("cleanup"), "removed nothing\n")


def test_a_broken_control_md_fails_closed(run: Run, inside: Room, tmp_path: Path) -> None:
    finished(inside, "old", "done", 40)
    set_gate(inside, "retention_days", "soon")
    error(run("cleanup"), 4, f"{inside.control}: retention_days must be an integer >= 0 (got 'soon')")
    assert results(inside) == ["old"]


def test_a_real_run_then_done_then_old_is_cleaned_to_its_record(run: Run, inside: Room) -> None:
    queue(inside, "t1")
    assert run("cycle").exit_code == errors.PASSED
    queue(inside, "t2")
    assert run("cycle").exit_code == errors.PASSED
    ok(run("done", "t1", "--by", "me"), "t1 marked Done\n")
    res = inside.swarm / "results" / "t1"
    assert (res / "meta.json").exists() and (inside.swarm / "outbox" / "t1.md").exists()
    ok(run("cleanup"), "removed nothing\n")  # young
    when = time.time() - 31 * DAY
    for p in (inside.state_dir("done") / "t1.json", inside.swarm / "outbox" / "t1.md", *res.rglob("*")):
        os.utime(p, (when, when))
    done = run("cleanup")
    assert (done.exit_code, done.stderr) == (0, "")
    assert done.stdout.splitlines()[-1].startswith("removed 1 results folder, 1 outbox snapshot, ")
    assert not res.exists() and not (inside.swarm / "outbox" / "t1.md").exists()
    assert json.loads((inside.state_dir("done") / "t1.json").read_text())["done_by"] == "me"
    assert results(inside) == ["t2"]  # the other done task is young
    verified = run("ledger", "verify")
    assert verified.exit_code == 0, verified.stderr
