"""Bringing every view file up to date: DIGEST.md and the auto block of CURRENT_CONTEXT.md.
Called by the edges (``cli``) when a command that changed the room ends."""

from __future__ import annotations

from control_room.errors import ControlRoomError
from control_room.knowledge import digest
from control_room.room import settings as settings_file
from control_room.room.layout import Room
from control_room.views import context


def refresh(room: Room) -> None:
    """Rewrite DIGEST.md and the auto block of CURRENT_CONTEXT.md from the state as it is now.

    Settings that cannot be read leave DIGEST.md as it was (its size cap and death-loop
    threshold live there); CURRENT_CONTEXT.md then says the settings are broken."""
    try:
        settings = settings_file.load(room)
    except ControlRoomError:
        settings = None
    if settings is not None:
        digest.refresh(room, settings)
    context.refresh(room)
