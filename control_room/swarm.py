"""The swarm folders: tasks on disk and their moves between states.

A task is ``swarm/<state>/<id>.json``. Moves between states are ``os.rename`` within one file
system, so a task is in exactly one folder at any time. Scanning a folder keeps a disposable
index (``control-room/.cache/<state>.json``) of each file's fingerprint and summary, so listing
10,000 tasks reads only the files that changed since the last scan. Scanning the queue rejects
files that are not valid tasks: they move to ``swarm/rejected/`` with a ``.reason`` file beside
them and a ledger line, and never block the others.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from control_room import tasks
from control_room.errors import InvalidError, NotFoundError
from control_room.room import STATES, Room
from control_room.store import cache
from control_room.timeutil import now_iso

MAX_TASK_BYTES = 1 << 20
REASON = ".reason"
_SUMMARY_KEYS = ("priority", "created", "route", "role", "adapter", "deps", "gate", "owns", "rounds",
                 "max_cost_usd", "done_at")


@dataclass
class Listed:
    state: str
    name: str  # file name in the state folder
    summary: dict[str, Any]  # id, objective, priority, created, ... ; "problem" if not a task

    @property
    def id(self) -> str:
        return str(self.summary.get("id") or self.name)


def task_file(room: Room, state: str, task_id: str) -> Path:
    """The path of a task file; the id is checked, never joined into a path unchecked."""
    if not tasks.is_id(task_id):
        raise InvalidError(f"{task_id!r} is not a task id (ids match [a-z0-9][a-z0-9._-]{{0,63}})")
    return room.state_dir(state) / f"{task_id}.json"


def locate(room: Room, task_id: str) -> tuple[str, Path]:
    """(state, path) of the task with this id, wherever it is."""
    for state in STATES:
        path = task_file(room, state, task_id)
        if path.exists():
            return state, path
    raise NotFoundError(f"no task {task_id} in {room.swarm}")


def read_task(path: Path) -> tuple[dict[str, Any], list[str]]:
    """Load and validate one task file; (task, problems), never raises for bad content."""
    name = path.name
    if not name.endswith(".json"):
        return {}, ["not a task file: task files are named <id>.json"]
    stem = name[: -len(".json")]
    if not tasks.is_id(stem):
        return {}, [f"file name {name!r} is not <id>.json with an id matching [a-z0-9][a-z0-9._-]{{0,63}}"]
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_TASK_BYTES + 1)
    except OSError as exc:
        return {}, [f"cannot read: {exc.strerror or exc}"]
    if len(raw) > MAX_TASK_BYTES:
        return {}, [f"larger than {MAX_TASK_BYTES} bytes"]
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        return {}, [f"not UTF-8 text (byte {exc.start})"]
    except json.JSONDecodeError as exc:
        return {}, [f"not valid JSON: {exc.msg} (line {exc.lineno} column {exc.colno})"]
    except RecursionError:
        return {}, ["not valid JSON: nested too deeply"]
    return tasks.validate(data, expected_id=stem)


def _summary(task: dict[str, Any], st: os.stat_result) -> dict[str, Any]:
    out = {k: task[k] for k in _SUMMARY_KEYS if k in task}
    out["id"] = task["id"]
    out["objective"] = " ".join(str(task.get("objective", "")).split())[:120]
    out.setdefault("priority", 0)
    out.setdefault("created", now_iso(st.st_mtime))
    return out


def scan(room: Room, state: str) -> list[Listed]:
    """Every task file in one state folder. In the queue, invalid files are rejected here."""
    folder = room.state_dir(state)
    index_file = room.cache / f"{state}.json"
    old = cache.load(index_file)
    old = old if isinstance(old, dict) and old.get("v") == 1 else {"v": 1, "files": {}}
    files: dict[str, Any] = {}
    out: list[Listed] = []
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return []
    for entry in entries:
        name = entry.name
        if name.startswith(".") or name.endswith(REASON):
            continue
        try:
            st = entry.stat()
        except FileNotFoundError:
            continue  # moved by another process meanwhile
        if not entry.is_file():
            continue
        key = [st.st_mtime_ns, st.st_size, st.st_ino]
        hit = old["files"].get(name)
        if hit is not None and hit[0] == key:
            summary = hit[1]
        else:
            task, problems = read_task(Path(entry.path))
            if problems and state == "queue":
                stem = name.removesuffix(".json")
                reject(room, name, problems, task_id=stem if tasks.is_id(stem) else "")
                continue
            summary = _summary(task, st) if not problems else {"problem": "; ".join(problems)}
        files[name] = [key, summary]
        out.append(Listed(state, name, summary))
    if files != old["files"]:
        cache.save(index_file, {"v": 1, "files": files})
    return out


def _free_name(folder: Path, name: str) -> Path:
    candidate, n = folder / name, 1
    while os.path.lexists(candidate) or os.path.lexists(f"{candidate}{REASON}"):
        n += 1
        candidate = folder / f"{name}.{n}"
    return candidate


def reject(room: Room, name: str, problems: list[str], *, task_id: str = "") -> Path | None:
    """Move ``swarm/queue/<name>`` to ``swarm/rejected/`` with a reason; None if it is gone."""
    from control_room import ledger
    from control_room.store.files import atomic_write

    src = room.state_dir("queue") / name
    dst = _free_name(room.state_dir("rejected"), name)
    try:
        os.rename(src, dst)
    except FileNotFoundError:
        return None  # another process moved it first
    why = "; ".join(problems)
    atomic_write(
        Path(f"{dst}{REASON}"),
        f"Rejected from swarm/queue/{name} at {now_iso()}:\n\n"
        + "".join(f"- {p}\n" for p in problems)
        + "\nFix the file and move it back into swarm/queue/, or delete it.\n",
    )
    ledger.append(room.ledger, "reject", task=task_id, outcome="rejected",
                  detail=f"swarm/queue/{name} -> swarm/rejected/{dst.name}: {why}")  # fmt: skip
    return dst


def write_new(room: Room, task: dict[str, Any]) -> Path:
    """Create ``swarm/queue/<id>.json``; refuses an id that exists in any state."""
    from control_room.store.files import create_exclusive

    task_id = task["id"]
    for state in STATES:
        if task_file(room, state, task_id).exists():
            raise InvalidError(f"task {task_id} exists already in swarm/{state}/")
    path = task_file(room, "queue", task_id)
    if not create_exclusive(path, dumps(task)):
        raise InvalidError(f"task {task_id} exists already in swarm/queue/")
    return path


def add(room: Room, data: dict[str, Any]) -> dict[str, Any]:
    """Validate ``data`` and queue it as a new task (SPEC §3); return the task as written."""
    from control_room import context, control, ledger

    data = {k: v for k, v in data.items() if v not in (None, "", [], ())}
    missing = tasks.missing_fields(data)
    if missing:
        raise InvalidError(
            f"task refused: missing {', '.join(missing)} "
            "(a task that cannot state its falsifier is a vibe, not a task)"
        )
    if "id" not in data:
        data["id"] = tasks.new_id(str(data.get("objective", "")))
    data.setdefault("created", now_iso())
    task, problems = tasks.validate(data)
    if problems:
        raise InvalidError("task refused: " + "; ".join(problems))
    gate = control.load(room)
    if task["max_cost_usd"] > gate["max_task_cost_usd"]:
        raise InvalidError(
            f"task refused: max_cost_usd {task['max_cost_usd']} is above CONTROL.md "
            f"max_task_cost_usd {gate['max_task_cost_usd']}"
        )
    queued = room.counts()["queue"]
    if queued >= gate["max_queued"]:
        from control_room.errors import QueueFullError

        raise QueueFullError(
            f"task refused: the queue is full ({queued} tasks, CONTROL.md max_queued "
            f"{gate['max_queued']}); nothing was written"
        )
    write_new(room, task)
    ledger.append(room.ledger, "task-add", task=task["id"], route=task.get("route", ""),
                  adapter=task.get("adapter", ""), outcome="queued",
                  detail=str(task["objective"]))  # fmt: skip
    context.refresh(room)
    return task


def queue_order(listed: list[Listed]) -> list[Listed]:
    """Priority first (higher first), then age (older first), then id."""
    return sorted(listed, key=lambda t: (-int(t.summary.get("priority") or 0),
                                         str(t.summary.get("created", "")), t.id))  # fmt: skip


def dumps(task: dict[str, Any]) -> str:
    ordered = {f.name: task[f.name] for f in tasks.FIELDS if f.name in task}
    return json.dumps(ordered, indent=2, ensure_ascii=False) + "\n"


def reason_path(path: Path) -> Path:
    """Where the reason beside a task file is: ``parked/ID.reason``, ``rejected/NAME.reason``."""
    if path.parent.name == "rejected":
        return path.with_name(path.name + REASON)
    return path.with_name(path.name.removesuffix(".json") + REASON)


def move(room: Room, task_id: str, src: str, dst: str, *, task: dict[str, Any] | None = None,
         reason: str | None = None) -> Path:  # fmt: skip
    """Move a task between state folders (one rename), rewriting it first if ``task`` is given.

    A reason file beside the source goes away; ``reason`` writes one beside the destination.
    """
    from control_room.errors import ConflictError
    from control_room.store.files import atomic_write

    s, d = task_file(room, src, task_id), task_file(room, dst, task_id)
    if os.path.lexists(d):
        raise ConflictError(f"task {task_id} exists already in swarm/{dst}/")
    if task is not None:
        atomic_write(s, dumps(task))
    try:
        os.rename(s, d)
    except FileNotFoundError:
        raise NotFoundError(f"task {task_id} is not in swarm/{src}/ any more") from None
    try:
        os.unlink(reason_path(s))
    except FileNotFoundError:
        pass
    if reason is not None:
        atomic_write(reason_path(d), reason)
    return d
