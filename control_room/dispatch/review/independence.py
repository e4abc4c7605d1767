"""Whether a reviewer is independent of the work it reviews (SPEC §12, seed 003): lenses that
share a model share blind spots, so a review (or an arbiter) that runs on the adapter **and**
the model the reviewed work ran on is named, loudly: a ``warning`` ledger line when it is
queued, the cycle's line, and ``doctor`` for the lenses a room uses. No model set on either
side is the adapter's own default, the same model ("default" both).
"""

from __future__ import annotations

from control_room import ledger
from control_room.dispatch.queue.resolve import resolve
from control_room.errors import ControlRoomError
from control_room.ledger import events
from control_room.room import lenses
from control_room.room import results as results_folder
from control_room.room.layout import Room
from control_room.room.settings import Settings
from control_room.room.tasks import Task
from control_room.store import records

DEFAULT = "default"  # no model named: the adapter CLI's own default


def runs_on(room: Room, settings: Settings, task: Task) -> tuple[str, str] | None:
    """(adapter, model) ``task`` will run on: its own, its role's, CONTROL.md's (``default``: the
    adapter's own model); None when that cannot be told (an unknown adapter: another check's)."""
    try:
        plan = resolve(room, settings, task)
    except (ControlRoomError, OSError):
        return None
    return plan.adapter.name, plan.model or DEFAULT


def ran_on(room: Room, task_id: str) -> tuple[str, str] | None:
    """(adapter, model) the last run of ``task_id`` ran on, from its meta.json; None if none."""
    meta = records.read_object(results_folder.folder(room, task_id) / "meta.json") or {}
    if not meta.get("adapter"):
        return None
    return str(meta["adapter"]), str(meta.get("model") or DEFAULT)


def warn_if_correlated(room: Room, settings: Settings, reviewer: Task, target_id: str) -> str | None:
    """A ``warning`` line (and its text) when ``reviewer`` (a review or an arbiter task, not yet
    run) runs on the adapter and model ``target_id``'s work ran on; else None."""
    mine, theirs = runs_on(room, settings, reviewer), ran_on(room, target_id)
    if mine is None or mine != theirs:
        return None
    lens = str(reviewer.get("lens") or lenses.ARBITER)
    said = (
        f"{reviewer['id']} runs on {mine[0]}, model {mine[1]}, as the work of {target_id} did: "
        f"not an independent review; give the lens another adapter or model (agents/lenses/{lens}.md)"
    )
    ledger.append(room.ledger, events.WARNING, task=reviewer["id"], detail=said)
    return said
