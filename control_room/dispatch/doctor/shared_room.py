"""``doctor``'s check of a room shared through a git remote (CONTROL.md ``remote:``): the
clone is on a branch, the remote answers, and this clone's host id is its own (the remote shows
no claim of this host that this clone did not make)."""

from __future__ import annotations

import os

from control_room.dispatch.doctor.finding import FAIL, OK, WARN, Check, Context, Finding, unchecked
from control_room.dispatch.shared import claiming, sharing
from control_room.errors import ControlRoomError
from control_room.ledger.write import HOST_FILE

NAME = "shared"


def shared_check(ctx: Context) -> list[Finding]:
    if ctx.settings is None:
        return [unchecked(NAME)]
    try:
        share = sharing.shared(ctx.room, ctx.settings)
    except ControlRoomError as exc:
        return [Finding(NAME, FAIL, str(exc), "see docs/many-machines.md")]
    if share is None:
        return [Finding(NAME, OK, "not shared: CONTROL.md sets no remote (one machine)")]
    try:
        with share.turn():
            share.fetch()
    except ControlRoomError as exc:
        return [
            Finding(NAME, FAIL, f"{exc}: cycles claim nothing (exit 17)", "check the remote and the network")
        ]
    if os.environ.get("CONTROL_ROOM_WRITER"):
        source = "CONTROL_ROOM_WRITER"
    elif (ctx.room.cr / HOST_FILE).exists():
        source = f"control-room/{HOST_FILE}"
    else:
        source = "the machine's name"
    strangers = claiming.impostors(share, share.refs())
    found = [
        Finding(
            NAME, OK, f"shared through {share.remote} ({share.branch}) as host {share.host} (from {source})"
        )
    ]
    if strangers:
        shown = ", ".join(strangers[:5]) + (f" and {len(strangers) - 5} more" if len(strangers) > 5 else "")
        found.append(
            Finding(
                NAME,
                WARN,
                f"the remote shows live claims of host {share.host} that this clone did not make ({shown}): "
                "another clone uses the same host id, and each takes the other's claims for its own",
                "give each clone its own: `control-room sync --host NAME`",
            )
        )
    return found


CHECKS = (Check(NAME, shared_check),)
