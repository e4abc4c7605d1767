"""Notifications (SPEC §10): CONTROL.md ``notify:`` names a command (argv, no shell) that is
run with one JSON event on its stdin each time a person is needed:

- a gate waits for approval (a ``<gate>-approval-needed`` line), a task is parked (``park``),
  reviews are escalated (``escalated``), a death loop holds a route (``death-loop``): read from
  the ledger lines appended since the last look;
- STOP appears (the file exists: one event per STOP file, however it was made);
- the day's spend passes 80% of ``daily_budget_usd`` (one event a day).

At most once per event id: the ids sent are kept with the ledger checkpoint
(``.cache/notify``). The first look starts where the ledger was when the command began, and a
checkpoint rebuilt for a rewritten ledger takes nothing before it as news: old events are never
sent again. Each notification is a ``notify`` ledger
line (``sent`` or ``failed`` with why); a notifier that fails, hangs (``NOTIFY_TIMEOUT_S``) or is
missing is logged and never stops what the command was doing. Called at the edge of every
command (``cli/common.py``), so a cycle under cron notifies as it ends.
"""

from __future__ import annotations

import os
from typing import Any

from control_room import ledger
from control_room.ledger import events
from control_room.ledger.follow import follow, start_at
from control_room.ledger.line import Col, unescape
from control_room.room.layout import Room
from control_room.room.settings import Settings
from control_room.store import cache
from control_room.store.files import read_optional
from control_room.timeutil import today

KIND = "notify-1"
NOTIFY_TIMEOUT_S = 30.0
SENT_KEPT = 1000  # ids remembered (the newest)
WHY = {
    events.PARK.name: "a task was parked: a person decides (retry, cancel, kill its route)",
    events.ESCALATED.name: "reviews disagree and the arbiter (or a second arbitration) escalated to a person",
    events.DEATH_LOOP.name: "a route fails the same way again and again: held until a person resumes it",
}
BUDGET_SHARE = 0.8


def _trigger(event: str) -> str | None:
    if event in WHY:
        return WHY[event]
    if event.endswith("-approval-needed"):
        return f"a task waits for a person's approval ({event[: -len('-approval-needed')]} gate)"
    return None


def _init() -> dict[str, Any]:
    return {"pending": [], "sent": [], "fresh": True}


def _fold(state: dict[str, Any], cells: list[str]) -> None:
    if state["fresh"]:
        return  # a checkpoint rebuilt from the start (the ledger was rewritten): not news
    why = _trigger(cells[Col.EVENT])
    if why is not None:
        state["pending"].append(
            {
                "id": cells[Col.ID],
                "event": cells[Col.EVENT],
                "time": cells[Col.TIME],
                "task": unescape(cells[Col.TASK]),
                "route": unescape(cells[Col.ROUTE]),
                "detail": unescape(cells[Col.DETAIL]),
                "why": why,
            }
        )


def flush(room: Room, settings: Settings, *, since: int = 0) -> list[str]:
    """Send what is new to the notifier; the ids sent (or tried). ``since``: the ledger's size
    when the command began; the first look starts there (what came before is not news)."""
    if not settings.notify or not room.ledger.exists():
        return []
    checkpoint = room.cache / "notify"
    if not checkpoint.exists():
        start_at(room.ledger, checkpoint, KIND, lambda: {**_init(), "fresh": False}, since)
    state, _ = follow(room.ledger, checkpoint, KIND, _init, _fold)
    state["fresh"] = False
    found = list(state["pending"])
    state["pending"] = []
    found += _stop(room) + _budget(room, settings)
    sent = set(state["sent"])
    done = []
    for event in found:
        if event["id"] in sent:
            continue
        _send(room, settings, {**event, "room": str(room.root)})
        sent.add(event["id"])
        state["sent"].append(event["id"])
        done.append(event["id"])
    state["sent"] = state["sent"][-SENT_KEPT:]
    cache.save(checkpoint, state)
    return done


def _stop(room: Room) -> list[dict[str, Any]]:
    try:
        st = os.lstat(room.stop)
    except FileNotFoundError:
        return []
    said = (read_optional(room.stop) or "").strip()[:500]
    return [
        {
            "id": f"stop-{st.st_ino}-{st.st_mtime_ns}",
            "event": events.STOP.name,
            "time": "",
            "task": "",
            "route": "",
            "detail": said,
            "why": f"STOP exists ({room.stop}): every cycle halts until `control-room resume`",
        }
    ]


def _budget(room: Room, settings: Settings) -> list[dict[str, Any]]:
    from control_room.ledger.stats import spent_on  # cached and incremental, like status's

    day = today()
    spent = spent_on(room.ledger, room.cache / "ledger-summary", day)
    budget = float(settings.daily_budget_usd)
    if budget <= 0 or spent < BUDGET_SHARE * budget:
        return []
    return [
        {
            "id": f"budget-80-{day}",
            "event": "budget",
            "time": "",
            "task": "",
            "route": "",
            "detail": f"${spent:.2f} spent today of the ${budget:.2f} daily budget",
            "why": f"today's spend passed {BUDGET_SHARE:.0%} of the daily budget",
        }
    ]


def _send(room: Room, settings: Settings, event: dict[str, Any]) -> None:
    import json  # only when there is something to send

    from control_room import proc  # subprocess: likewise
    from control_room.room.shell import argv_of  # the one reading of a command setting

    what = f"{event['id']} ({event['event']})"
    try:
        room.cache.mkdir(parents=True, exist_ok=True)  # the notifier's output goes beside the checkpoint
        wanted = settings.notify
        argv = argv_of(list(wanted) if isinstance(wanted, tuple) else wanted, "CONTROL.md notify")
        res = proc.run(
            argv,
            cwd=room.root,
            stdout_path=room.cache / "notify.stdout.txt",
            stderr_path=room.cache / "notify.stderr.txt",
            timeout_s=NOTIFY_TIMEOUT_S,
            stdin=json.dumps(event, ensure_ascii=False).encode("utf-8"),
            cap_bytes=65536,
        )
    except Exception as exc:  # missing, refused, anything: logged, never in the way
        ledger.append(
            room.ledger, events.NOTIFY, task=event["task"], outcome="failed", detail=f"{what}: {exc}"
        )
        return
    if res.ok:
        ledger.append(room.ledger, events.NOTIFY, task=event["task"], outcome="sent", detail=what)
        return
    why = "timed out" if res.timed_out else f"exited {res.exit_code}"
    tail = res.stderr.tail(2).replace("\n", " / ")
    detail = f"{what}: the notifier {why}" + (f": {tail}" if tail else "")
    ledger.append(room.ledger, events.NOTIFY, task=event["task"], outcome="failed", detail=detail)
