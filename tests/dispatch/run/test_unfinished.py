"""dispatch.run.unfinished: a run written down whose cycle died before the move is finished
from its results at recovery, never run again (tests/reliability/test_crash_injection.py kills
the installed command there; here the crash is an exception the cycle does not catch)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from support import entries, queue, set_gate, task, task_json, where

from control_room import crashpoint
from control_room.dispatch.round import claims
from control_room.dispatch.run import cycle, unfinished
from control_room.knowledge import routes
from control_room.room import settings as settings_file
from control_room.room import swarm
from control_room.room.layout import Room


def put(room: Room, state: str, tid: str, **fields: object) -> None:
    swarm.task_file(room, state, tid).write_text(swarm.dumps({**task(tid), **fields}))


class Crash(BaseException):
    """The process dying at a crash point (nothing in a cycle catches it)."""


def hit_at(point: str) -> Callable[[str], None]:
    def hit(name: str) -> None:
        if name == point:
            raise Crash(name)

    return hit


def style_lens(room: Room) -> None:
    """The lens ``style``, which a task may name to be reviewed."""
    (room.root / "agents" / "lenses" / "style.md").write_text(
        "---\nsees: [diff]\nmax_cost_usd: 0.1\nwall_clock_s: 60\n---\n# Lens: style\n"
    )


def ran(tmp_path: Path) -> list[str]:
    runs = tmp_path / "runs"
    return runs.read_text().split() if runs.exists() else []


def command(tmp_path: Path) -> list[str]:
    return [sys.executable, "-c", f"open({str(tmp_path / 'runs')!r}, 'a').write('ran ')"]


def crashed_after_its_result_line(room: Room, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as m, pytest.raises(Crash):
        m.setattr(crashpoint, "hit", hit_at("result.logged"))
        cycle.cycle(room)
    assert where(room, "t1") == ["running"] and len(entries(room, "result")) == 1


def test_a_pass_written_down_is_finished_not_run_again(
    room: Room, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    queue(room, "t1", command=command(tmp_path))
    crashed_after_its_result_line(room, tmp_path, monkeypatch)
    said = cycle.recover(room, settings_file.load(room), mine=None)
    assert said == [
        "recovered t1: its slot 0 is free, so the cycle that held it is gone; its run was written down "
        "already: passed: t1 (round 1, written down before its cycle died)"
    ]
    assert where(room, "t1") == ["done"] and not claims.claim_path(room, "t1").exists()
    assert ran(tmp_path) == ["ran"]
    assert [e.outcome for e in entries(room, "result")] == ["pass"]
    (line,) = entries(room, "recover")
    assert line.detail.endswith(
        "written down (pass) before the cycle died: finished from its results, not run again"
    )
    assert cycle.cycle(room).message == "nothing to do: the queue is empty"


def test_a_failure_written_down_counts_its_round_once(
    room: Room, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    queue(room, "t1", command=command(tmp_path), validator=[sys.executable, "-c", "raise SystemExit(1)"])
    crashed_after_its_result_line(room, tmp_path, monkeypatch)
    cycle.recover(room, settings_file.load(room), mine=None)
    assert where(room, "t1") == ["queue"]
    back = task_json(room, "queue", "t1")
    assert back["rounds"] == 1 and back["last_failure"].startswith("validator exited 1")
    assert "dispatcher_deaths" not in back  # the cycle died after the round was judged: not its fault


def test_only_a_result_line_of_this_claim_and_round_counts(room: Room, tmp_path: Path) -> None:
    from control_room import ledger
    from control_room.ledger import events
    from control_room.ledger.result import RunResult

    task = {"id": "t1", "rounds": 1}
    claim = {"started": "2000-01-01T00:00:00Z"}
    assert unfinished.written_down(room, task, None) is None  # no claim file: no run
    ledger.append(room.ledger, events.RESULT, task="t1", outcome="fail", detail=RunResult(round=1).detail())
    assert unfinished.written_down(room, task, claim) is None  # the round before
    ledger.append(room.ledger, events.CLAIM, task="t1", detail="round 2")
    ledger.append(room.ledger, events.RESULT, task="t1", outcome="pass", detail=RunResult(round=2).detail())
    found = unfinished.written_down(room, task, claim)
    assert found is not None and found.outcome == "pass"
    assert unfinished.written_down(room, task, {"started": "2999-01-01T00:00:00Z"}) is None  # older
    ledger.append(room.ledger, events.CLAIM, task="t1", detail="round 2 again")
    assert unfinished.written_down(room, task, claim) is None  # claimed since: that run is not written


def test_a_pass_moved_before_its_reviews_were_queued_gets_them_at_recovery(
    room: Room, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    style_lens(room)
    queue(room, "t1", command=command(tmp_path), review=["style"])
    with monkeypatch.context() as m, pytest.raises(Crash):
        m.setattr(crashpoint, "hit", hit_at("passed.moved"))
        cycle.cycle(room)
    assert where(room, "t1") == ["passed"] and claims.claim_path(room, "t1").exists()
    assert where(room, "review-style-t1") == []  # its reviews were never queued
    said = cycle.recover(room, settings_file.load(room), mine=None)
    assert said == [
        "recovered t1: its slot 0 is free, so the cycle that held it is gone; its cycle died after it "
        "moved the task to swarm/passed/: its reviews queued: review-style-t1"
    ]
    assert where(room, "review-style-t1") == ["queue"] and not claims.claim_path(room, "t1").exists()
    assert task_json(room, "passed", "t1")["review_tasks"] == ["review-style-t1"]
    assert cycle.recover(room, settings_file.load(room), mine=None) == []  # never twice
    assert ran(tmp_path) == ["ran"]


def test_a_failed_round_moved_before_its_reviews_and_row_gets_them_at_recovery(
    room: Room, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    style_lens(room)
    set_gate(room, "review_when", "always")
    routes.add(room, "r1", "the route")
    fails = [sys.executable, "-c", "raise SystemExit(1)"]
    queue(room, "t1", command=command(tmp_path), validator=fails, review=["style"], route="r1")
    with monkeypatch.context() as m, pytest.raises(Crash):
        m.setattr(crashpoint, "hit", hit_at("failed.moved"))
        cycle.cycle(room)
    assert where(room, "t1") == ["queue"] and claims.claim_path(room, "t1").exists()
    assert where(room, "review-style-t1") == []  # the round's reviews were never queued
    assert _row(room)["attempts"] == "0"  # nor its run counted in ROUTES.md
    said = cycle.recover(room, settings_file.load(room), mine=None)
    assert said == [
        "recovered t1: its slot 0 is free, so the cycle that held it is gone; its cycle died after it "
        "moved the task to swarm/queue/: the reviews of its failed round queued: review-style-t1; "
        "ROUTES.md recounted from the ledger"
    ]
    assert where(room, "review-style-t1") == ["queue"] and not claims.claim_path(room, "t1").exists()
    back = task_json(room, "queue", "t1")
    assert back["review_tasks"] == ["review-style-t1"] and back["deps"] == ["review-style-t1"]
    assert back["rounds"] == 1
    assert _row(room)["attempts"] == "1" and _row(room)["last_result"].startswith("fail t1 ")
    assert cycle.recover(room, settings_file.load(room), mine=None) == []  # never twice
    assert [e.outcome for e in entries(room, "result")] == ["fail"] and ran(tmp_path) == ["ran"]


def test_a_failed_round_whose_reviews_were_queued_is_only_let_go(
    room: Room, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    style_lens(room)
    set_gate(room, "review_when", "always")
    fails = [sys.executable, "-c", "raise SystemExit(1)"]
    queue(room, "t1", command=command(tmp_path), validator=fails, review=["style"])
    with monkeypatch.context() as m, pytest.raises(Crash):  # after all but the claim's removal
        m.setattr(claims, "release", lambda _room, tid: _crash(tid))
        cycle.cycle(room)
    assert where(room, "review-style-t1") == ["queue"] and claims.claim_path(room, "t1").exists()
    assert cycle.recover(room, settings_file.load(room), mine=None) == []  # nothing left to do
    assert not claims.claim_path(room, "t1").exists()
    assert where(room, "review-style-t1") == ["queue"] and len(entries(room, "review-queued")) == 1


def test_a_requeue_whose_claim_was_left_queues_nothing(room: Room) -> None:
    style_lens(room)
    set_gate(room, "review_when", "always")
    queue(room, "t1", review=["style"], rounds=1)  # a failed round of an earlier claim
    claim = {"host": "gone", "pid": 1, "slot": 0, "started": "2000-01-01T00:00:00Z"}
    from control_room import ledger
    from control_room.ledger import events
    from control_room.ledger.result import RunResult

    ledger.append(room.ledger, events.RESULT, task="t1", outcome="fail", detail=RunResult(round=1).detail())
    ledger.append(room.ledger, events.CLAIM, task="t1", detail="round 2")  # then a claim, put back
    assert unfinished.follow_up(room, settings_file.load(room), "t1", "gone", claim) is None
    assert where(room, "review-style-t1") == []


def _crash(tid: str) -> None:
    raise Crash(f"release {tid}")


def _row(room: Room) -> dict[str, str]:
    (row,) = [r for r in routes.rows(room) if r["route"] == "r1"]
    return {k: str(v) for k, v in row.items()}


def test_a_claim_whose_cycle_still_runs_is_left_to_it(room: Room) -> None:
    queue(room, "t1")
    claims.write_claim(room, "t1", {"host": claims.host(room), "pid": os.getpid(), "slot": 0})
    swarm.move(room, "t1", "queue", "done")  # its cycle, alive, between the move and the claim's end
    taken = claims.take_slot(room, 1)  # its slot, held (this process is its cycle)
    assert taken is not None and taken[0] == 0
    try:
        assert cycle.recover(room, settings_file.load(room), mine=None) == []
    finally:
        os.close(taken[1])
    assert claims.claim_path(room, "t1").exists()


def test_a_review_moved_before_its_verdict_was_recorded_settles_its_task_at_recovery(room: Room) -> None:
    # its cycle moved review-style-t1 to done/ and died before it recorded the verdict
    put(room, "passed", "t1", route="r1", review_tasks=["review-style-t1"])
    put(
        room,
        "done",
        "review-style-t1",
        reviews="t1",
        lens="style",
        route="r1",
        passed_at="2026-12-07T00:00:00Z",
    )
    folder = room.swarm / "results" / "review-style-t1"
    folder.mkdir(parents=True)
    (folder / "report.md").write_text(
        "DECISION: accept\nWHY: clean\nEVIDENCE:\n- INFERRED: nothing wrong\nMISSING: none\n"
        "NEXT COMMAND: control-room status\nSTOP RULE: stop\n"
    )
    (folder / "meta.json").write_text('{"adapter": "probe"}')
    said = unfinished.follow_up(room, settings_file.load(room), "review-style-t1", "its cycle is gone")
    assert said == (
        "recovered review-style-t1: its cycle is gone; its cycle died after it moved the task to "
        "swarm/done/: t1 accepted (its one review accepts); done"
    )
    assert task_json(room, "done", "review-style-t1")["verdict"] == "accept"
    assert where(room, "t1") == ["done"] and task_json(room, "done", "t1")["review_verdict"] == "accept"
    assert [(e.outcome, e.detail) for e in entries(room, "review")] == [
        ("accept", "style (review-style-t1): clean"), ("accepted", "its one review accepts")]  # fmt: skip
    assert unfinished.follow_up(room, settings_file.load(room), "review-style-t1", "again") is None
