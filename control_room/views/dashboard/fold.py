"""The ledger folded once for the dashboard, kept current with ``ledger.follow``.

Per UTC day: spend, passes, failures, tasks opened and closed (the queue depth curve), lines.
Per metric name: the points (time, task, value) that ``result`` lines carry in ``"metrics"``.
Per task: its ``review``, ``arbitration`` and ``escalated`` lines. Only additive counters and
bounded lists, so
a state brought up to date reads only the lines appended since.

Queue depth is an approximation from the ledger alone, documented in docs/dashboard.md: a task
opens with ``task-add`` or ``retry`` and closes with a passing ``result``, ``park``, ``reject``
or ``cancel``; the depth at the end of a day is opened minus closed so far (never below 0).
"""

from __future__ import annotations

from typing import Any

from control_room.ledger import events, result
from control_room.ledger.follow import follow
from control_room.ledger.line import Col, unescape
from control_room.room.layout import Room

KIND = "dashboard-2"  # -2: no filter names
SPEND, PASSES, FAILS, OPENED, CLOSED, LINES = range(6)  # a day's counters, by position
METRIC_POINTS = 5000  # points kept per metric name (the newest)
REVIEW_LINES = 50  # review lines kept per task (the newest)
OPENS = (events.TASK_ADD.name, events.RETRY.name)
CLOSES = (events.PARK.name, events.REJECT.name, events.CANCEL.name)
_RESULT = events.RESULT.name
REVIEWS = (events.REVIEW.name, events.ARBITRATION.name, events.ESCALATED.name)


def _init() -> dict[str, Any]:
    return {"days": {}, "metrics": {}, "reviews": {}}


def _fold(state: dict[str, Any], cells: list[str]) -> None:
    day = cells[Col.TIME][:10]
    counts = state["days"].get(day)
    if counts is None:
        counts = state["days"][day] = [0.0, 0, 0, 0, 0, 0]
    counts[LINES] += 1
    event = cells[Col.EVENT]  # event names need no unescaping
    cost = cells[Col.COST_USD]
    if cost != "0":
        try:
            counts[SPEND] += float(cost)
        except ValueError:
            pass
    if event == _RESULT:
        passed = cells[Col.OUTCOME] == "pass"
        counts[PASSES if passed else FAILS] += 1
        counts[CLOSED] += passed
        detail = cells[Col.DETAIL]
        if '"metrics"' in detail:
            task = unescape(cells[Col.TASK])
            for metric, number in result.read(unescape(detail)).metrics.items():
                points = state["metrics"].setdefault(metric, [])
                points.append([cells[Col.TIME], task, number])
                if len(points) > 2 * METRIC_POINTS:
                    del points[:-METRIC_POINTS]
    elif event in OPENS:
        counts[OPENED] += 1
    elif event in CLOSES:
        counts[CLOSED] += 1
    elif event in REVIEWS:
        task = unescape(cells[Col.TASK])
        lines = state["reviews"].setdefault(task, [])
        lines.append(
            [
                cells[Col.TIME],
                event,
                unescape(cells[Col.OUTCOME]),
                unescape(cells[Col.ADAPTER]),
                unescape(cells[Col.DETAIL]),
            ]
        )
        if len(lines) > REVIEW_LINES:
            del lines[0]


def state(room: Room, *, whole: bool = False) -> dict[str, Any]:
    """The fold, up to date (its checkpoint in ``.cache/dashboard``: in memory, see ``site``;
    ``whole``: see knowledge.history)."""
    st, _ = follow(room.ledger, room.cache / "dashboard", KIND, _init, _fold, whole=whole)
    for points in st["metrics"].values():
        del points[:-METRIC_POINTS]
    return st


def queue_depth(days: dict[str, list[Any]]) -> list[tuple[str, int]]:
    """Open tasks at the end of each day (the approximation above)."""
    out, depth = [], 0
    for day in sorted(days):
        depth = max(0, depth + days[day][OPENED] - days[day][CLOSED])
        out.append((day, depth))
    return out
