"""control_room.views.status: the room on one screen, read from listings, caches and the end of
the ledger; a broken CONTROL.md or ledger is shown, not fatal."""

from __future__ import annotations

from support import queue

from control_room.dispatch.person import brake
from control_room.dispatch.run import cycle
from control_room.ledger import result
from control_room.room.layout import Room
from control_room.views import status


def test_gather_counts_what_is_on_disk(room: Room) -> None:
    queue(room, "t1")
    queue(room, "t2")
    cycle.cycle(room)
    s = status.gather(room, last=2)
    assert s["tasks"] == {
        "queue": 1,
        "running": 0,
        "passed": 0,
        "to-test": 0,
        "done": 1,
        "parked": 0,
        "rejected": 0,
        "cancelled": 0,
    }
    assert (s["stop"], s["control_error"], s["ledger_error"], s["daily_budget_usd"]) == (
        None,
        None,
        None,
        10.0,
    )
    assert [e["event"] for e in s["last"]] == ["claim", "result"]
    assert s["findings"] == 0 and s["held"] == []


def test_a_broken_control_file_and_a_missing_ledger_are_shown(room: Room) -> None:
    brake.stop(room, "lunch")
    room.control.write_text("---\nmax_parallel: two\n---\n")
    room.ledger.unlink()
    s = status.gather(room)
    assert s["stop"].endswith("reason: lunch")
    assert s["control_error"] == f"{room.control}: max_parallel must be a positive integer (got 'two')"
    assert s["ledger_error"] == f"{room.ledger} is missing"
    text = status.render(s)
    assert f"gate      BROKEN: {s['control_error']}" in text.splitlines()
    assert text.splitlines()[1].startswith("STOP      YES - every cycle halts: STOP created ")


def test_a_result_line_reads_as_words_and_long_lines_are_cut() -> None:
    detail = result.RunResult(
        decision="made it faster", round=2, exit=0, report="ok", validator="passed"
    ).detail()
    entry = {"time": "2026-12-01T10:00:00Z", "event": "result", "task": "t1", "route": "r1",
             "adapter": "probe", "outcome": "pass", "cost_usd": "0.5", "detail": detail}  # fmt: skip
    assert status.format_entry(entry) == (
        "2026-12-01 10:00:00  result  t1  r1  probe  pass  $0.5  "
        "round: 2, exit: 0, seconds: 0.0, report: ok, validator: passed, decision: made it faster"
    )
    long = status.format_entry({**entry, "event": "note", "detail": "x" * 300})
    assert len(long) == 160 and long.endswith("...")
