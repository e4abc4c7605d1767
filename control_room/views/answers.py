"""What the reading commands answer, as data: the tasks of some states, one task, one route.

``task list``, ``task show`` and ``route show`` print these (their ``--json`` is exactly this
data), and the MCP tools of the same names return them, so both always say the same thing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from control_room.dispatch.queue import index
from control_room.errors import InvalidError, NotFoundError
from control_room.knowledge import digest, graveyard, routes
from control_room.room import swarm
from control_room.room.layout import STATES, Room
from control_room.store import records
from control_room.store.files import read_optional, read_text


def task_rows(room: Room, states: tuple[str, ...] | list[str] = ()) -> list[index.Listed]:
    """The tasks of ``states`` (every state when empty): the queue in run order, the others by
    file name. Listing the queue rejects any file in it that is not a valid task."""
    bad = [s for s in states if s not in STATES]
    if bad:
        raise InvalidError(f"unknown state {bad[0]!r}: one of {', '.join(STATES)}")
    rows: list[index.Listed] = []
    for state in states or STATES:
        listed = index.scan(room, state)
        rows += index.queue_order(listed) if state == "queue" else sorted(listed, key=lambda t: t.name)
    return rows


def task_row(t: index.Listed) -> dict[str, Any]:
    """One row of ``task list --json``."""
    return {"state": t.state, "file": t.name, **t.summary}


class TaskDetail(NamedTuple):
    """One task where it lies: its state, file, text, and why it was parked or rejected."""

    state: str
    path: Path
    text: str
    reason: str | None
    reason_path: Path

    def as_dict(self) -> dict[str, Any]:
        """``task show --json``: the task's fields (its raw text when it is not JSON)."""
        try:
            body: Any = records.parse(self.text)
        except InvalidError:
            body = self.text
        return {"state": self.state, "path": str(self.path), "task": body, "reason": self.reason}


def task_detail(room: Room, task_id: str) -> TaskDetail:
    state, path = swarm.locate(room, task_id)
    reason_path = swarm.reason_path(path)
    return TaskDetail(state, path, read_text(path), read_optional(reason_path), reason_path)


def route_detail(room: Room, route_id: str) -> dict[str, Any]:
    """``route show --json``: the route's row, its tasks, what it learned, its tombstone (and
    why that cannot be read, if so). NotFoundError when it is neither on the board nor dead."""
    tomb = graveyard.path(room, route_id)  # validates the id
    dead = tomb.exists()
    row = routes.find(room, route_id)
    if row is None and not dead:
        raise NotFoundError(f"no route {route_id} in control-room/ROUTES.md or graveyard/")
    tasks = [
        (t.state, t.id)
        for state in STATES
        for t in index.scan(room, state)
        if t.summary.get("route") == route_id
    ]
    problem = None
    if dead:
        try:
            graveyard.read(room, route_id)
        except InvalidError as exc:
            problem = str(exc)
    return {
        "route": row,
        "tasks": tasks,
        "history": digest.route_history(room, route_id),
        "tombstone": str(tomb) if dead else None,
        "tombstone_problem": problem,
    }
