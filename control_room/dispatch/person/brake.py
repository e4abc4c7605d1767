"""STOP, the brake: a file whose existence halts everything. Creating and removing it is logged;
checking it is ``Room.stopped()``, a plain existence test."""

from __future__ import annotations

import os

from control_room import ledger
from control_room.ledger import events
from control_room.room.layout import Room
from control_room.store.files import create_exclusive
from control_room.timeutil import now_iso


def stop(room: Room, reason: str = "") -> bool:
    """Create STOP; False if it was there already."""
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
