"""CONTROL.md `notify:`: a real notifier program is told, once per event, when a person is
needed (a park, a gate, STOP, 80% of the budget), at the edge of the command that caused it; a
failing notifier is logged and changes nothing else."""

from __future__ import annotations

import json
from pathlib import Path

from support import FAIL, FAKES, PY, entries, queue, set_gate

from control_room import errors
from control_room.room.layout import Room


def told(path: Path) -> list[dict[str, str]]:
    return [json.loads(ln) for ln in path.read_text().splitlines()] if path.exists() else []


def notifier(room: Room, tmp_path: Path, *extra: str) -> Path:
    out = tmp_path / "events.jsonl"
    set_gate(room, "notify", json.dumps([PY, str(FAKES / "notifier.py"), str(out), *extra]))
    return out


def test_a_park_is_told_once_with_what_a_person_needs(cr, room: Room, tmp_path: Path) -> None:
    out = notifier(room, tmp_path)
    set_gate(room, "max_rounds", "1")
    queue(room, "t1", validator=FAIL)
    assert cr("cycle").returncode == errors.FAILED
    (event,) = told(out)
    park = entries(room, "park")[0]
    assert {k: event[k] for k in ("id", "event", "task", "room")} == {
        "id": park.id, "event": "park", "task": "t1", "room": str(room.root)}  # fmt: skip
    assert event["why"].startswith("a task was parked: a person decides")
    assert cr("status").returncode == 0 and cr("cycle").returncode == 0
    assert len(told(out)) == 1  # once per event
    (line,) = entries(room, "notify")
    assert (line.outcome, line.detail) == ("sent", f"{park.id} (park)")


def test_stop_is_told_once_per_stop_file(cr, room: Room, tmp_path: Path) -> None:
    out = notifier(room, tmp_path)
    (room.root / "STOP").write_text("made by hand\n")  # not through `control-room stop`
    assert cr("cycle").returncode == errors.STOPPED
    assert cr("cycle").returncode == errors.STOPPED
    (event,) = told(out)
    assert (event["event"], event["detail"]) == ("stop", "made by hand")
    assert cr("resume").returncode == 0
    assert cr("stop", "--reason", "lunch").returncode == 0
    assert [e["event"] for e in told(out)] == ["stop", "stop"]


def test_a_gate_waiting_and_the_budget_passing_80_percent_are_told(cr, room: Room, tmp_path: Path) -> None:
    out = notifier(room, tmp_path)
    queue(room, "gpu-run", gate=["gpu"])
    assert cr("cycle").returncode == errors.OK
    assert [e["event"] for e in told(out)] == ["gpu-approval-needed"]
    set_gate(room, "daily_budget_usd", "0.1")
    from control_room import ledger  # the probe costs nothing: a run's spend, written as a cycle does
    from control_room.ledger import events

    ledger.append(room.ledger, events.RESULT, task="x", outcome="pass", cost_usd=0.085, detail="{}")
    assert cr("status").returncode == 0
    budget = told(out)[-1]
    assert (budget["event"], budget["detail"]) == ("budget", "$0.09 spent today of the $0.10 daily budget")
    assert cr("status").returncode == 0 and len(told(out)) == 2


def test_a_failing_notifier_is_logged_and_changes_nothing_else(cr, room: Room, tmp_path: Path) -> None:
    out = notifier(room, tmp_path, "--fail")
    set_gate(room, "max_rounds", "1")
    queue(room, "t1", validator=FAIL)
    done = cr("cycle")
    assert (done.returncode, done.stderr) == (errors.FAILED, "")
    assert len(told(out)) == 1
    (line,) = entries(room, "notify")
    assert line.outcome == "failed" and line.detail.endswith(
        "(park): the notifier exited 3: the webhook answered 500"
    )
    assert cr("cycle").returncode == 0 and len(told(out)) == 1  # tried once, never again


def test_events_from_before_notify_was_set_are_not_sent(cr, room: Room, tmp_path: Path) -> None:
    set_gate(room, "max_rounds", "1")
    queue(room, "old", validator=FAIL)
    assert cr("cycle").returncode == errors.FAILED
    out = notifier(room, tmp_path)
    assert cr("status").returncode == 0 and told(out) == []


def test_a_missing_notifier_is_logged(cr, room: Room, tmp_path: Path) -> None:
    set_gate(room, "notify", "no-such-notifier --now")
    (room.root / "STOP").write_text("")
    assert cr("cycle").returncode == errors.STOPPED
    (line,) = entries(room, "notify")
    assert line.outcome == "failed" and "no-such-notifier: command not found on PATH" in line.detail
