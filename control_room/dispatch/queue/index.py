"""The task index: listing swarm folders fast, and the queue's run order.

Scanning a folder keeps a disposable index (``control-room/.cache/<state>.index``) of each
file's (mtime, size, inode) and a summary, so listing 10,000 tasks opens only the files that
changed since the last scan. Scanning the queue rejects files that admission refuses
(``admission.Stage.QUEUED``: the file itself, and its deps against one listing of the state
folders), and every task on a dependency cycle among queued tasks (found on the deps the index
keeps, only when a file just read has deps). The queue's run order is saved beside it
(``.cache/queue.order``) for cycles (``listing.run_order``). In ``running/``, the ``.claim`` beside
each task is not a task.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from control_room.dispatch.queue import deps
from control_room.room import swarm
from control_room.room.layout import CLAIM, Room
from control_room.room.tasks import Task
from control_room.room.values import is_id
from control_room.store import cache
from control_room.timeutil import now_iso

_SUMMARY_KEYS = (
    "priority",
    "created",
    "route",
    "role",
    "adapter",
    "model",
    "fallback",
    "deps",
    "gate",
    "owns",
    "rounds",
    "max_cost_usd",
    "done_at",
    "for_task",
    "reviews",
    "arbitrates",
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


def summarize(task: Task, mtime: float | None = None) -> dict[str, Any]:
    """What the index keeps of a task: enough to order, filter and list it."""
    fields: Mapping[str, Any] = task
    out = {k: fields[k] for k in _SUMMARY_KEYS if k in fields}
    out["id"] = task["id"]
    out["objective"] = " ".join(str(task.get("objective", "")).split())[:120]
    out.setdefault("priority", 0)
    out.setdefault("created", now_iso(mtime))
    return out


def _index_file(room: Room, state: str) -> Path:
    return room.cache / f"{state}.index"


V = 5  # the index format: entries carry their deps since 4, model and fallback since 5
LISTED_AFTER = 64  # files a scan admits with a stat per state folder before it lists the folders


def _load_index(room: Room, state: str) -> dict[str, Any]:
    idx = cache.load(_index_file(room, state))
    if isinstance(idx, dict) and idx.get("v") == V:
        return idx
    return {"v": V, "checked": 0.0, "files": {}}


class _Queued:
    """What one pass over the queue needs to admit the files it reads: where each dep is
    (``swarm.Folders``: one listing per state folder, taken only if a task has deps), whether a
    file just read has deps (then the queue is checked for dependency cycles), and whether a
    refused file is rejected or only listed with its problem (``reject=False``: ``status``,
    which changes nothing)."""

    def __init__(self, room: Room, reject: bool) -> None:
        self.room, self.reject = room, reject
        self.folders: swarm.Folders | None = None
        self.deps = False

        self.read = 0  # files admitted so far in this pass

    def where(self, task_id: str) -> str | None:
        if self.folders is None:
            self.folders = swarm.Folders(self.room)
        return self.folders.state_of(task_id)

    def holder(self, task_id: str, skip: str | None) -> str | None:
        """Which other folder holds ``task_id``: a stat per folder for the first few files read,
        then (a first scan, thousands read) one listing per folder."""
        self.read += 1
        if self.read <= LISTED_AFTER:
            return swarm.state_of(self.room, task_id, skip=skip)
        if self.folders is None:
            self.folders = swarm.Folders(self.room)
        return self.folders.holder(task_id, skip or "")


def scan(room: Room, state: str, *, reject: bool = True) -> list[Listed]:
    """Every task file in one state folder (a full check: every file is stat()ed); the queue
    comes back in run order. In the queue, files admission refuses are rejected here; with
    ``reject=False`` they are listed last with their problem instead, and left where they are
    (the next scan that may reject them will).

    Files whose (mtime, size, inode) match the index are not opened. The index is written
    back when a file had to be read, and after a full check of the queue (its time is what
    lets ``run_order`` trust the index for a few seconds).
    """
    folder = room.state_dir(state)
    known: dict[str, Any] = _load_index(room, state)["files"]
    files: dict[str, Any] = {}
    out: list[Listed] = []
    refused: list[Listed] = []
    fresh = 0
    started = time.time()
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return []
    skip = (swarm.REASON, CLAIM) if state == "running" else (swarm.REASON,)
    queued = _Queued(room, reject) if state == "queue" else None
    seen: list[tuple[str, str, os.stat_result, tuple[int, int, int]]] = []
    for entry in entries:
        name = entry.name
        if name.startswith(".") or name.endswith(skip) or entry.is_dir():  # a FIFO is read: refused
            continue
        try:
            st = entry.stat()
        except FileNotFoundError:
            continue  # moved by another process meanwhile
        seen.append((name, entry.path, st, (st.st_mtime_ns, st.st_size, st.st_ino)))
    fresh_paths = [path for name, path, _, key in seen if (known.get(name) or (None,))[0] != key]
    read = _examine_all(room, fresh_paths, queued)
    for name, path, st, key in seen:
        hit = known.get(name)
        if hit is not None and hit[0] == key:
            files[name] = hit
        else:
            fresh += 1
            summary = _read_summary(room, state, path, st, queued, read.pop(path, None))
            if summary is None:
                continue
            if queued is not None and "problem" in summary:
                refused.append(Listed(state, name, summary))  # not kept: a later scan rejects it
                continue
            files[name] = _entry(key, summary)
        out.append(Listed(state, name, files[name][2]))
    if queued is not None and queued.deps:
        refused += _drop_cycles(room, files, queued.reject)
    if queued is not None and not queued.reject and not fresh and len(known) == len(files):
        return [Listed(state, n, files[n][2]) for n in _order(files)] + refused  # status: no write
    if fresh or state == "queue" or len(known) > 2 * len(files) + 100:
        order = _save_index(room, state, files, started if state == "queue" else 0.0)
        if state == "queue":
            return [Listed(state, n, files[n][2]) for n in order] + refused
    return out


def _read_summary(
    room: Room,
    state: str,
    path: Path | str,
    st: os.stat_result,
    queued: _Queued | None,
    read: tuple[Task, list[str]] | None = None,
) -> dict[str, Any] | None:
    """Read one file for the index (``read``: ``_examine`` did already). A file in the queue
    that admission refuses is rejected (None), or with ``reject=False`` summarised as its problem."""
    task, problems = read or _examine(room, path, queued)
    if queued is not None and not problems:
        queued.deps = queued.deps or bool(task.get("deps"))
    if problems and queued is not None and queued.reject:
        name = os.path.basename(path)
        stem = name.removesuffix(".json")
        swarm.reject(room, name, problems, task_id=stem if is_id(stem) else "")
        return None
    if not problems:
        return summarize(task, st.st_mtime)
    if queued is not None and task.get("id"):  # a valid task admission refused: named by its id
        return {"id": task["id"], "problem": "; ".join(problems)}
    return {"problem": "; ".join(problems)}


def _examine(room: Room, path: Path | str, queued: _Queued | None) -> tuple[Task, list[str]]:
    """A file read, checked and (in the queue) asked of admission: the task and its problems.
    Changes nothing (``_read_summary`` rejects)."""
    task, problems = swarm.read_task(path)
    if queued is not None and not problems:
        # Only for a file read afresh: `status` on a known queue does not load admission (~1.5 ms).
        from control_room.dispatch.queue.admission import Refused, Stage, admit

        try:
            admit(room, task, Stage.QUEUED, where=queued.where, holder=queued.holder)
        except Refused as exc:
            problems = [str(exc)]
    return task, problems


PRELOAD_AT = 2000  # files read afresh from which a scan reads them in a process per core
PRELOAD_CORES = 4


def _examine_all(room: Room, paths: list[str], queued: _Queued | None) -> dict[str, tuple[Task, list[str]]]:
    """``_examine`` of each of ``paths``, by path, for a first scan of thousands of files on a
    machine of several cores: all but one share read by forked children (what git's
    ``core.preloadIndex`` does for its index), which change nothing and send their answers back
    through a pipe (``marshal``: a task is JSON's types); a share a child could not do is read
    here (no child is forked where threads run: ``interrupt.fork``), as every file is when the
    scan is small ({} then)."""
    cores = min(os.cpu_count() or 1, PRELOAD_CORES)
    if len(paths) < PRELOAD_AT or cores < 2:
        return {}
    import marshal  # only for a first scan of thousands of files

    from control_room import interrupt  # signal: likewise

    chunks = [paths[k::cores] for k in range(cores)]
    children: list[tuple[int | None, int, list[str]]] = []
    for chunk in chunks[1:]:
        r, w = os.pipe()
        try:
            pid = interrupt.fork()  # a signal ends the child at once
        except OSError:
            os.close(r)
            os.close(w)
            children.append((None, -1, chunk))
            continue
        if pid == 0:  # the child: its share, sent back, and out at once (no exit handlers, no flush)
            try:
                os.close(r)
                data = marshal.dumps(_examine_chunk(room, queued, chunk))
                with os.fdopen(w, "wb") as out:
                    out.write(data)
            finally:
                os._exit(0)
        os.close(w)
        children.append((pid, r, chunk))
    found = dict(zip(chunks[0], _examine_chunk(room, queued, chunks[0]), strict=True))
    for child, r, chunk in children:
        data = b""
        if child is not None:
            with os.fdopen(r, "rb") as got:
                data = got.read()
            os.waitpid(child, 0)
        try:
            found.update(zip(chunk, marshal.loads(data), strict=True))
        except (EOFError, ValueError, TypeError):
            found.update(zip(chunk, _examine_chunk(room, queued, chunk), strict=True))  # read here instead
    return found


def _examine_chunk(room: Room, queued: _Queued | None, paths: list[str]) -> list[tuple[Task, list[str]]]:
    """``_examine`` of each path, with listings of its own (a child's are its own)."""
    own = _Queued(room, reject=False) if queued is not None else None
    return [_examine(room, path, own) for path in paths]


def _drop_cycles(room: Room, files: dict[str, Any], reject: bool) -> list[Listed]:
    """Take every task on a dependency cycle out of ``files`` (the queue's index entries);
    reject each, or with ``reject=False`` return them listed with the cycle as their problem."""
    loops = deps.cycles({n[: -len(".json")]: v[3] for n, v in files.items() if v[3]})
    out = []
    for task_id, (loop, at) in sorted(loops.items()):
        name = f"{task_id}.json"
        del files[name]
        why = deps.cycle_refusal(loop, at)
        if reject:
            swarm.reject(room, name, [why], task_id=task_id)
        else:
            out.append(Listed("queue", name, {"id": task_id, "problem": why}))
    return out


def _entry(key: tuple[int, int, int], summary: dict[str, Any]) -> tuple[Any, ...]:
    """An index entry: (stat key, sort key, summary as JSON text, deps)."""
    waits_for = tuple(summary.get("deps") or ())
    return (key, order_key(summary, "")[:2], json.dumps(summary, separators=(",", ":")), waits_for)


def _save_index(room: Room, state: str, files: dict[str, Any], checked: float) -> list[str]:
    """Write the index, and for the queue the run order beside it (``queue.order``: names and
    summaries in order, all a cycle reads between full checks); return that order."""
    order = _order(files)
    cache.save(_index_file(room, state), {"v": V, "checked": checked, "files": files})
    if state == "queue":
        cache.save(
            room.cache / "queue.order",
            {"v": V, "checked": checked, "order": [(n, files[n][2]) for n in order]},
        )
    return order


def _order(files: dict[str, Any]) -> list[str]:
    """File names in run order, from the sort keys the index keeps (no summary is decoded)."""
    return [n for _, n in sorted((v[1], n) for n, v in files.items())]


def read_new(
    room: Room, names: list[str], present: set[str], checked: float
) -> tuple[list[Listed], set[str]]:
    """The queue's files ``names`` that its saved order does not know, read (and rejected if
    invalid, as a scan does), their entries added to the index; a file with deps may close a
    dependency cycle, whose tasks are rejected too. Returns the new tasks and ``present`` (the
    queue's listing) less what was rejected."""
    new: list[Listed] = []
    files: dict[str, Any] | None = None
    queued = _Queued(room, reject=True)
    for name in names:
        if files is None:
            files = _load_index(room, "queue")["files"]
        path = room.state_dir("queue") / name
        try:
            st = os.stat(path)
        except FileNotFoundError:
            continue
        summary = _read_summary(room, "queue", path, st, queued)
        if summary is not None:
            files[name] = _entry((st.st_mtime_ns, st.st_size, st.st_ino), summary)
            new.append(Listed("queue", name, summary))
    if queued.deps and files is not None:  # a new file with deps may close a cycle
        files = {n: v for n, v in files.items() if n in present}
        _drop_cycles(room, files, reject=True)
        present = present & set(files)
        new = [t for t in new if t.name in files]
    if new and files is not None:
        _save_index(room, "queue", files, checked)
    return new, present


def order_key(summary: dict[str, Any], name: str) -> tuple[int, str, str]:
    """Priority first (higher first), then age (older first), then name."""
    return (-int(summary.get("priority") or 0), str(summary.get("created", "")), name)


def queue_order(listed: list[Listed]) -> list[Listed]:
    """Priority first (higher first), then age (older first), then name."""
    return sorted(listed, key=lambda t: order_key(t.summary, t.name))
