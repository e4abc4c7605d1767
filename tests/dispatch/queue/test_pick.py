"""dispatch.queue.pick: the next ready task, re-read from its file; adapter and budget holds."""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from pathlib import Path

import pytest
from support import events, git, order, queue

from control_room import errors
from control_room.dispatch.queue.pick import pick
from control_room.dispatch.round import claims
from control_room.dispatch.run import cycle
from control_room.dispatch.worktrees import worktree
from control_room.knowledge import routes
from control_room.room import settings as settings_file
from control_room.room import swarm
from control_room.room.layout import Room

PY = sys.executable


def test_a_stale_index_never_runs_a_task_its_file_no_longer_allows(room: Room) -> None:
    queue(room, "dep")
    path = queue(room, "t", priority=9)
    assert order(room)[0] == "t"
    task = json.loads(path.read_text())
    task["deps"] = ["dep"]  # now it must wait for dep
    with open(path, "r+") as f:
        f.seek(0)
        f.write(json.dumps(task))
        f.truncate()
    result = cycle.cycle(room)
    assert (result.code, result.task_id) == (errors.PASSED, "dep")


def test_a_missing_adapter_holds_its_task_and_the_next_one_runs(
    room: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(Path(PY).parent))  # python, but no claude
    queue(room, "needs-claude", adapter="claude", priority=5, command=None)
    queue(room, "plain")
    first = cycle.cycle(room)
    assert (first.code, first.task_id) == (errors.PASSED, "plain")
    second = cycle.cycle(room)
    assert second.code == errors.ADAPTER_MISSING
    assert swarm.locate(room, "needs-claude")[0] == "queue"
    assert events(room.ledger).count("adapter-missing") == 1  # logged once a day, not per cycle


