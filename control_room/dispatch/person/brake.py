"""STOP, the brake: a file whose existence halts everything. Creating and removing it is logged;
checking it is ``Room.stopped()``, a plain existence test."""

from __future__ import annotations

import os

from control_room import ledger
from control_room.ledger import events
from control_room.room.layout import Room
from control_room.store.files import create_exclusive
from control_room.text import one_line
from control_room.timeutil import now_iso

REASON_MAX = 500  # characters of a STOP's reason kept: longer is cut, never refused (docs/mcp.md caps)


def stop(room: Room, reason: str = "") -> bool:
    """Create STOP; False if it was there already. The reason is put on one line and cut to
    ``REASON_MAX`` characters: a STOP is never refused for its reason."""
    reason = one_line(reason)
    if len(reason) > REASON_MAX:
        reason = reason[: REASON_MAX - 1] + "…"
    who = ledger.writer_name(room.cr)
    text = f"STOP created {now_iso()} by {who}\n" + (f"reason: {reason}\n" if reason else "")
    if room.stopped() or not create_exclusive(room.stop, text):
        return False
    ledger.append(room.ledger, events.STOP, detail=reason)
    return True


def resume(room: Room) -> bool:
    """Remove STOP; False if there was none."""
    try:
        os.unlink(room.stop)
    except FileNotFoundError:
        return False
    ledger.append(room.ledger, events.RESUME)
    return True
