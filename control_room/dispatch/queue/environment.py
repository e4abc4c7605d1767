"""The environment of a run (an agent, a validator): never the dispatcher's whole environment
(docs/adapters.md "The environment", docs/security.md)."""

from __future__ import annotations

import os

from control_room import crashpoint, redact
from control_room.room.layout import Room
from control_room.room.settings import Settings
from control_room.room.tasks import Task


def agent_env(
    room: Room, settings: Settings, task: Task, keep: tuple[str, ...] = (), names: tuple[str, ...] = ()
) -> dict[str, str]:
    """The environment of a run (an agent, a validator): only the dispatcher's variables that
    ``names`` (the adapter's ``env_allow``; none: the minimal set every run gets, PATH, HOME,
    the locale and CONTROL_ROOM_*), CONTROL.md ``env_allow`` (names, ``PREFIX*``) or ``keep``
    (the variable an adapter's ``api_key_env`` names) let through; plus where the room is and
    which task this is. Never the whole environment: a key the run was not meant to see stays
    out (docs/cycle.md)."""
    from control_room.adapters.base import MINIMAL_ENV  # a cycle's, with the adapter

    redact.watch(*keep)  # a role's setup may name one CONTROL.md does not: its value never lands
    patterns = (*(names or MINIMAL_ENV), *settings.env_allow, *keep)
    # ``adapters.base.allowed`` for every variable at once: names, and prefixes ending in ``*``
    exact = {p for p in patterns if not p.endswith("*")}
    prefixes = tuple(p[:-1] for p in patterns if p.endswith("*"))
    env = {k: v for k, v in os.environ.items() if k in exact or k.startswith(prefixes)}
    env.pop(crashpoint.VAR, None)  # a test's crash point arms the dispatcher, never what it runs
    env["CONTROL_ROOM"] = str(room.root)
    env["CONTROL_ROOM_TASK"] = str(task.get("id", ""))
    return env
