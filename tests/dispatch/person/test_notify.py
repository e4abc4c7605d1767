"""dispatch.person.notify: flush sends each event once (ledger, STOP, budget), logs every try."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support import FAKES, PY, data_lines, entries, rewrite

from control_room import ledger
from control_room.dispatch.person import notify
from control_room.ledger import events
from control_room.room import settings
from control_room.room.layout import Room
from control_room.room.settings import Settings
from control_room.store import cache
from control_room.timeutil import today


@pytest.fixture
def out(tmp_path: Path) -> Path:
    return tmp_path / "events.jsonl"


def told(path: Path) -> list[dict[str, str]]:
    return [json.loads(ln) for ln in path.read_text().splitlines()] if path.exists() else []


def with_notifier(room: Room, out: Path, *extra: str, **over: object) -> Settings:
    """The room's settings with `notify:` the fake notifier (it appends each event to ``out``)."""
    return settings.load(room).replace(notify=[PY, str(FAKES / "notifier.py"), str(out), *extra], **over)


def size(room: Room) -> int:
    return room.ledger.stat().st_size


def test_without_notify_nothing_is_read_or_kept(room: Room) -> None:
    ledger.append(room.ledger, events.PARK, task="t1")
    assert notify.flush(room, settings.load(room), since=0) == []
    assert not (room.cache / "notify").exists()


def test_what_came_before_the_command_is_not_news_and_what_came_after_is_sent_once(
    room: Room, out: Path
) -> None:
    s = with_notifier(room, out)
    ledger.append(room.ledger, events.PARK, task="old")
    since = size(room)
    park = ledger.append(room.ledger, events.PARK, task="t1", route="r1", detail="after 2 failed rounds: x|y")
    ledger.append(room.ledger, events.TASK_ADD, task="t2", detail="not for a person")
    gate = ledger.append(room.ledger, events.approval_needed("GPU"), task="t3", detail="waits")
    loop = ledger.append(room.ledger, events.DEATH_LOOP, task="t4", route="r2", detail="3 alike")
    high = ledger.append(room.ledger, events.ESCALATED, task="t5", detail="both positions")
    assert notify.flush(room, s, since=since) == [park.id, gate.id, loop.id, high.id]
    assert told(out)[0] == {
        "id": park.id,
        "event": "park",
        "time": park.time,
        "task": "t1",
        "route": "r1",
        "detail": "after 2 failed rounds: x|y",  # as written, unescaped
        "why": "a task was parked: a person decides (retry, cancel, kill its route)",
        "room": str(room.root),
    }
    assert [(e["event"], e["why"]) for e in told(out)[1:]] == [
        ("gpu-approval-needed", "a task waits for a person's approval (gpu gate)"),
        ("death-loop", "a route fails the same way again and again: held until a person resumes it"),
        ("escalated", "reviews disagree and the arbiter (or a second arbitration) escalated to a person"),
    ]
    assert [(e.task, e.outcome, e.detail) for e in entries(room, "notify")] == [
        ("t1", "sent", f"{park.id} (park)"),
        ("t3", "sent", f"{gate.id} (gpu-approval-needed)"),
        ("t4", "sent", f"{loop.id} (death-loop)"),
        ("t5", "sent", f"{high.id} (escalated)"),
    ]
    assert notify.flush(room, s, since=size(room)) == []  # the checkpoint goes on from where it was
    assert len(told(out)) == 4 and len(entries(room, "notify")) == 4


