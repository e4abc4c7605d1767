"""The queue in run order for a cycle (``run_order``), and as a run loop's cycles glance at it
before the claim lock (``candidates``): listed at most once a second, not at every cycle.

``run_order`` trusts the saved order (``.cache/queue.order``, made by ``index.scan``) for
``RECHECK_S`` after a full check and reads only the names it does not know; past that, one
process checks every file (under ``control-room/.scan.lock``, so that eight loops finding the
order old at once check it once, the others taking what it saved).

Listing a queue of 10,000 files costs a cycle about 4 ms of CPU on a small machine, as much as
the rest of its pick; eight loops racing over one queue would list it 200 times a second. So a
process keeps the queue in run order as its last listing saw it, and lists it again only when
that listing is ``LIST_S`` old, when this process put a task into the queue since
(``swarm.queued_here``: a failed round, a review), or when the saved order changed (another
process read new names, or checked every file). Names found gone since (claimed by another
cycle: ``gone``) are passed by. What this gives is only a cycle's candidates (``pick.ahead``):
the task claimed is always checked again under the claim lock, and re-read from its file; a
task another process queued is seen within ``LIST_S`` by a loop that does not list it itself.
A cycle that finds no candidate here picks from a fresh listing under the lock (``pick.pick``),
as a single ``control-room cycle`` always does.
"""

from __future__ import annotations

import heapq
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from control_room.dispatch.queue import index
from control_room.dispatch.queue.index import Listed
from control_room.room import swarm
from control_room.room.layout import Room
from control_room.store import cache, lock

RECHECK_S = 10.0  # a cycle trusts the queue index this long after a full check
LIST_S = 1.0  # how long a process's listing of the queue serves its cycles' candidates
SCAN_LOCK = ".scan.lock"


def run_order(room: Room) -> Iterator[Listed]:
    """The queue in run order (priority, then age), for a cycle; lazily, so a cycle that finds
    its task early reads no more.

    Within ``RECHECK_S`` seconds of the last full check, files whose names the index knows are
    not stat()ed: a cycle that fires seconds after another need not stat 10,000 files. New
    names are always read (and rejected if invalid). What a cycle runs is always re-read from
    its file first (``pick``); only the order of other tasks can lag an edit by those
    few seconds.
    """
    listed = _listing(room)
    if isinstance(listed, list):
        yield from listed
        return
    yield from _walk(*listed)


def _listing(room: Room) -> list[Listed] | tuple[list[tuple[str, str]], set[str], list[Listed]]:
    """The queue in run order: after a full check, as it returns it; else the saved order, the
    names listed now and the new tasks read, to be walked (``_walk``)."""
    ordered, known_names = _saved_order(room)
    if not _recent(ordered):
        with lock.held(room.cr / SCAN_LOCK):  # one full check at a time: the others take its order
            ordered, known_names = _saved_order(room)
            if not _recent(ordered):
                return index.scan(room, "queue")  # a full check returns the queue in run order
    try:
        present = set(os.listdir(room.state_dir("queue")))
    except FileNotFoundError:
        return []
    names = sorted(n for n in present - known_names if not n.startswith(".") and not n.endswith(swarm.REASON))
    new: list[Listed] = []
    if names:
        new, present = index.read_new(room, names, present, float(ordered["checked"]))
    return ordered["order"], present, new


def _walk(
    order: list[tuple[str, str]],
    present: set[str],
    new: list[Listed],
    start: int = 0,
    gone: frozenset[str] = frozenset(),
) -> Iterator[Listed]:
    """The saved order from ``start``, less the names not ``present`` or ``gone``, merged with
    the ``new`` tasks (only then is a summary decoded, to compare)."""
    known = (Listed("queue", n, raw) for n, raw in order[start:] if n in present and n not in gone)
    if not new:
        yield from known
        return
    fresh = [t for t in new if t.name not in gone]
    yield from heapq.merge(known, index.queue_order(fresh), key=lambda t: index.order_key(t.summary, t.name))


def _recent(ordered: Any) -> bool:
    return (
        isinstance(ordered, dict)
        and ordered.get("v") == index.V
        and time.time() - float(ordered.get("checked") or 0) <= RECHECK_S
    )


_LOADED: list[Any] = []  # [path, its fingerprint, the order, its names]: the last order a process loaded


def _saved_order(room: Room) -> tuple[Any, set[str]]:
    """``.cache/queue.order`` and the names it holds, loaded again only when the file changed
    (a run loop's cycles share the 1 MB load of a 10,000-task queue's order)."""
    path = room.cache / "queue.order"
    fp = None if cache.holding() else cache.fingerprint(path)
    if fp is not None and _LOADED and _LOADED[0] == path and _LOADED[1] == fp:
        return _LOADED[2], _LOADED[3]
    ordered = cache.load(path)
    ok = isinstance(ordered, dict) and isinstance(ordered.get("order"), list)
    names = {n for n, _ in ordered["order"]} if ok else set()
    _LOADED[:] = [path, fp, ordered, names] if fp is not None and ok else []
    return ordered, names


class _Seen:
    """One process's last listing of one room's queue: the queue in run order after a full
    check (``listed``), else what ``_walk`` walks."""

    __slots__ = ("at", "gone", "listed", "queued", "root", "saved", "start")

    def __init__(self, root: Path, saved: Any, listed: list[Listed] | tuple[Any, ...]) -> None:
        self.root, self.saved, self.listed = root, saved, listed
        self.at, self.queued = time.monotonic(), swarm.queued_here
        self.gone: set[str] = set()
        self.start = 0  # the saved order's names before it are all gone or not listed


_SEEN: list[_Seen] = []  # at most one: the room a run loop works on


def candidates(room: Room) -> Iterator[Listed]:
    """The queue in run order, from this process's last listing (see the module's docstring).
    The listing is taken now, when it must be (a first scan reads every file then); the
    candidates come as they are walked."""
    saved = None if cache.holding() else cache.fingerprint(room.cache / "queue.order")
    seen = _SEEN[0] if _SEEN else None
    if (
        seen is None
        or saved is None
        or seen.root != room.root
        or seen.saved != saved
        or seen.queued != swarm.queued_here
        or time.monotonic() - seen.at > LIST_S
    ):
        listed = _listing(room)
        after = None if cache.holding() else cache.fingerprint(room.cache / "queue.order")
        seen = _Seen(room.root, after, listed)
        _SEEN[:] = [seen] if after is not None else []
    return _walk_seen(seen)


def _walk_seen(seen: _Seen) -> Iterator[Listed]:
    if isinstance(seen.listed, list):
        yield from (t for t in seen.listed if t.name not in seen.gone)
        return
    order, present, new = seen.listed
    while seen.start < len(order) and (
        order[seen.start][0] not in present or order[seen.start][0] in seen.gone
    ):
        seen.start += 1
    yield from _walk(order, present, new, seen.start, frozenset(seen.gone))


def gone(room: Room, name: str) -> None:
    """``name`` left the queue (claimed, here or by another cycle): passed by from now on."""
    if _SEEN and _SEEN[0].root == room.root:
        _SEEN[0].gone.add(name)
