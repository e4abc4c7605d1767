"""Fan-out (SPEC §12, seed 004): one queued task split into child tasks, its slices; the task
itself becomes their gather step.

``fanout`` writes, for each slice, a child task ``<parent>-<slug(title)>`` with the slice's
objective as its objective and the slice's text as its ``brief``, ``fanout_of: <parent>``, no
route (so with ``repo:`` each child gets its own ``task/<id>`` worktree and branch), its own
``owns`` and, if given, its own validator; everything else that says how and within what bounds
it runs is the parent's. Each child is admitted and queued by ``admission.add``, as ``task add``
queues a task (its ``task-add`` line). The parent gets the children in its ``deps`` (so it runs
once every child is done, or merged, in ``to-test/``) and a note on its objective saying it is
the gather step; then one ``fanout`` ledger line.

Refused, with nothing written (``InvalidError``, exit 4; a parent in no state folder:
``NotFoundError``, exit 7): fewer than two slices; two slices that tell their agents the same
thing (the "new information" test: ``same_information``); two titles that make one id; a
``--owns-of`` or ``--validator-of`` naming no slice; a parent that is not in ``swarm/queue/``
or is a gather step already; a child that admission refuses (an id that is taken, ...). It all
happens under the claim lock, so no cycle claims the parent half-way.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from control_room import ledger
from control_room.dispatch.queue import admission
from control_room.dispatch.round import claims
from control_room.errors import InvalidError, NotFoundError, QueueFullError
from control_room.ledger import events
from control_room.room import swarm, tasks
from control_room.room.layout import Room
from control_room.room.settings import Settings
from control_room.room.tasks import Task
from control_room.room.values import is_id
from control_room.store import records
from control_room.store.files import update
from control_room.words import count

# What a child takes from its parent, as it is: how it runs and within what bounds.
INHERITED = (
    "falsifier",
    "validator",
    "max_cost_usd",
    "wall_clock_s",
    "kill_condition",
    "role",
    "adapter",
    "model",
    "command",  # the probe's and the command adapter's agent: the same agent, another brief
    "extra_args",
    "gate",  # a gate on the work holds each slice of it; fanning out is no way around an approval
    "priority",
    "deps",  # what the parent waited for, its slices need first
)
NOTHING = "; nothing was written"


@dataclass(frozen=True)
class Slice:
    """One arm of a fan-out: its title (the child's id is made from it), what it is to do, and
    optionally the paths it owns and its own validator."""

    title: str
    objective: str
    owns: tuple[str, ...] = ()
    validator: str | None = None

    @property
    def brief(self) -> str:
        """The slice's text, as given: ``title: objective``."""
        return f"{self.title}: {self.objective}"


@dataclass(frozen=True)
class Fanout:
    """What ``fanout`` wrote: the parent as it is now, and the children."""

    parent: Task
    children: list[Task] = field(default_factory=list)


def parse_slice(text: str) -> Slice:
    """``'title: objective'``; ValueError saying what is wrong."""
    title, colon, objective = text.partition(":")
    if not colon or not title.strip() or not objective.strip():
        raise ValueError(f"{text!r} is not 'title: objective' (a title, a colon, what the slice is to do)")
    return Slice(" ".join(title.split()), objective.strip())


def parse_of(text: str, what: str) -> tuple[str, str]:
    """``'title=value'`` (``--owns-of``, ``--validator-of``); ValueError saying what is wrong."""
    title, eq, value = text.partition("=")
    if not eq or not title.strip() or not value.strip():
        raise ValueError(f"{text!r} is not 'title={what}'")
    return " ".join(title.split()), value.strip()


def slug(title: str) -> str:
    """The part of a child's id its title gives: lower case, runs of other characters as ``-``."""
    return "-".join(re.findall(r"[a-z0-9]+", title.lower()))


def words(text: str) -> list[str]:
    """A brief as the "new information" test compares it: case and whitespace do not count."""
    return text.lower().split()


def with_extras(
    slices: list[Slice], owns_of: list[tuple[str, str]], validator_of: list[tuple[str, str]]
) -> list[Slice]:
    """The slices with the paths each owns (``title``, ``"path,path"``) and the validators of
    their own; a title is matched as its id part (``slug``). ``InvalidError`` for a title that
    is no slice's, or one given twice for the same flag."""
    by_slug = {slug(s.title): s for s in slices}
    owns: dict[str, tuple[str, ...]] = {}
    validators: dict[str, str] = {}
    for flag, pairs, into in (("--owns-of", owns_of, owns), ("--validator-of", validator_of, validators)):
        for title, value in pairs:
            key = slug(title)
            if key not in by_slug:
                titles = ", ".join(repr(s.title) for s in slices)
                raise InvalidError(
                    f"fanout refused: {flag} names {title!r}, which is no slice's title (the slices: "
                    f"{titles}){NOTHING}"
                )
            if key in into:
                raise InvalidError(f"fanout refused: {flag} names {title!r} twice{NOTHING}")
            if into is owns:
                owns[key] = tuple(p.strip() for p in value.split(",") if p.strip())
            else:
                validators[key] = value
    out = []
    for s in slices:
        key = slug(s.title)
        out.append(Slice(s.title, s.objective, owns.get(key, s.owns), validators.get(key, s.validator)))
    return out


def same_information(slices: list[Slice]) -> str | None:
    """Why two slices give their agents no different information, or None.

    What is compared is what each agent is told to do, the slice's objective (its title only
    names it), as words, in lower case. Identical: refused. One that starts with every word of
    another (``write the parser`` and ``write the parser and its tests``): refused too, since the
    longer one asks for all the shorter one does, so two agents would do that part twice (seed
    004: role overlap); say in the shorter what only it is to do, or drop it."""
    told = [words(s.objective) for s in slices]
    for i, a in enumerate(told):
        for j, b in enumerate(told):
            if i >= j:
                continue
            first, second = slices[i].title, slices[j].title
            if a == b:
                return (
                    f"slices {first!r} and {second!r} tell their agents the same thing "
                    f"({' '.join(a)!r}, case and spacing aside): a fan-out pays only when each arm "
                    "gets different information; for the same work, give one task the budget"
                )
            short, long_, sa, sb = (a, b, first, second) if len(a) < len(b) else (b, a, second, first)
            if long_[: len(short)] == short:
                return (
                    f"slice {sb!r} asks for everything slice {sa!r} does ({' '.join(short)!r}) and "
                    f"more: two agents would do that part twice; say in {sa!r} what only it is to do"
                )
    return None


def _children(parent: Task, slices: list[Slice]) -> list[dict[str, Any]]:
    pid = parent["id"]
    room_for = 64 - len(pid) - 1  # ids are at most 64 characters
    made: dict[str, str] = {}
    out = []
    for s in slices:
        tail = slug(s.title)[:room_for].strip("-._")
        cid = f"{pid}-{tail}"
        if not tail or not is_id(cid):
            raise InvalidError(
                f"fanout refused: slice {s.title!r} makes no valid id from {pid}- and its title "
                f"(ids are at most 64 of [a-z0-9._-]){NOTHING}"
            )
        if cid in made:
            raise InvalidError(
                f"fanout refused: slices {made[cid]!r} and {s.title!r} make one id, {cid}: give them "
                f"distinct titles{NOTHING}"
            )
        made[cid] = s.title
        fields: Mapping[str, Any] = parent
        child = {k: fields[k] for k in INHERITED if k in fields}
        child.update(id=cid, objective=s.objective, brief=s.brief)
        if s.owns:
            child["owns"] = list(s.owns)
        if s.validator:
            child["validator"] = s.validator
        out.append(child)
    return out


def gather_note(n: int) -> str:
    """What the parent's objective gets: it is the gather step."""
    return (
        f" [gather step of a fan-out into {count(n, 'slice')}, its deps: it runs once they are "
        "done (with a repo: merged), on their joined work]"
    )


def fanout(room: Room, settings: Settings, parent_id: str, slices: list[Slice]) -> Fanout:
    """Split the queued task ``parent_id`` into one child task per slice (see the module's
    docstring); return what was written. Raises ``InvalidError`` and the like, having written
    nothing."""
    if len(slices) < 2:
        raise InvalidError(
            f"fanout refused: {count(len(slices), 'slice')}: a fan-out needs at least 2 (for one, "
            f"give the task itself the work){NOTHING}"
        )
    why = same_information(slices)
    if why is not None:
        raise InvalidError(f"fanout refused: {why}{NOTHING}")
    with claims.claim_lock(room):  # no cycle claims the parent while it is being split
        parent = _queued(room, parent_id)
        children = _children(parent, slices)
        for child in children:
            try:
                admission.check_new(room, settings, child, own={"fanout_of": parent_id})
            except InvalidError as exc:
                raise InvalidError(f"fanout refused: slice {child['id']}: {exc}{NOTHING}") from None
        queued = room.counts()["queue"]
        if queued + len(children) > settings.max_queued:
            raise QueueFullError(
                f"fanout refused: the queue holds {count(queued, 'task')} and CONTROL.md max_queued is "
                f"{settings.max_queued}: no room for {count(len(children), 'slice')}{NOTHING}"
            )
        written = [admission.add(room, settings, child, own={"fanout_of": parent_id}) for child in children]
        ids = [c["id"] for c in written]
        parent = _gather(room, parent_id, ids)
    ledger.append(
        room.ledger,
        events.FANOUT,
        task=parent_id,
        route=parent.get("route", ""),
        detail=f"{count(len(ids), 'slice')}: {', '.join(ids)}; {parent_id} is their gather step",
    )
    return Fanout(parent, written)


def _queued(room: Room, parent_id: str) -> Task:
    """The parent, read from ``swarm/queue/``; refused if it is elsewhere, broken or a gather
    step already."""
    state = swarm.state_of(room, parent_id)
    if state is None:
        raise NotFoundError(f"fanout refused: no task {parent_id} in any swarm folder{NOTHING}")
    if state != "queue":
        raise InvalidError(
            f"fanout refused: task {parent_id} is in swarm/{state}/, not in swarm/queue/: only a queued "
            f"task can be split{NOTHING}"
        )
    parent, problems = swarm.read_task(swarm.task_file(room, "queue", parent_id))
    if problems:
        raise InvalidError(
            f"fanout refused: swarm/queue/{parent_id}.json is not a valid task ({'; '.join(problems)})"
            f"{NOTHING}"
        )
    for dep in parent.get("deps", []):
        where = swarm.state_of(room, dep)
        if where is None:
            continue
        child, _ = swarm.read_task(swarm.task_file(room, where, dep))
        if child.get("fanout_of") == parent_id:
            raise InvalidError(
                f"fanout refused: task {parent_id} is the gather step of a fan-out already ({dep} is one "
                f"of its slices){NOTHING}"
            )
    return parent


def _gather(room: Room, parent_id: str, ids: list[str]) -> Task:
    """Make the parent wait for its slices, and say on its objective that it is their gather
    step. A read-modify-write: a person's edit meanwhile is kept, the change applied to it."""
    path = swarm.task_file(room, "queue", parent_id)
    out: dict[str, Any] = {}

    def change(text: str) -> str:
        if not text:
            raise NotFoundError(f"task {parent_id} left swarm/queue/ while it was being split")
        task = records.parse(text)
        task["deps"] = [*[d for d in task.get("deps", []) if d not in ids], *ids]
        task["objective"] = str(task["objective"]) + gather_note(len(ids))
        out.clear()
        out.update(task)
        return swarm.dumps(task)

    update(path, change)
    return tasks.as_task(out)
