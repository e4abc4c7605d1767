"""Views: files and screens derived from the state (SPEC §4 step 8, §7, §10).

- ``status``: ``control-room status``, the room on one screen
- ``context``: the auto block of CURRENT_CONTEXT.md
- ``refresh``: bring every view file up to date (DIGEST.md, CURRENT_CONTEXT.md)

Views are refreshed at the edge of a command (``cli``: the end of any command that appended to
the ledger, and after each cycle of ``run``), never from inside a change to the model, so data
flows one way. May import everything below it; only the edges (``cli``) import it.
"""

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
