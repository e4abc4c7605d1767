"""The environment of a run (an agent, a validator): never the dispatcher's whole environment
(docs/adapters.md "The environment", docs/security.md)."""

from __future__ import annotations

import os
from typing import Any

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
    env = dict(_allowed(patterns))
    env.pop(crashpoint.VAR, None)  # a test's crash point arms the dispatcher, never what it runs
    env["CONTROL_ROOM"] = str(room.root)
    env["CONTROL_ROOM_TASK"] = str(task.get("id", ""))
    return env


_LAST: list[Any] = []  # [the patterns, the environment as it was, what they let through]


def _allowed(patterns: tuple[str, ...]) -> dict[str, str]:
    """The variables of our environment that ``patterns`` let through (``adapters.base.allowed``,
    for all at once: names, and prefixes ending in ``*``); the answer kept while neither changes
    (a cycle asks three times, a run loop every cycle: decoding the environment is most of it)."""
    raw = getattr(os.environ, "_data", None)  # CPython's encoded copy: compared without decoding
    now = tuple(raw.items()) if isinstance(raw, dict) else None
    if now is not None and _LAST and _LAST[0] == patterns and _LAST[1] == now:
        return dict(_LAST[2])
    exact = {p for p in patterns if not p.endswith("*")}
    prefixes = tuple(p[:-1] for p in patterns if p.endswith("*"))
    env = {k: v for k, v in os.environ.items() if k in exact or k.startswith(prefixes)}
    _LAST[:] = [patterns, now, env] if now is not None else []
    return dict(env)
