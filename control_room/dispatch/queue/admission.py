"""Admission (SPEC §3, §8): may this task enter the queue, and may it run?

One function, ``admit``, answers for every way in:

- ``Stage.NEW``: ``task add``, an orchestrator's proposals, ``validate --proposals``;
- ``Stage.QUEUED``: the queue scan, for a file dropped into ``swarm/queue/`` by hand;
- ``Stage.RUN``: the cycle, for the task it is about to claim, re-read from its file.

Each refusal has one wording whoever asks (``task add`` prints it after ``task refused:``; the
scan and the cycle write it beside the file they move to ``swarm/rejected/``). In order:

| check | NEW | QUEUED | RUN |
|---|---|---|---|
| required fields, a falsifier, the schema | here | the file's (``swarm.read_task``) | the file's |
| size, UTF-8, no command that needs a shell | the file it writes (``parse_task``) | the file's | the file's |
| the id is not taken in another state | any state | other than the queue | other than the queue |
| ``deps`` does not name the task itself | yes | yes | yes |
| each dep is a task in a state folder other than ``rejected/`` | yes | yes, from listings | (``ready``) |
| ``deps`` closes no cycle (t1 -> t2 -> t1) | through the deps' files | queued tasks (``index``) | - |
| the route is not killed (graveyard) | yes | - | yes |
| the route is on the board (``known_route``, in ``check_new``) | unless ``new_route`` | - | - |
| role, adapter and model resolve; the adapter can build its argv | yes | - | yes |
| ``extra_args`` only if CONTROL.md ``allow_extra_args`` | yes | - | yes |
| ``max_cost_usd`` within CONTROL.md ``max_task_cost_usd`` | yes | - | yes |
| each lens of ``review`` (and a review task's ``lens``) has a file that reads | yes | - | yes |

The queue scan checks only the file itself, and its deps against a set of known ids (one
listing per state folder, taken only when a task has deps; the cycle check runs on the deps the
queue index keeps), so that listing 10,000 tasks stays cheap; what a cycle runs always passes
the whole list first. A dep that moves to ``rejected/`` or vanishes after admission is caught by
``dispatch.queue.ready``, which refuses the task at the next cycle. The wording of the deps checks and
the cycle search are in ``dispatch.queue.deps``. Whether an admitted task is *ready* (deps done, paths
free, gates approved, budget left) is ``dispatch.queue.ready``'s question.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from control_room import ledger
from control_room.dispatch.queue import deps as depcheck
from control_room.dispatch.queue.resolve import Plan, resolve
from control_room.errors import ControlRoomError, InvalidError, QueueFullError, RoomInvalidError
from control_room.ledger import events
from control_room.ledger.stats import named_tasks
from control_room.room import swarm, tasks
from control_room.room.layout import Room
from control_room.room.tasks import Task
from control_room.timeutil import now_iso
from control_room.words import count

if TYPE_CHECKING:  # loaded at NEW and RUN only (see ``admit``)
    from control_room.room.settings import Settings

VIBE = "(a task that cannot state its falsifier is a vibe, not a task)"


class Stage(enum.Enum):
    NEW = "new"
    QUEUED = "queued"
    RUN = "run"


class Refused(InvalidError):
    """A task that may not enter the queue or run; the message is the reason, alone."""


def admit(
    room: Room,
    task: Task,
    stage: Stage,
    settings: Settings | None = None,
    *,
    where: Callable[[str], str | None] | None = None,
    runs_on: tuple[str, str | None] | None = None,
    holder: Callable[[str, str | None], str | None] | None = None,
) -> Plan | None:
    """Raise ``Refused`` with the reason, or return how the task would run (None at QUEUED).

    At NEW, ``task`` is what a person or an agent wrote (see ``shape``); at QUEUED and RUN it
    is a task read from its file in the queue. ``where`` and ``holder(id, skip)`` say which state
    folder holds a dep (a copy in ``rejected/`` last) and which other one the task's own id (the
    queue scan passes its listings; by default, a stat per folder). ``runs_on``: the adapter and
    model of its ``fallback`` chain to run on (dispatch/queue/cooling.py) while its own cools.
    """
    skip = None if stage is Stage.NEW else "queue"
    taken = holder(task["id"], skip) if holder else swarm.state_of(room, task["id"], skip=skip)
    if taken is not None:
        raise Refused(swarm.exists_already(task["id"], taken))
    deps = task.get("deps", [])
    if task["id"] in deps:
        raise Refused(f"deps names {task['id']} itself: it could never be ready")
    if deps and stage is not Stage.RUN:
        locate = where or (lambda d: swarm.state_of(room, d, order=swarm.LIVE_FIRST))
        for dep in deps:
            why = depcheck.refusal(dep, locate(dep))
            if why is not None:
                raise Refused(why)
        loop = depcheck.cycle_through(room, task) if stage is Stage.NEW else None
        if loop is not None:
            raise Refused(depcheck.cycle_refusal(loop))
    if stage is Stage.QUEUED:
        if not tasks.sealed(task) and not _logged(room, task["id"]):
            why = tasks.owned_problem(task)
            if why is not None:  # a file dropped by hand, with fields only control-room writes
                raise Refused(why)
        return None
    if settings is None:
        raise TypeError("admit needs the settings at NEW and RUN")
    # The queue scan (`task list`) stops above; what follows loads the graveyard, the roles and
    # the adapters (~4 ms), so they are imported here and in ``resolve``, not with the module.
    from control_room.knowledge import graveyard

    why = graveyard.refusal(room, task.get("route") or "")
    if why is not None:
        raise Refused(why)
    try:
        plan = resolve(room, settings, task, runs_on)
        plan.adapter.command(plan.invocation(task, "", room.root, room.root))
    except RoomInvalidError:
        raise
    except ControlRoomError as exc:
        raise Refused(str(exc)) from None
    named = [*task.get("review", []), *([str(task["lens"])] if task.get("lens") else [])]
    if named:  # its reviews' lenses; a review or arbiter task's own (else claimed, then put back)
        from control_room.room import lenses  # front matter of agents/lenses/: only for a task naming some

        for name in named:
            try:
                lenses.read(room, name)
            except ControlRoomError as exc:
                raise Refused(str(exc)) from None
    from control_room import adapters  # loaded by resolve already

    unknown = [n for n in task.get("fallback", []) if not adapters.known(n)]
    if unknown:
        raise Refused(
            f"fallback names {unknown[0]!r}, which is not an adapter (known: {', '.join(adapters.names())})"
        )
    if task.get("extra_args") and not settings.allow_extra_args:
        raise Refused("extra_args given but CONTROL.md allow_extra_args is false")
    if task["max_cost_usd"] > settings.max_task_cost_usd:
        raise Refused(
            f"max_cost_usd {task['max_cost_usd']} is above CONTROL.md max_task_cost_usd "
            f"{settings.max_task_cost_usd}"
        )
    return plan


def shape(data: Mapping[str, Any], own: Mapping[str, Any] | None = None) -> Task:
    """A new task as it would be queued: empty values dropped, an id and ``created`` filled in,
    the schema checked. ``data`` is what its author wrote, and may hold no field only
    control-room writes (``tasks.owned_problem``); ``own`` is what the dispatcher itself adds
    (a plan's name, a slice's parent). Raises ``Refused``."""
    data = {k: v for k, v in data.items() if v not in (None, "", [], ())}
    missing = tasks.missing_fields(data)
    if missing:
        raise Refused(f"missing {', '.join(missing)} {VIBE}")
    why = tasks.owned_problem(data)
    if why is not None:
        raise Refused(why)
    if "id" not in data:
        data["id"] = tasks.new_id(str(data.get("objective", "")))
    data.update(own or {})
    data.setdefault("created", now_iso())
    task, problems = tasks.validate(data)
    if not problems:  # the file it would be, as the queue scan reads it: size, UTF-8, shell
        _, problems = swarm.parse_task(f"{task['id']}.json", swarm.render(task))
    if problems:
        raise Refused("; ".join(problems))
    return task


def check_new(
    room: Room,
    settings: Settings,
    data: Mapping[str, Any],
    *,
    own: Mapping[str, Any] | None = None,
    new_route: bool = False,
    where: Callable[[str], str | None] | None = None,
) -> Task:
    """The task as ``add`` would queue it, without writing anything; ``InvalidError`` saying
    ``task refused: <reason>`` if it may not. Its route must be on the board (ROUTES.md)
    unless ``new_route``: ``add`` then puts it there. ``own``: as for ``shape``. ``where``: as
    for ``admit`` (``validate --proposals`` counts the proposals before this one as queued)."""
    try:
        task = shape(data, own)
        admit(room, task, Stage.NEW, settings, where=where)
        if not new_route:
            known_route(room, task.get("route") or "")
    except Refused as exc:
        raise InvalidError(f"task refused: {exc}") from None
    return task


def _logged(room: Room, task_id: str) -> bool:
    """Whether the ledger names ``task_id``: a task file written before control-room sealed
    its files (0.4) is the dispatcher's if the room has a line of its history. Asked only of an
    unsealed file read afresh that carries control-room's fields; the ids are folded from the
    ledger once (``.cache/ledger-tasks``, kept current) and held for the rest of the command."""
    key = (room.ledger, room.cache)
    held = _NAMED.get(key)
    if held is None or task_id not in held:
        held = _NAMED[key] = named_tasks(room.ledger, room.cache / "ledger-tasks")
    return task_id in held


_NAMED: dict[tuple[Path, Path], set[str]] = {}


def known_route(room: Room, route: str) -> None:
    """Refuse a route that is not on the board, naming the near ones: a typo (``loppy`` for
    ``loopy``) would otherwise start a new route. Only new tasks are asked (a file dropped
    into the queue by hand puts its route on the board at its first run)."""
    if not route:
        return
    from control_room.knowledge import routes  # as graveyard in ``admit``: not for the queue scan

    names = [str(r["route"]) for r in routes.rows(room) if r.get("route")]
    if route in names:
        return
    import difflib  # only for a route that is not there (difflib costs ~1 ms to import)

    close = set(difflib.get_close_matches(route, names, n=3))
    near = [n for n in names if n in close]  # in the board's order
    hint = f" (did you mean {' or '.join(near)}?)" if near else ""
    raise Refused(
        f"no route {route} in {routes.WHERE}{hint}; add it with "
        f"`control-room route add {route} --title ...` or pass --new-route"
    )


def add(
    room: Room,
    settings: Settings,
    data: Mapping[str, Any],
    *,
    own: Mapping[str, Any] | None = None,
    source: str = "",
    new_route: str | None = None,
) -> Task:
    """Admit ``data`` and queue it as a new task (SPEC §3); return the task as written.

    ``own``: the fields the dispatcher adds itself (``shape``). ``new_route``: put the task's
    route on the board first if it is not there, with this title (empty: the task's objective)
    and the task's falsifier; None: the route must be there already (``known_route``)."""
    task = check_new(room, settings, data, own=own, new_route=new_route is not None)
    queued = room.counts()["queue"]
    if queued >= settings.max_queued:
        raise QueueFullError(
            f"task refused: the queue is full ({count(queued, 'task')}, CONTROL.md max_queued "
            f"{settings.max_queued}); nothing was written"
        )
    if new_route is not None and task.get("route"):
        _put_route(room, task, new_route)
    swarm.write_new(room, task)
    ledger.append(
        room.ledger,
        events.TASK_ADD,
        task=task["id"],
        route=task.get("route", ""),
        adapter=task.get("adapter", ""),
        detail=(f"proposed by {source}: " if source else "") + str(task["objective"]),
    )
    return swarm.as_written(task)


def _put_route(room: Room, task: Task, title: str) -> None:
    """Put the task's route on the board (``route add``, its ledger line) unless it is there."""
    from control_room.knowledge import routes  # see known_route

    if routes.find(room, task["route"]) is None:
        title = title or " ".join(str(task["objective"]).split())[:80]
        routes.add(room, task["route"], title, str(task["falsifier"]), note=f"for task {task['id']}")