def test_running_tasks_reserve_their_cost_against_the_budget(room: Room) -> None:
    room.control.write_text(
        room.control.read_text().replace("daily_budget_usd: 10.0", "daily_budget_usd: 1.0")
    )
    queue(room, "other", max_cost_usd=0.6)
    running = queue(room, "busy", max_cost_usd=0.6)
    os.rename(running, room.state_dir("running") / "busy.json")
    claims.write_claim(room, "busy", {"pid": os.getpid(), "host": claims.host(room), "slot": 7,
                                      "deadline": time.time() + 600})  # fmt: skip
    held = os.open(room.cr / ".slot-7.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(held, fcntl.LOCK_EX)  # the cycle running "busy" is alive and holds its slot
    try:
        result = cycle.cycle(room)
    finally:
        os.close(held)
    assert result.code == errors.OK
    assert "budget-hold" in events(room.ledger)


def test_nothing_to_do_names_the_first_waiting_tasks_and_why(room: Room) -> None:
    queue(room, "base", gate=["gpu"], priority=9)
    for k in range(4):
        queue(room, f"w{k}", deps=["base"], priority=5 - k)
    result = cycle.cycle(room)
    assert (result.code, result.message) == (
        errors.OK,
        "nothing to do: 5 queued tasks not ready: base waits for gate gpu: `control-room approve base`; "
        "w0 waits for dep base (queue); w1 waits for dep base (queue); and 2 more "
        "(control-room task list --state queue)",
    )


def test_a_task_whose_dep_was_rejected_since_is_rejected_at_the_pick(room: Room) -> None:
    queue(room, "base", gate=["gpu"])
    queue(room, "after", deps=["base"])
    assert sorted(order(room)) == ["after", "base"]  # both admitted
    os.rename(room.state_dir("queue") / "base.json", room.state_dir("rejected") / "base.json")
    result = cycle.cycle(room)
    assert (result.code, result.message) == (errors.OK, "nothing to do: 1 rejected (see swarm/rejected/)")
    reason = (room.state_dir("rejected") / "after.json.reason").read_text().splitlines()
    assert reason[2] == "- deps names base, which is in swarm/rejected/: it could never be ready"


def test_a_queue_whose_every_file_the_scan_rejects_is_not_called_empty(room: Room) -> None:
    (room.state_dir("queue") / "notes.txt").write_text("not a task")
    (room.state_dir("queue") / "half.json").write_text('{"objective": "half written')
    result = cycle.cycle(room)
    assert (result.code, result.message) == (errors.OK, "nothing to do: 2 rejected (see swarm/rejected/)")
    again = cycle.cycle(room)
    assert (again.code, again.message) == (errors.OK, "nothing to do: the queue is empty")


def test_a_task_whose_worktree_a_person_left_mid_rebase_waits_unclaimed(room: Room, repo: Path) -> None:
    routes.add(room, "r1", "a route")
    tree = worktree.workdir(room, settings_file.load(room), {"id": "t0", "route": "r1"})
    rebase = Path(git(tree, "rev-parse", "--absolute-git-dir")) / "rebase-merge"
    rebase.mkdir()
    queue(room, "t1", route="r1")
    result = cycle.cycle(room)
    assert (result.code, result.message) == (
        errors.OK,
        "nothing to do: 1 queued task not ready: t1 waits for its worktree route-r1: in the middle of a "
        "rebase; finish or abort it there",
    )
    assert "claim" not in events(room.ledger)
    rebase.rmdir()  # the person aborted it
    assert cycle.cycle(room).task_id == "t1"


def test_a_pick_never_lists_the_finished_tasks(room: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    # done/ grows with every task the room ran; a pick (under the claim lock) must not list it
    for k in range(30):
        (room.state_dir("done") / f"d{k}.json").write_text("{}")
    queue(room, "next")
    listed: list[str] = []
    real = os.listdir

    def listdir(path: object = ".") -> list[str]:
        listed.append(os.path.basename(str(path)))
        return real(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "listdir", listdir)
    picked = pick(room, settings_file.load(room))
    assert not isinstance(picked, cycle.CycleResult) and picked.task["id"] == "next"
    assert "done" not in listed, listed


# The pick's slow half before the claim lock (``ahead``), its candidates checked again under it


def test_candidates_found_before_the_lock_are_taken_in_order_once_still_queued_and_ready(room: Room) -> None:
    from control_room.dispatch.queue.pick import ahead

    for k in range(5):
        queue(room, f"t{k}", priority=9 - k, owns=["a"] if k == 1 else None)
    settings = settings_file.load(room)
    found = ahead(room, settings, 3)
    assert [t.id for t in found.found] == ["t0", "t1", "t2"]
    swarm.move(room, "t0", "queue", "running")  # another cycle claimed t0 meanwhile
    queue(room, "busy", owns=["a/x.py"])
    swarm.move(room, "busy", "queue", "running")  # and a task owning a path under t1's runs now
    picked = pick(room, settings, ahead=found)
    assert not isinstance(picked, cycle.CycleResult) and picked.task["id"] == "t2"


def test_no_candidate_left_is_the_whole_walk_under_the_lock(room: Room) -> None:
    from control_room.dispatch.queue.pick import ahead

    queue(room, "t0")
    queue(room, "t1", priority=-1)
    settings = settings_file.load(room)
    found = ahead(room, settings, 1)
    assert [t.id for t in found.found] == ["t0"]
    swarm.move(room, "t0", "queue", "running")
    picked = pick(room, settings, ahead=found)
    assert not isinstance(picked, cycle.CycleResult) and picked.task["id"] == "t1"
    swarm.move(room, "t1", "queue", "running")
    found = ahead(room, settings, 1)
    assert found.found == []
    nothing = pick(room, settings, ahead=found)
    assert isinstance(nothing, cycle.CycleResult)
    assert (nothing.code, nothing.message) == (errors.OK, "nothing to do: the queue is empty")


def test_a_hold_to_log_ahead_of_the_candidates_leaves_the_pick_to_the_lock(room: Room) -> None:
    from control_room.dispatch.queue.pick import ahead

    queue(room, "t0", gate=["gpu"], priority=5)
    queue(room, "t1")
    queue(room, "t2", priority=-1)
    settings = settings_file.load(room)
    assert ahead(room, settings, 3).found == []  # its hold is not logged today: the locked pick logs it
    picked = pick(room, settings, ahead=ahead(room, settings, 3))
    assert not isinstance(picked, cycle.CycleResult) and picked.task["id"] == "t1"
    assert events(room.ledger)[-1] == "gpu-approval-needed"
    # t0's hold logged: passed by now; t1 picked, so taken for claimed (its cycle moves it next)
    assert [t.id for t in ahead(room, settings, 3).found] == ["t2"]
