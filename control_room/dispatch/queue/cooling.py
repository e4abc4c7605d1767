"""Which adapter a task runs on while some cool down (room/cooldowns.py): its own, else the
first of its ``fallback`` chain that is not cooling.

The chain is the task's adapter (the task's, else its role's, else CONTROL.md's
``default_adapter``) with its model, then each adapter its ``fallback`` names (the task's, else
its role's front matter ``fallback``), each with the model its setup names (CONTROL.md
``adapters.<name>.model``, the role's overriding it), else the CLI's own default: a task's
``model`` is a model of its own adapter, never sent to another. Names only: no adapter is
loaded, so ``status`` can afford it (and pays nothing while nothing cools).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from control_room.errors import ControlRoomError
from control_room.room import cooldowns, roles
from control_room.room.cooldowns import Cooldown
from control_room.room.layout import Room
from control_room.room.settings import Settings
from control_room.room.tasks import DEFAULT_ROLE

Link = tuple[str, str | None]  # (adapter, model)


def chain(room: Room, settings: Settings, task: Mapping[str, Any]) -> list[Link]:
    """The adapters ``task`` may run on, in order, each with its model."""
    try:
        meta, _ = roles.read(room, str(task.get("role") or DEFAULT_ROLE))
    except ControlRoomError:
        meta = {}  # the run itself says what is wrong with the role
    own: Mapping[str, Any] = meta["adapters"] if isinstance(meta.get("adapters"), dict) else {}

    def setup_model(name: str) -> str | None:
        for setup in (own.get(name), settings.adapters.get(name)):
            if isinstance(setup, Mapping) and setup.get("model"):
                return str(setup["model"])
        return None

    primary = str(task.get("adapter") or meta.get("adapter") or settings.default_adapter)
    model = task.get("model") or meta.get("model") or setup_model(primary) or settings.default_model
    links: list[Link] = [(primary, str(model) if model else None)]
    fallback = task.get("fallback") or meta.get("fallback") or []
    for name in fallback if isinstance(fallback, list) else ():
        if isinstance(name, str) and name not in (n for n, _ in links):
            links.append((name, setup_model(name)))
    return links


def free(table: dict[str, Cooldown], links: list[Link]) -> tuple[Link | None, Cooldown | None]:
    """The first link not cooling (None when all are), and the cooldown that holds the first."""
    first = cooldowns.cooling(table, *links[0])
    if first is None:
        return links[0], None
    for link in links[1:]:
        if cooldowns.cooling(table, *link) is None:
            return link, first
    return None, first
