"""Plan import and export (SPEC §13, docs/plans.md): a markdown plan into routes and tasks, all
or nothing, idempotently; the queue back into a plan.

``prepare`` reads the plan (``plan_format.parse``) and decides, for each of its tasks, what an
import does, having checked the WHOLE plan: every problem (a field that does not parse, what
admission refuses, a dep that names nothing, a dep cycle through the plan's tasks and the
room's, a new route without a falsifier) is collected, then all are raised in one
``InvalidError`` naming each task and field; nothing is written. Each task is:

- ``add``: not in the room: admitted by ``admission.check_new`` (routes as ``task add
  --new-route`` puts them on the board), then queued by ``admission.add`` (its ``task-add``
  line), deps first;
- ``update``: queued, written by an import (its ``plan_hash``) and untouched since: its file's
  content hash still equals the recorded one; the plan's version is admitted as the queue scan
  and a cycle would admit it, then written over it;
- ``unchanged``: as ``update``, but the plan says what the file says already;
- ``kept``: it ran (another state folder, or the queue with rounds written), was edited, or
  was not imported: reported with why, never changed.

The hash (``content_hash``) covers every field of the task but ``plan`` and ``plan_hash``, so
it changes when a person edits the file or a round writes ``rounds`` into it. ``apply`` writes
under the claim lock (no cycle claims a task half-way through), then one ``plan-import``
ledger line.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from control_room import ledger
from control_room.dispatch.plan.syntax import Parsed, PlanRoute, PlanTask, parse, render
from control_room.dispatch.queue import admission
from control_room.dispatch.queue import deps as depcheck
from control_room.dispatch.round import claims
from control_room.errors import ConflictError, InvalidError, QueueFullError
from control_room.ledger import events
from control_room.room import swarm, tasks
from control_room.room.layout import Room
from control_room.room.settings import Settings
from control_room.room.tasks import Task
from control_room.store import records
from control_room.store.files import update
from control_room.words import count

NOTHING = "; nothing was written"
_WAITING = ("queue", "running", "passed", "parked", "cancelled")  # as dispatch.queue.deps: may wait again
ACTIONS = ("add", "update", "unchanged", "kept")
_CYCLE = depcheck.cycle_refusal(["a", "b"]).split(":")[0]  # how a refusal for a dep cycle starts
WRITES = ("add", "update")


@dataclass
class Item:
    """One task of the plan and what the import does with it."""

    id: str
    route: str | None
    action: str
    why: str = ""
    task: Task = field(default_factory=lambda: tasks.as_task({}))  # as it would be written (add, update)


@dataclass
class Outcome:
    name: str
    routes: list[tuple[PlanRoute, bool]]  # (route, new: not on the board yet)
    items: list[Item]

    def counts(self) -> dict[str, int]:
        return {a: sum(1 for i in self.items if i.action == a) for a in ACTIONS}


def content_hash(task: Mapping[str, Any]) -> str:
    """The hash ``plan_hash`` records: the task file's text without ``plan``, ``plan_hash`` and
    the seal (as the file was written before control-room sealed its files)."""
    left = {k: v for k, v in task.items() if k not in ("plan", "plan_hash", "seal")}
    text = swarm.dumps(left, seal=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def prepare(room: Room, settings: Settings, name: str, text: str) -> Outcome:
    """What importing ``text`` (the plan file ``name``) would do; ``InvalidError`` listing every
    problem, or ``QueueFullError``, if it may not be imported. Writes nothing."""
    if not name.isprintable():  # it names the plan in every message and on each of its tasks
        raise InvalidError(
            f"plan refused: the file name {name!r} holds a line break or a control character: "
            f"rename the file{NOTHING}"
        )
    parsed = parse(text, name)
    problems = list(parsed.problems)
    board = _board(room)
    routes = [(r, r.name not in board) for r in parsed.routes]
    ids = {t.id for t in parsed.tasks}

    def locate(dep: str) -> str | None:
        return "queue" if dep in ids else swarm.state_of(room, dep, order=swarm.LIVE_FIRST)

    items = []
    on_cycle: set[str] = set()  # admission found a dep cycle through these: said once, not twice
    for t in parsed.tasks:
        where = f"task {t.id} ({name}:{t.line})"
        if t.problems:
            problems += [f"{where}: {p}" for p in t.problems]
            items.append(Item(t.id, t.route, "add"))
            continue
        try:
            items.append(_decide(room, settings, t, name, locate))
        except InvalidError as exc:
            refusal = _bare(str(exc))
            problems.append(f"{where}: {refusal}")
            if refusal.startswith(_CYCLE):
                on_cycle.add(t.id)
            items.append(Item(t.id, t.route, "add"))
    for r, new in routes:
        if new and not r.falsifier and any(i.route == r.name and i.action in WRITES for i in items):
            problems.append(
                f"route {r.name} ({name}:{r.line}): not in ROUTES.md, and no `Falsifier:` line under its "
                "heading: a new route needs one"
            )
    problems += _cycles(room, parsed, items, on_cycle)
    if problems:
        listed = "; ".join(problems)
        raise InvalidError(f"plan refused: {name}: {count(len(problems), 'problem')}: {listed}{NOTHING}")
    adds = sum(1 for i in items if i.action == "add")
    queued = room.counts()["queue"]
    if adds and queued + adds > settings.max_queued:
        raise QueueFullError(
            f"plan refused: {name}: the queue holds {count(queued, 'task')} and CONTROL.md max_queued is "
            f"{settings.max_queued}: no room for {count(adds, 'new task')}{NOTHING}"
        )
    return Outcome(name, routes, items)


def _bare(message: str) -> str:
    return message.removeprefix("task refused: ")


def _board(room: Room) -> set[str]:
    from control_room.knowledge import routes  # ROUTES.md's table: as admission.known_route does

    return {str(r["route"]) for r in routes.rows(room) if r.get("route")}


def _decide(room: Room, settings: Settings, t: PlanTask, name: str, locate: Any) -> Item:
    """What the import does with task ``t``; ``InvalidError`` if admission refuses it."""
    state = swarm.state_of(room, t.id, order=swarm.LIVE_FIRST)
    if state is None:
        task = admission.check_new(room, settings, t.data(), new_route=True, where=locate)
        task["plan"], task["plan_hash"] = name, content_hash(task)
        return Item(t.id, t.route, "add", task=task)
    if state != "queue":
        return Item(t.id, t.route, "kept", f"in swarm/{state}/: it ran; the plan's version is not applied")
    now, problems = swarm.read_task(swarm.task_file(room, "queue", t.id))
    if problems:
        return Item(t.id, t.route, "kept", f"swarm/queue/{t.id}.json is not a valid task: left as it is")
    if not now.get("plan_hash"):
        return Item(t.id, t.route, "kept", "queued, but not by a plan import: left as it is")
    if content_hash(now) != now["plan_hash"]:
        return Item(t.id, t.route, "kept", "edited or run since it was imported: left as it is")
    try:
        task = admission.shape(t.data(), {"created": now["created"]} if now.get("created") else None)
        admission.admit(room, task, admission.Stage.QUEUED, where=locate)  # deps: plan or room tasks
        admission.admit(room, task, admission.Stage.RUN, settings)  # role, adapter, cost, graveyard
    except admission.Refused as exc:
        raise InvalidError(str(exc)) from None
    task["plan"], task["plan_hash"] = name, content_hash(task)
    if task["plan_hash"] == now["plan_hash"]:
        return Item(t.id, t.route, "unchanged", task={**now, "plan": now.get("plan", name)})
    return Item(t.id, t.route, "update", task=task)


def _cycles(room: Room, parsed: Parsed, items: list[Item], said: set[str]) -> list[str]:
    """A problem per plan task on a dep cycle, through the plan's tasks (as they would be) and
    the room's tasks that may still wait (read from their files); but for the tasks in ``said``,
    whose admission named a cycle through them already."""
    graph: dict[str, list[str]] = {}
    for t, item in zip(parsed.tasks, items, strict=True):
        if item.action == "kept":
            continue  # as it is in the room: read below if a task waits for it
        graph.setdefault(t.id, list(item.task.get("deps", t.fields.get("deps", []))))
    todo = [d for ds in graph.values() for d in ds if d not in graph]
    while todo:
        dep = todo.pop()
        if dep in graph:
            continue
        graph[dep] = []
        held = next((f for s in _WAITING if (f := swarm.task_file(room, s, dep)).exists()), None)
        if held is not None:
            found, problems = swarm.read_task(held)
            if not problems:
                graph[dep] = list(found.get("deps", []))
                todo += [d for d in graph[dep] if d not in graph]
    loops = depcheck.cycles(graph)
    on = [t for t in parsed.tasks if t.id in loops and t.id not in said]
    return [f"task {t.id}: {depcheck.cycle_refusal(*loops[t.id])}" for t in on]


def apply(room: Room, settings: Settings, name: str, text: str) -> Outcome:
    """Import the plan: check it whole (``prepare``), then write, under the claim lock."""
    added: list[str] = []
    updated: list[str] = []
    try:
        with claims.claim_lock(room):
            out = prepare(room, settings, name, text)
            from control_room.knowledge import routes  # see _board

            for r, new in out.routes:
                if new and any(i.route == r.name and i.action in WRITES for i in out.items):
                    routes.add(room, r.name, r.title or r.name, r.falsifier, note=f"from plan {name}")
            for item in _deps_first([i for i in out.items if i.action == "add"]):
                person, own = tasks.split(item.task)
                admission.add(room, settings, person, own=own, source=f"plan {name}")
                added.append(item.id)
            for item in out.items:
                if item.action == "update":
                    _rewrite(room, item)
                    updated.append(item.id)
    except ConflictError as exc:  # a person edited a task meanwhile: say what was written before
        if added or updated:
            ledger.append(
                room.ledger,
                events.PLAN_IMPORT,
                outcome="stopped",
                detail=f"{name}: {len(added)} added, {len(updated)} updated"
                + (f" ({', '.join(updated)})" if updated else "")
                + f", then stopped: {exc}",
            )
        raise
    c = out.counts()
    kept = [f"{i.id} ({i.why})" for i in out.items if i.action == "kept"]
    ledger.append(
        room.ledger,
        events.PLAN_IMPORT,
        detail=f"{name}: {c['add']} added, {c['update']} updated"
        + (f" ({', '.join(updated)})" if updated else "")
        + f", {c['unchanged']} unchanged, {c['kept']} kept as they are"
        + (f": {'; '.join(kept)}" if kept else ""),
    )
    return out


def _deps_first(items: list[Item]) -> list[Item]:
    """The new tasks, each after the new tasks it names in ``deps`` (the plan has no cycle)."""
    left = {i.id: i for i in items}
    out: list[Item] = []
    while left:
        for tid, item in list(left.items()):
            if not any(d in left for d in item.task.get("deps", [])):
                out.append(item)
                del left[tid]
    return out


def _rewrite(room: Room, item: Item) -> None:
    """Write the plan's version over a queued task, if it is still untouched."""

    def change(text: str) -> str:
        now = records.parse(text) if text else {}
        if not now or content_hash(now) != now.get("plan_hash"):
            raise ConflictError(
                f"task {item.id} changed or left swarm/queue/ during the import: import again"
            )
        return swarm.dumps(item.task)

    update(swarm.task_file(room, "queue", item.id), change)


