"""The swarm folders: task files on disk and their moves between states.

A task is ``swarm/<state>/<id>.json``. Moves between states are one ``os.rename`` within one
file system, so a task is in exactly one folder at any time. A file that is not a valid task
moves to ``swarm/rejected/`` with a ``.reason`` file beside it and a ledger line, and never
blocks the others. Whether a task may enter the queue or run is ``dispatch.queue.admission``'s
question; listing folders fast is ``dispatch.queue.index``'s.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from control_room import ledger
from control_room.errors import ConflictError, InvalidError, NotFoundError
from control_room.ledger import events
from control_room.room import shell, tasks, values
from control_room.room.layout import STATES, Room
from control_room.room.tasks import Task
from control_room.room.values import check_id, is_id
from control_room.store import records
from control_room.store.files import atomic_write, create_exclusive
from control_room.timeutil import now_iso

REASON = ".reason"
# Where a task lives, a copy in rejected/ last: rejected/ may also hold a stale copy of an id
# that lives in another folder (a hand-dropped duplicate is rejected there).
LIVE_FIRST = (*(s for s in STATES if s != "rejected"), "rejected")


def task_file(room: Room, state: str, task_id: str) -> Path:
    """The path of a task file; the id is checked, never joined into a path unchecked."""
    return room.state_dir(state) / f"{check_id(task_id, 'task')}.json"


def state_of(
    room: Room, task_id: str, *, skip: str | None = None, order: tuple[str, ...] = STATES
) -> str | None:
    """The state folder that holds this task (other than ``skip``; the first in ``order``), or None."""
    return next((s for s in order if s != skip and task_file(room, s, task_id).exists()), None)


class Folders:
    """Which ids each state folder holds, from one listing per folder taken on first need: for
    questions about many ids at once (the queue scan, a pick, a listing), where a stat per id
    and state would cost more. A snapshot: a move after the listing is not seen."""

    def __init__(self, room: Room) -> None:
        self.room = room
        self._ids: dict[str, frozenset[str]] = {}

    def ids(self, state: str) -> frozenset[str]:
        """The ids of the task files (``<id>.json``, not hidden) in one state folder."""
        found = self._ids.get(state)
        if found is None:
            try:
                names = os.listdir(self.room.state_dir(state))
            except FileNotFoundError:
                names = []
            found = frozenset(n[:-5] for n in names if n.endswith(".json") and not n.startswith("."))
            self._ids[state] = found
        return found

    def state_of(self, task_id: str) -> str | None:
        """The state folder holding this id (``rejected/`` last: ``LIVE_FIRST``), or None."""
        return next((s for s in LIVE_FIRST if task_id in self.ids(s)), None)

    def holder(self, task_id: str, skip: str) -> str | None:
        """``swarm.state_of(room, task_id, skip=skip)`` from the listings."""
        return next((s for s in STATES if s != skip and task_id in self.ids(s)), None)


def free_id(room: Room, stem: str) -> str:
    """``stem`` if no state folder holds a task with that id, else ``stem-2``, ``stem-3``...
    (the ids the dispatcher gives the tasks it queues itself: reviews, arbiters, helpers)."""
    n, tid = 1, stem
    while state_of(room, tid) is not None:
        n += 1
        tid = f"{stem}-{n}"
    return tid


def locate(room: Room, task_id: str) -> tuple[str, Path]:
    """(state, path) of the task with this id, wherever it is."""
    state = state_of(room, task_id)
    if state is None:
        raise NotFoundError(f"no task {task_id} in {room.swarm}")
    return state, task_file(room, state, task_id)


MAX_BYTES = records.MAX_BYTES
TOO_BIG = f"the task file is larger than {MAX_BYTES} bytes (1 MiB): keep long text in a file the task names"


def read_task(path: Path | str) -> tuple[Task, list[str]]:
    """Load and validate one task file; (task, problems), never raises for bad content."""
    name = os.path.basename(path)
    problem = _name_problem(name)
    if problem is not None:
        return tasks.as_task({}), [problem]
    try:
        raw = records.head(path, MAX_BYTES)
    except OSError as exc:
        return tasks.as_task({}), [f"cannot read: {exc.strerror or exc}"]
    return parse_task(name, raw)


def parse_task(name: str, raw: bytes) -> tuple[Task, list[str]]:
    """The task in ``raw``, the content of a file named ``name``, and every problem that keeps
    it out of the queue: its name, its size, its JSON, the schema, a command that needs a shell.
    Never raises. ``task add`` asks this of the file it would write (``render``), so it
    refuses exactly what the queue scan would reject, in the same words."""
    problem = _name_problem(name)
    if problem is not None:
        return tasks.as_task({}), [problem]
    if len(raw) > MAX_BYTES:
        return tasks.as_task({}), [TOO_BIG]
    try:
        data = records.parse(raw)
    except InvalidError as exc:
        return tasks.as_task({}), [str(exc)]
    task, problems = tasks.validate(data, expected_id=name[: -len(".json")])
    return task, problems + shell.problems(task)


def _name_problem(name: str) -> str | None:
    if not name.endswith(".json"):
        return "not a task file: task files are named <id>.json"
    if not is_id(name[: -len(".json")]):
        return f"file name {name!r} is not <id>.json with an id matching [a-z0-9][a-z0-9._-]{{0,63}}"
    return None


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
    src = room.state_dir(state) / name
    dst = _free_name(room.state_dir("rejected"), name)
    try:
        os.rename(src, dst)
    except FileNotFoundError:
        return None  # another process moved it first
    atomic_write(
        Path(f"{dst}{REASON}"),
        f"Rejected from swarm/{state}/{name} at {now_iso()}:\n\n"
        + "".join(f"- {p}\n" for p in problems)
        + "\nFix the file and move it back into swarm/queue/, or delete it.\n",
    )
    ledger.append(
        room.ledger,
        events.REJECT,
        task=task_id,
        detail=f"swarm/{state}/{name} -> swarm/rejected/{dst.name}: {'; '.join(problems)}",
    )
    return dst


def write_new(room: Room, task: Task) -> Path:
    """Create ``swarm/queue/<id>.json``; never replaces a file (admission checked the rest)."""
    global queued_here
    path = task_file(room, "queue", task["id"])
    if not create_exclusive(path, dumps(task)):
        raise InvalidError(exists_already(task["id"], "queue"))
    queued_here += 1
    return path


# Tasks this process put into swarm/queue/ (``write_new``, ``move``): a run loop, which lists
# the queue at most once a second (dispatch/queue/listing.py), lists it again after one.
queued_here = 0


def exists_already(task_id: str, state: str) -> str:
    """A task id that is taken, in the one wording (``values.exists_already``)."""
    where = f"swarm/{state}/{task_id}.json"
    return values.exists_already("task", task_id, where) + "; ids are unique: give this one a new id"


def dumps(task: Mapping[str, Any], *, seal: bool = True) -> str:
    """The text of a task file: the fields in schema order, indented JSON, and the seal of the
    dispatcher's fields (``tasks.seal``) when it has some: every task file control-room writes
    is written here. A key the schema does not know is a bug of the code that wrote it (a
    person's file with one is rejected before it gets here): it raises rather than vanish
    without a word."""
    unknown = [k for k in task if k not in tasks.BY_NAME]
    if unknown:
        raise AssertionError(
            f"task {task.get('id')!r}: fields not in room/tasks.py FIELDS: {', '.join(unknown)}"
        )
    out = {f.name: task[f.name] for f in tasks.FIELDS if f.name in task and f.name != "seal"}
    sealed = tasks.seal(out) if seal else None
    if sealed is not None:
        out["seal"] = sealed
    return records.dumps(out)


def as_written(task: Task) -> Task:
    """``task`` as ``dumps`` writes it: its fields in schema order, and its seal."""
    return tasks.as_task(records.parse(dumps(task)))


def render(task: Task) -> bytes:
    """The bytes ``write_new`` would write; text that is not Unicode (a lone surrogate, from a
    command line in an unknown encoding) is kept as the bytes that ``parse_task`` refuses."""
    return dumps(task).encode("utf-8", "surrogatepass")


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
    task: Task | None = None,
    reason: str | None = None,
) -> Path:
    """Move a task between state folders (one rename), rewriting it first if ``task`` is given.

    A reason file beside the source goes away; ``reason`` writes one beside the destination.
    """
    global queued_here
    s, d = task_file(room, src, task_id), task_file(room, dst, task_id)
    if os.path.lexists(d):
        raise ConflictError(exists_already(task_id, dst))
    if task is not None:
        atomic_write(s, dumps(task))
    try:
        os.rename(s, d)
    except FileNotFoundError:
        raise NotFoundError(f"task {task_id} is not in swarm/{src}/ any more") from None
    queued_here += dst == "queue"
    try:
        os.unlink(reason_path(s))
    except FileNotFoundError:
        pass
    if reason is not None:
        atomic_write(reason_path(d), reason)
    return d