def test_stop_is_told_once_per_stop_file(room: Room, out: Path) -> None:
    s = with_notifier(room, out)
    room.stop.write_text("  lunch break \n")
    st = os.stat(room.stop)
    first = f"stop-{st.st_ino}-{st.st_mtime_ns}"
    assert notify.flush(room, s, since=size(room)) == [first]
    [event] = told(out)
    assert event == {
        "id": first,
        "event": "stop",
        "time": "",
        "task": "",
        "route": "",
        "detail": "lunch break",
        "why": f"STOP exists ({room.stop}): every cycle halts until `control-room resume`",
        "room": str(room.root),
    }
    assert notify.flush(room, s, since=size(room)) == []  # the same file: told already
    os.utime(room.stop, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # a STOP made again
    again = notify.flush(room, s, since=size(room))
    assert again == [f"stop-{st.st_ino}-{st.st_mtime_ns + 1_000_000_000}"]
    room.stop.unlink()
    assert notify.flush(room, s, since=size(room)) == []


def test_the_budget_is_told_once_a_day_past_80_percent(room: Room, out: Path) -> None:
    s = with_notifier(room, out, daily_budget_usd=1.0)
    ledger.append(room.ledger, events.RESULT, task="x", cost_usd=0.79, detail="{}")
    assert notify.flush(room, s, since=size(room)) == []  # 79%
    ledger.append(room.ledger, events.RESULT, task="y", cost_usd=0.01, detail="{}")
    assert notify.flush(room, s, since=size(room)) == [f"budget-80-{today()}"]
    assert {k: v for k, v in told(out)[0].items() if k not in ("id", "room")} == {
        "event": "budget",
        "time": "",
        "task": "",
        "route": "",
        "detail": "$0.80 spent today of the $1.00 daily budget",
        "why": "today's spend passed 80% of the daily budget",
    }
    ledger.append(room.ledger, events.RESULT, task="z", cost_usd=0.5, detail="{}")
    assert notify.flush(room, s, since=size(room)) == []  # once a day
    assert notify.flush(room, s.replace(daily_budget_usd=0.0), since=size(room)) == []  # 0: no budget


def test_a_failing_notifier_is_logged_with_why_and_never_tried_again(room: Room, out: Path) -> None:
    s = with_notifier(room, out, "--fail")
    since = size(room)
    park = ledger.append(room.ledger, events.PARK, task="t1")
    assert notify.flush(room, s, since=since) == [park.id]
    [line] = entries(room, "notify")
    assert (line.task, line.outcome, line.detail) == (
        "t1",
        "failed",
        f"{park.id} (park): the notifier exited 3: the webhook answered 500",
    )
    assert (room.cache / "notify.stderr.txt").read_text() == "the webhook answered 500\n"
    assert notify.flush(room, s, since=size(room)) == [] and len(told(out)) == 1


def test_a_missing_notifier_is_logged(room: Room) -> None:
    s = settings.load(room).replace(notify="no-such-notifier --now")
    since = size(room)
    park = ledger.append(room.ledger, events.PARK, task="t1")
    assert notify.flush(room, s, since=since) == [park.id]
    [line] = entries(room, "notify")
    assert (line.outcome, line.detail) == (
        "failed",
        f"{park.id} (park): no-such-notifier: command not found on PATH",
    )


def test_a_notifier_that_hangs_is_ended_and_logged(room: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(notify, "NOTIFY_TIMEOUT_S", 0.2)
    s = settings.load(room).replace(notify=["sleep", "30"])
    since = size(room)
    park = ledger.append(room.ledger, events.PARK, task="t1")
    assert notify.flush(room, s, since=since) == [park.id]
    [line] = entries(room, "notify")
    assert (line.outcome, line.detail) == ("failed", f"{park.id} (park): the notifier timed out")


def test_a_rewritten_ledger_is_not_news(room: Room, out: Path) -> None:
    s = with_notifier(room, out)
    since = size(room)
    first = ledger.append(room.ledger, events.PARK, task="t1")
    assert notify.flush(room, s, since=since) == [first.id]
    ledger.append(room.ledger, events.PARK, task="t2")
    rewrite(room.ledger, data_lines(room.ledger)[1:])  # the init line gone: the checkpoint no longer fits
    assert notify.flush(room, s, since=size(room)) == []  # t2's park, in a ledger read anew: not news
    last = ledger.append(room.ledger, events.PARK, task="t3")
    assert notify.flush(room, s, since=size(room)) == [last.id]
    assert [e["task"] for e in told(out)] == ["t1", "t3"]


def test_only_the_newest_ids_sent_are_kept(room: Room, out: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(notify, "SENT_KEPT", 2)
    s = with_notifier(room, out)
    since = size(room)
    ids = [ledger.append(room.ledger, events.PARK, task=f"t{n}").id for n in range(3)]
    assert notify.flush(room, s, since=since) == ids
    assert cache.load(room.cache / "notify")["sent"] == ids[1:]