def _plan_order(found: list[Task]) -> list[Task]:
    """Each task after the queued tasks it waits for, else by priority (higher first) and id:
    an order that depends only on the tasks (not on when each was queued)."""
    left = sorted(found, key=lambda t: (-int(t.get("priority", 0)), t["id"]))
    out: list[Task] = []
    while left:
        waiting = {t["id"] for t in left}
        ready = [t for t in left if not waiting & set(t.get("deps", []))] or left[:1]  # a cycle: as it is
        out.append(ready[0])
        left.remove(ready[0])
    return out


def export(room: Room, intro: str) -> tuple[str, list[Task], list[str]]:
    """The queue as a plan: (its text, the tasks in it, the files left out and why)."""
    from control_room.dispatch.queue import index  # the queue scan (its index), as `task list` reads it
    from control_room.knowledge import routes  # see _board

    found: list[Task] = []
    skipped = []
    for listed in index.scan(room, "queue", reject=False):
        task, problems = swarm.read_task(room.state_dir("queue") / listed.name)
        if problems:
            skipped.append(f"swarm/queue/{listed.name}: {'; '.join(problems)}")
        else:
            found.append(task)
    loose: list[Task] = []
    by_route: dict[str, list[Task]] = {}
    for task in _plan_order(found):
        (by_route.setdefault(task["route"], []) if task.get("route") else loose).append(task)
    board = {str(r["route"]): r for r in routes.rows(room) if r.get("route")}
    order = [r for r in board if r in by_route] + [r for r in by_route if r not in board]
    sections = []
    for r in order:
        row = board.get(r, {})
        falsifier = str(row.get("falsifier") or by_route[r][0]["falsifier"])
        sections.append((PlanRoute(r, str(row.get("title") or ""), falsifier, 0), by_route[r]))
    written = loose + [t for _, ts in sections for t in ts]
    return render(intro, loose, sections), written, skipped
