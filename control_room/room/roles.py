"""Roles: ``agents/<role>.md``, a prompt with front matter (``adapter``, ``model``,
``command_argv``, ``writes_tasks``) that the role's tasks inherit unless they override it."""

from __future__ import annotations

from typing import Any

from control_room.errors import InvalidError, NotFoundError
from control_room.room.layout import Room
from control_room.room.tasks import DEFAULT_ROLE, Task
from control_room.room.values import is_id
from control_room.store import docs

REVIEWING = ("reviewer", "arbiter")  # the roles that judge others' work (reviews, arbiters): never edit


def name_of(task: Task) -> str:
    """The role a task runs as."""
    return str(task.get("role") or DEFAULT_ROLE)


def read(room: Room, name: str) -> tuple[dict[str, Any], str]:
    """(front matter, body) of ``agents/<name>.md``; cached against the file, so a cycle does
    not import the YAML parser unless the role changed."""
    if not is_id(name):
        raise InvalidError(f"role {name!r} is not a valid role name")
    path = room.root / "agents" / f"{name}.md"
    try:
        return docs.read(path, room.cache / f"role-{name}")
    except NotFoundError:
        raise InvalidError(f"role {name!r} has no prompt: {path} is missing") from None
