"""Adapters (SPEC §9): one small module per agent CLI, registered in one explicit dict.

Third-party adapters come from the entry-point group ``control_room.adapters`` (name ->
an ``Adapter`` subclass), looked up only when a name is not built in, or when listing.
"""

from __future__ import annotations

from control_room.adapters.aider import Aider
from control_room.adapters.amp import Amp
from control_room.adapters.base import Adapter, Invocation, Outcome
from control_room.adapters.claude import Claude
from control_room.adapters.codex import Codex
from control_room.adapters.command import Command
from control_room.adapters.copilot import Copilot
from control_room.adapters.cursor_agent import CursorAgent
from control_room.adapters.gemini import Gemini
from control_room.adapters.kimi import Kimi
from control_room.adapters.opencode import Opencode
from control_room.adapters.probe import Probe
from control_room.errors import InvalidError

ENTRY_POINT_GROUP = "control_room.adapters"

ADAPTERS: dict[str, type[Adapter]] = {
    "probe": Probe,
    "command": Command,
    "aider": Aider,
    "amp": Amp,
    "claude": Claude,
    "codex": Codex,
    "copilot": Copilot,
    "cursor-agent": CursorAgent,
    "gemini": Gemini,
    "kimi": Kimi,
    "opencode": Opencode,
}


def _plugins() -> dict[str, object]:
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def names() -> list[str]:
    """Every adapter name: built in, then installed plugins."""
    return sorted({*ADAPTERS, *_plugins()})


def get(name: str) -> Adapter:
    """The adapter called ``name``; an unknown name lists the valid ones."""
    if name in ADAPTERS:
        return ADAPTERS[name]()
    plugin = _plugins().get(name)
    if plugin is not None:
        cls = plugin.load()  # type: ignore[attr-defined]
        if isinstance(cls, type) and issubclass(cls, Adapter):
            return cls()
        raise InvalidError(f"adapter plugin {name!r} is not an Adapter subclass")
    raise InvalidError(f"unknown adapter {name!r} (valid: {', '.join(names())})")


__all__ = ["ADAPTERS", "Adapter", "Invocation", "Outcome", "get", "names"]
