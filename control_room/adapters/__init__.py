"""Adapters (SPEC §9): one small module per agent CLI, registered in one explicit dict.

Third-party adapters come from the entry-point group ``control_room.adapters`` (name ->
an ``Adapter`` subclass), looked up only when a name is not built in, or when listing.

May import: only the base modules (``errors``, ``proc``); an adapter never touches the room.
"""

from __future__ import annotations

import importlib

from control_room.adapters.base import Adapter, Invocation, Outcome
from control_room.errors import InvalidError

ENTRY_POINT_GROUP = "control_room.adapters"

# name -> "module:class". Imported on first use, so a cycle loads only the adapter it runs.
ADAPTERS: dict[str, str] = {
    "probe": "control_room.adapters.probe:Probe",
    "command": "control_room.adapters.command:Command",
    "aider": "control_room.adapters.aider:Aider",
    "amp": "control_room.adapters.amp:Amp",
    "claude": "control_room.adapters.claude:Claude",
    "codex": "control_room.adapters.codex:Codex",
    "copilot": "control_room.adapters.copilot:Copilot",
    "cursor-agent": "control_room.adapters.cursor_agent:CursorAgent",
    "gemini": "control_room.adapters.gemini:Gemini",
    "kimi": "control_room.adapters.kimi:Kimi",
    "opencode": "control_room.adapters.opencode:Opencode",
}


def adapter_class(name: str) -> type[Adapter]:
    """The class of a built-in adapter."""
    module, cls = ADAPTERS[name].split(":")
    found: type[Adapter] = getattr(importlib.import_module(module), cls)
    return found


def _plugins() -> dict[str, object]:
    from importlib.metadata import entry_points  # ~5 ms: only for a name not built in, or a listing

    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def names() -> list[str]:
    """Every adapter name: built in, then installed plugins."""
    return sorted({*ADAPTERS, *_plugins()})


def known(name: str) -> bool:
    """Whether ``name`` is an adapter (built in, or an installed plugin)."""
    return name in ADAPTERS or name in _plugins()


def get(name: str) -> Adapter:
    """The adapter called ``name``; an unknown name lists the valid ones."""
    if name in ADAPTERS:
        return adapter_class(name)()
    plugin = _plugins().get(name)
    if plugin is not None:
        cls = plugin.load()  # type: ignore[attr-defined]
        if isinstance(cls, type) and issubclass(cls, Adapter):
            return cls()
        raise InvalidError(f"adapter plugin {name!r} is not an Adapter subclass")
    raise InvalidError(f"unknown adapter {name!r} (valid: {', '.join(names())})")


__all__ = ["ADAPTERS", "Adapter", "Invocation", "Outcome", "get", "known", "names"]
