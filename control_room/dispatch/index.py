"""The task index: listing swarm folders fast, and the queue's run order.

Scanning a folder keeps a disposable index (``control-room/.cache/<state>.index``) of each
file's (mtime, size, inode) and a summary, so listing 10,000 tasks opens only the files that
changed since the last scan. Scanning the queue rejects files that admission refuses
(``admission.Stage.QUEUED``: the file itself). The queue's run order is saved beside it
(``.cache/queue.order``) for cycles (see ``run_order``).
"""

from __future__ import annotations

import heapq
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from control_room.dispatch.admission import Refused, Stage, admit
from control_room.room import swarm
from control_room.room.layout import Room
from control_room.room.values import is_id
from control_room.store import cache
from control_room.timeutil import now_iso

_SUMMARY_KEYS = (
    "priority",
    "created",
    "route",
    "role",
    "adapter",
    "deps",
    "gate",
    "owns",
    "rounds",
    "max_cost_usd",
    "done_at",
)


class Listed:
    """A task file as the index knows it. Its summary (id, objective, priority, created, ...;
    "problem" if it is not a task) is kept as JSON text and decoded only when looked at, so a
    cycle that looks at three tasks out of 10,000 decodes three."""

    __slots__ = ("_raw", "name", "state")

    def __init__(self, state: str, name: str, summary: dict[str, Any] | str) -> None:
        self.state, self.name, self._raw = state, name, summary

    @property
    def summary(self) -> dict[str, Any]:
        raw = self._raw
        if isinstance(raw, dict):
            return raw
        decoded: dict[str, Any] = json.loads(raw)
        self._raw = decoded
        return decoded

    @property
    def id(self) -> str:
        return str(self.summary.get("id") or self.name)


def summarize(task: dict[str, Any], mtime: float | None = None) -> dict[str, Any]:
    """What the index keeps of a task: enough to order, filter and list it."""
    out = {k: task[k] for k in _SUMMARY_KEYS if k in task}
    out["id"] = task["id"]
    out["objective"] = " ".join(str(task.get("objective", "")).split())[:120]
    out.setdefault("priority", 0)
    out.setdefault("created", now_iso(mtime))
    return out


def _index_file(room: Room, state: str) -> Path:
    return room.cache / f"{state}.index"


def _load_index(room: Room, state: str) -> dict[str, Any]:
    idx = cache.load(_index_file(room, state))
    if isinstance(idx, dict) and idx.get("v") == 3:
        return idx
    return {"v": 3, "checked": 0.0, "files": {}}


def scan(room: Room, state: str) -> list[Listed]:
    """Every task file in one state folder (a full check: every file is stat()ed); the queue
    comes back in run order. In the queue, invalid files are rejected here.

    Files whose (mtime, size, inode) match the index are not opened. The index is written
    back when a file had to be read, and after a full check of the queue (its time is what
    lets ``run_order`` trust the index for a few seconds).
    """
    folder = room.state_dir(state)
    known: dict[str, Any] = _load_index(room, state)["files"]
    files: dict[str, Any] = {}
    out: list[Listed] = []
    fresh = 0
    started = time.time()
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return []
    reason = swarm.REASON
    for entry in entries:
        name = entry.name
        if name.startswith(".") or name.endswith(reason) or not entry.is_file():
            continue
        try:
            st = entry.stat()
        except FileNotFoundError:
            continue  # moved by another process meanwhile
        key = (st.st_mtime_ns, st.st_size, st.st_ino)
        hit = known.get(name)
        if hit is not None and hit[0] == key:
            files[name] = hit
        else:
            fresh += 1
            summary = _read_summary(room, state, Path(entry.path), st)
            if summary is None:
                continue
            files[name] = _entry(key, summary)
        out.append(Listed(state, name, files[name][2]))
    if fresh or state == "queue" or len(known) > 2 * len(files) + 100:
        order = _save_index(room, state, files, started if state == "queue" else 0.0)
        if state == "queue":
            return [Listed(state, n, files[n][2]) for n in order]
    return out


