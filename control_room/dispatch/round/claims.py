"""Slots and claims: who is running what, and recovering what a dead cycle left behind.

- A slot is a lock file ``control-room/.slot-N.lock`` held with ``flock`` for the whole cycle;
  the kernel releases it when the process dies, however it dies. ``max_parallel`` slots exist.
- Claiming happens under ``control-room/.claim.lock``: pick a task, ``rename`` it from
  ``swarm/queue/`` to ``swarm/running/``, write ``running/ID.claim`` (pid, host, slot, start,
  deadline, and later the agent's process group).
- A claim is dead when its slot lock is free (same host), when its pid is gone (same host), or
  when its deadline plus ``grace_s`` has passed (any host). A dead claim's agent group is killed
  and its task goes back to the queue, or to ``parked/`` after its last round.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from control_room import lineage
from control_room.ledger.write import HOST_FILE, cell_safe, writer_name
from control_room.room.layout import Room
from control_room.store import lock, records
from control_room.store.files import create_exclusive


def host(room: Room) -> str:
    """This clone's host id, as on its ledger lines (``CONTROL_ROOM_WRITER``, ``control-room/.host``
    or the machine's name)."""
    return writer_name(room.cr)


def shared_host(room: Room) -> str:
    """This clone's host id in a shared room: as ``host``, except that a clone with neither
    ``CONTROL_ROOM_WRITER`` nor ``control-room/.host`` gets an id of its own at first use, the
    machine's name and a random clone id (``mybox-3f9a1c``), kept in ``.host``: two clones of one
    room on one machine must never share an id, or each takes the other's claims for its own."""
    if not os.environ.get("CONTROL_ROOM_WRITER") and not (room.cr / HOST_FILE).exists():
        made = cell_safe(f"{os.uname().nodename or 'host'}"[:57] + "-" + os.urandom(3).hex())
        create_exclusive(room.cr / HOST_FILE, made + "\n")  # made by another cycle first: that one
    return writer_name(room.cr)


def _slot_path(room: Room, n: int) -> Path:
    return room.cr / f".slot-{n}.lock"


def take_slot(room: Room, max_parallel: int) -> tuple[int, int] | None:
    """(slot number, held fd) of a free slot, or None when all are busy. The slot this process
    took last is tried first: each of eight racing run loops finds its own slot free at once,
    instead of trying the others' (an open and a lock each) on every claim."""
    last = _last_slot.get(room.root)
    first = [last] if last is not None and last < max_parallel else []
    for n in first + [n for n in range(max_parallel) if n != last]:
        fd = lock.take(_slot_path(room, n))
        if fd is not None:
            _last_slot[room.root] = n
            return n, fd
    return None


_last_slot: dict[Path, int] = {}  # room -> the slot this process took last


def slot_free(room: Room, n: int) -> bool:
    """Whether nobody holds slot ``n`` on this host."""
    return lock.is_free(_slot_path(room, n))


@contextlib.contextmanager
def claim_lock(room: Room) -> Iterator[None]:
    """Recover, pick and claim happen under this lock, so two cycles never take one task."""
    with lock.held(room.cr / ".claim.lock"):
        yield


def claim_path(room: Room, task_id: str) -> Path:
    return room.state_dir("running") / f"{task_id}.claim"


def write_claim(room: Room, task_id: str, info: dict[str, Any]) -> None:
    """Not fsynced: a claim lives as long as its cycle, which a power loss ends with it; a claim
    file a crash left empty or torn reads as missing, a dead claim (``why_dead``), recovered."""
    records.write(claim_path(room, task_id), info, durable=False)


def release(room: Room, task_id: str) -> None:
    """Remove a task's claim file once the task has left ``running/``."""
    claim_path(room, task_id).unlink(missing_ok=True)


def read_claim(room: Room, task_id: str) -> dict[str, Any] | None:
    """The claim of ``task_id``, or None (missing, empty, torn). Parsed again only when its
    file changed (every write replaces it): each cycle's recovery looks at every claim, and
    racing loops at each other's."""
    return records.read_object_kept(claim_path(room, task_id))


def moved_on(room: Room) -> list[str]:
    """The tasks whose claim file is still there though the task has left ``running/``: a cycle
    between the move and its end (``finish.passed`` removes the claim last), or one that died
    there."""
    folder = room.state_dir("running")
    names = os.listdir(folder)
    return sorted(
        n[: -len(".claim")]
        for n in names
        if n.endswith(".claim") and f"{n[: -len('.claim')]}.json" not in names
    )


def pid_alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def why_dead(room: Room, claim: dict[str, Any] | None, grace_s: float, *, mine: int | None) -> str | None:
    """Why this claim's cycle is gone, or None if it may still be running."""
    if claim is None:
        return "it has no claim file (its cycle died while claiming)"
    if claim.get("host") == host(room):
        slot = claim.get("slot")
        if slot == mine:
            return f"its slot {slot} is ours now, so the cycle that held it is gone"
        if not pid_alive(claim.get("pid")):
            return f"its cycle (pid {claim.get('pid')} on {claim.get('host')}) is gone"
        if isinstance(slot, int) and slot_free(room, slot):
            return f"its slot {slot} is free, so the cycle that held it is gone"
    deadline = claim.get("deadline")
    if isinstance(deadline, (int, float)) and time.time() > deadline + grace_s:
        return f"its wall clock plus {grace_s:g}s grace has passed"
    return None


def kill_agent(room: Room, claim: dict[str, Any] | None, task_id: str) -> bool:
    """Kill every process group on this host that is provably the dead claim's run: a process
    in it started with ``CONTROL_ROOM_TASK=<id>`` and ``CONTROL_ROOM`` naming this room in its
    environment (``lineage.groups_of_run``, from ``/proc``), so a recycled process-group id is
    never killed, and a run whose leader is gone but whose children live on is still found.
    Only for a claim of this host; where /proc is not available, nothing is killed. The claim
    names no group: it is written once, before the agent starts (one file fewer a claim than
    writing it again once the group is known)."""
    if not claim or claim.get("host") != host(room):
        return False
    killed = False
    for group in lineage.groups_of_run(str(room.root), task_id):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signal.SIGKILL)
            killed = True
    return killed


def running_ids(room: Room) -> list[str]:
    try:
        names = os.listdir(room.state_dir("running"))
    except FileNotFoundError:
        return []
    return sorted(n[: -len(".json")] for n in names if n.endswith(".json") and not n.startswith("."))
