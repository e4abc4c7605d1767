"""The swarm folders: tasks on disk, adding them, and their moves between states.

A task is ``swarm/<state>/<id>.json``. Moves between states are ``os.rename`` within one file
system, so a task is in exactly one folder at any time. A file in the queue that is not a valid
task moves to ``swarm/rejected/`` with a ``.reason`` file beside it and a ledger line, and never
blocks the others. Listing folders fast is ``index``'s job.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from control_room.errors import InvalidError, NotFoundError
from control_room.room import tasks
from control_room.room.layout import STATES, Room
from control_room.timeutil import now_iso

MAX_TASK_BYTES = 1 << 20
REASON = ".reason"


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


def read_queued(room: Room, path: Path) -> tuple[dict[str, Any], list[str]]:
    """``read_task`` for a file in the queue, which also must not reuse an id found elsewhere."""
    task, problems = read_task(path)
    if not problems:
        elsewhere = [s for s in STATES if s != "queue" and task_file(room, s, task["id"]).exists()]
        if elsewhere:
            problems = [
                f"task {task['id']} exists already in swarm/{elsewhere[0]}/: ids are unique; "
                "give this one a new id (and file name)"
            ]
    return task, problems


def _free_name(folder: Path, name: str) -> Path:
    candidate, n = folder / name, 1
    while os.path.lexists(candidate) or os.path.lexists(f"{candidate}{REASON}"):
        n += 1
        candidate = folder / f"{name}.{n}"
    return candidate


def reject(
    room: Room, name: str, problems: list[str], *, task_id: str = "", state: str = "queue"
) -> Path | None:
    """Move ``swarm/<state>/<name>`` to ``swarm/rejected/`` with a reason; None if it is gone."""
    from control_room import ledger
    from control_room.store.files import atomic_write

    src = room.state_dir(state) / name
    dst = _free_name(room.state_dir("rejected"), name)
    try:
        os.rename(src, dst)
    except FileNotFoundError:
        return None  # another process moved it first
    why = "; ".join(problems)
    atomic_write(
        Path(f"{dst}{REASON}"),
        f"Rejected from swarm/{state}/{name} at {now_iso()}:\n\n"
        + "".join(f"- {p}\n" for p in problems)
        + "\nFix the file and move it back into swarm/queue/, or delete it.\n",
    )
    ledger.append(
        room.ledger,
        "reject",
        task=task_id,
        outcome="rejected",
        detail=f"swarm/{state}/{name} -> swarm/rejected/{dst.name}: {why}",
    )
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


def add(room: Room, data: dict[str, Any], *, source: str = "") -> dict[str, Any]:
    """Validate ``data`` and queue it as a new task (SPEC §3); return the task as written."""
    from control_room import ledger
    from control_room.room import settings as control
    from control_room.views import context

    gate = control.load(room)
    task = check_new(room, gate, data)
    queued = room.counts()["queue"]
    if queued >= gate["max_queued"]:
        from control_room.errors import QueueFullError

        raise QueueFullError(
            f"task refused: the queue is full ({queued} tasks, CONTROL.md max_queued "
            f"{gate['max_queued']}); nothing was written"
        )
    write_new(room, task)
    ledger.append(
        room.ledger,
        "task-add",
        task=task["id"],
        route=task.get("route", ""),
        adapter=task.get("adapter", ""),
        outcome="queued",
        detail=(f"proposed by {source}: " if source else "") + str(task["objective"]),
    )
    context.refresh(room)
    return task


def check_new(room: Room, gate: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """The checks of ``add`` without writing anything: the task as it would be queued."""
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
    _check_runnable(room, gate, task)
    if task["max_cost_usd"] > gate["max_task_cost_usd"]:
        raise InvalidError(
            f"task refused: max_cost_usd {task['max_cost_usd']} is above CONTROL.md "
            f"max_task_cost_usd {gate['max_task_cost_usd']}"
        )
    for state in STATES:
        if task_file(room, state, task["id"]).exists():
            raise InvalidError(f"task refused: task {task['id']} exists already in swarm/{state}/")
    return task


def _check_runnable(room: Room, gate: dict[str, Any], task: dict[str, Any]) -> None:
    """Refuse at once what a cycle would refuse later: an unknown role or adapter, a probe
    task without a command, extra_args the gate does not allow."""
    from control_room import adapters
    from control_room.dispatch import prompt

    try:
        settings, _ = prompt.role(room, task.get("role") or "engineer")
        name = task.get("adapter") or settings.get("adapter") or gate["default_adapter"]
        adapter = adapters.get(str(name))
        inv = adapters.Invocation(task, "", room.root, room.root, settings=prompt.settings(gate, settings))
        adapter.command(inv)
    except InvalidError as exc:
        raise InvalidError(f"task refused: {exc}") from None
    if task.get("extra_args") and not gate["allow_extra_args"]:
        raise InvalidError("task refused: extra_args given but CONTROL.md allow_extra_args is false")
    from control_room.knowledge import graveyard

    why = graveyard.refusal(room, task.get("route") or "")
    if why is not None:
        raise InvalidError(f"task refused: {why}")


def dumps(task: dict[str, Any]) -> str:
    ordered = {f.name: task[f.name] for f in tasks.FIELDS if f.name in task}
    return json.dumps(ordered, indent=2, ensure_ascii=False) + "\n"


def reason_path(path: Path) -> Path:
    """Where the reason beside a task file is: ``parked/ID.reason``, ``rejected/NAME.reason``."""
    if path.parent.name == "rejected":
        return path.with_name(path.name + REASON)
    return path.with_name(path.name.removesuffix(".json") + REASON)


def move(
    room: Room,
    task_id: str,
    src: str,
    dst: str,
    *,
    task: dict[str, Any] | None = None,
    reason: str | None = None,
) -> Path:
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