def _read_summary(room: Room, state: str, path: Path, st: os.stat_result) -> dict[str, Any] | None:
    """Read one file for the index; a file in the queue that admission refuses is rejected (None)."""
    task, problems = swarm.read_task(path)
    if state == "queue" and not problems:
        try:
            admit(room, task, Stage.QUEUED)
        except Refused as exc:
            problems = [str(exc)]
    if problems and state == "queue":
        stem = path.name.removesuffix(".json")
        swarm.reject(room, path.name, problems, task_id=stem if is_id(stem) else "")
        return None
    return summarize(task, st.st_mtime) if not problems else {"problem": "; ".join(problems)}


def _entry(key: tuple[int, int, int], summary: dict[str, Any]) -> tuple[Any, ...]:
    """An index entry: (stat key, sort key, summary as JSON text)."""
    return (key, order_key(summary, "")[:2], json.dumps(summary, separators=(",", ":")))


def _save_index(room: Room, state: str, files: dict[str, Any], checked: float) -> list[str]:
    """Write the index, and for the queue the run order beside it (``queue.order``: names and
    summaries in order, all a cycle reads between full checks); return that order."""
    order = [n for _, n in sorted((v[1], n) for n, v in files.items())]
    cache.save(_index_file(room, state), {"v": 3, "checked": checked, "files": files})
    if state == "queue":
        cache.save(
            room.cache / "queue.order",
            {"v": 3, "checked": checked, "order": [(n, files[n][2]) for n in order]},
        )
    return order


RECHECK_S = 10.0  # a cycle trusts the queue index this long after a full check


def run_order(room: Room) -> Iterator[Listed]:
    """The queue in run order (priority, then age), for a cycle; lazily, so a cycle that finds
    its task early reads no more.

    Within ``RECHECK_S`` seconds of the last full check, files whose names the index knows are
    not stat()ed: a cycle that fires seconds after another need not stat 10,000 files. New
    names are always read (and rejected if invalid). What a cycle runs is always re-read from
    its file first (``pick``); only the order of other tasks can lag an edit by those
    few seconds.
    """
    ordered = cache.load(room.cache / "queue.order")
    if not (
        isinstance(ordered, dict)
        and ordered.get("v") == 3
        and time.time() - float(ordered.get("checked") or 0) <= RECHECK_S
    ):
        yield from scan(room, "queue")  # a full check returns the queue in run order
        return
    order: list[tuple[str, str]] = ordered["order"]
    known_names = {n for n, _ in order}
    try:
        listed = os.listdir(room.state_dir("queue"))
        names = [n for n in listed if not n.startswith(".") and not n.endswith(swarm.REASON)]
    except FileNotFoundError:
        return
    present = set(names)
    new: list[Listed] = []
    files: dict[str, Any] | None = None
    for name in names:
        if name in known_names:
            continue
        if files is None:
            files = _load_index(room, "queue")["files"]
        path = room.state_dir("queue") / name
        try:
            st = os.stat(path)
        except FileNotFoundError:
            continue
        summary = _read_summary(room, "queue", path, st)
        if summary is not None:
            files[name] = _entry((st.st_mtime_ns, st.st_size, st.st_ino), summary)
            new.append(Listed("queue", name, summary))
    if new and files is not None:
        _save_index(room, "queue", files, float(ordered["checked"]))
    known = (Listed("queue", n, raw) for n, raw in order if n in present)
    yield from heapq.merge(known, queue_order(new), key=lambda t: order_key(t.summary, t.name))


def order_key(summary: dict[str, Any], name: str) -> tuple[int, str, str]:
    """Priority first (higher first), then age (older first), then name."""
    return (-int(summary.get("priority") or 0), str(summary.get("created", "")), name)


def queue_order(listed: list[Listed]) -> list[Listed]:
    """Priority first (higher first), then age (older first), then name."""
    return sorted(listed, key=lambda t: order_key(t.summary, t.name))
