"""Which queued tasks this machine may claim in a shared room, and claiming them on the remote
(``dispatch/shared/claimrefs.py`` for the refs, ``dispatch/shared/sync.py`` for git).

A task is ours to claim when its claim ref is absent; ours already (a claim of this host that
a local recovery put back in the queue); another host's whose lease (wall clock plus
``grace_s``) is over; or finished by a commit our branch holds. Anything else is held
elsewhere, and ``pick`` passes it by. A live claim of our host id that this clone did not make
is another clone's with the same id: the cycle claims nothing (``impostors``, fail closed).
"""

from __future__ import annotations

import os
import time

from control_room import ledger
from control_room.dispatch.round import claims
from control_room.dispatch.shared import claimrefs
from control_room.dispatch.shared.sync import Shared
from control_room.errors import RoomInvalidError
from control_room.ledger import events
from control_room.room.layout import Room
from control_room.room.tasks import Task
from control_room.timeutil import now_iso


class Chooser:
    def __init__(self, share: Shared, grace_s: float) -> None:
        self.share, self.grace_s = share, grace_s
        self.refs = share.refs()
        self.beaten: set[str] = set()  # taken by another machine while we tried
        strangers = impostors(share, self.refs)
        if strangers:  # fail closed: exactly-once must not depend on a step a user can skip
            shown = ", ".join(strangers[:5]) + (
                f" and {len(strangers) - 5} more" if len(strangers) > 5 else ""
            )
            raise RoomInvalidError(
                f"room invalid: the remote holds live claims of host {share.host} that this clone did not "
                f"make ({shown}): another clone uses the same host id; nothing was claimed (fail closed); "
                "give each clone its own: `control-room sync --host NAME`"
            )

    def taken(self, task_id: str) -> str | None:
        """Why ``task_id`` is not ours to claim, or None."""
        if task_id in self.beaten:
            return "claimed by another machine a moment ago"
        ref = self.refs.get(task_id)
        if ref is None:
            return None
        if ref.live:
            if ref.host == self.share.host or claimrefs.lease_over(ref, self.grace_s):
                return None
            return f"claimed by {ref.host} (lease until {now_iso(ref.until + self.grace_s)})"
        if self.share.contains(ref.sha):
            return None
        return "its last run, on another machine, is not merged here yet (the next sync brings it)"

    def claim(self, room: Room, task: Task, until: float, info: dict[str, object]) -> bool:
        """Claim ``task`` on the remote; False when another machine moved first. Taking over a
        claim whose lease is over writes a ``recover`` line naming the machine that lost it."""
        tid = task["id"]
        ref = self.refs.get(tid)
        if claimrefs.claim(self.share, tid, ref.sha if ref is not None else "", until, info) is None:
            self.beaten.add(tid)
            return False
        if ref is not None and ref.live and ref.host != self.share.host:
            late = time.time() - ref.until
            ledger.append(
                room.ledger,
                events.RECOVER,
                task=tid,
                route=task.get("route", ""),
                detail=f"the claim of {ref.host} passed its lease {late:.0f}s ago (wall clock plus "
                f"{self.grace_s:g}s grace); taken over by {self.share.host}, no round used",
            )
        return True


def impostors(share: Shared, refs: dict[str, claimrefs.Ref]) -> list[str]:
    """The tasks the remote says this host id claims, live, that this clone did not claim (none
    of its unfinished claims, none running here): the claims of another clone with our id."""
    mine = set(claimrefs.pending(share.room)) | set(claims.running_ids(share.room))
    return sorted(tid for tid, ref in refs.items() if ref.live and ref.host == share.host and tid not in mine)


def info(host: str, slot: int, until: float) -> dict[str, object]:
    """What a claim commit says of its claim."""
    return {"host": host, "pid": os.getpid(), "slot": slot, "started": now_iso(), "deadline": until}
