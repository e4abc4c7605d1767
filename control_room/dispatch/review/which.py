"""The questions a cycle asks of every task before it knows whether reviews are involved: which
task a review or an arbiter serves (``serves``), and which lenses review a task when it passes
(``lenses_for``; ``check_lenses`` reads them). They read the task and the settings only, so a
cycle on a plain task answers them without loading the rest of the review wing (``queueing``,
``verdicts``, ``materials``) or any lens file."""

from __future__ import annotations

from typing import TYPE_CHECKING

from control_room.errors import RoomInvalidError
from control_room.room.layout import Room
from control_room.room.settings import Settings
from control_room.room.tasks import Task

if TYPE_CHECKING:
    from control_room.room.lenses import Lens


def serves(task: Task) -> str | None:
    """The task a review or arbiter task is about."""
    return task.get("reviews") or task.get("arbitrates")


def lenses_for(settings: Settings, task: Task) -> list[str]:
    """The lenses that review ``task`` when it passes: its own ``review``, else its route's in
    CONTROL.md, else CONTROL.md's. Reviews, arbiters and the merge queue's helpers are not
    reviewed (a helper carries work reviewed already)."""
    if serves(task) or task.get("for_task"):
        return []
    if "review" in task:
        return list(task["review"])
    wanted = settings.review
    if isinstance(wanted, dict):
        return list(wanted.get(str(task.get("route") or ""), wanted.get("*", [])))
    return list(wanted)


def check_lenses(room: Room, settings: Settings, task: Task) -> list[Lens]:
    """The task's lenses, read; a missing or broken lens is the room's fault (RoomInvalidError),
    found before the agent runs."""
    names = lenses_for(settings, task)
    if not names:
        return []
    from control_room.room import lenses  # a reviewed task's only: the lens files and their parser

    try:
        return [lenses.read(room, name) for name in names]
    except Exception as exc:  # InvalidError, a broken front matter: one line either way
        raise RoomInvalidError(f"room invalid: {exc}") from None
