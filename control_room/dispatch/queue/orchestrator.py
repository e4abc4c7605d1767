"""The orchestrator loop (orchestrator.md): when nothing is ready, one bounded task asks an
agent whose role ``writes_tasks`` to propose the next tasks; its proposals are admitted like
any other task.

- ``queue_one``: with CONTROL.md ``on_empty_queue: orchestrate``, queue one orchestrator task
  (its caps from CONTROL.md), unless one is queued, running or parked, or its route is held.
- ``accept``: after a passing run, each proposal (a JSON object in a fenced ```json block of
  the answer) goes through ``admission.add``; at most ``max_new_tasks`` are queued per run, and
  each refusal is logged with its reason. A proposal's route must be on the board already: an
  orchestrator cannot start a route (it proposes one in its answer; a person adds it).
"""

from __future__ import annotations

import json
import os
import re
import time
from typing import Any

from control_room import ledger
from control_room.dispatch.queue import admission
from control_room.dispatch.queue.pick import Holds
from control_room.dispatch.schedule import entries
from control_room.errors import ControlRoomError
from control_room.knowledge import history
from control_room.ledger import events
from control_room.room import results
from control_room.room.layout import Room
from control_room.room.settings import Settings
from control_room.room.tasks import Task

ROUTE = "orchestrate"  # so repeated identical failures make a death loop
TITLE = "the orchestrator: proposes the next tasks when none is ready"  # its row in ROUTES.md
PREFIX = "orchestrate-"
_FENCE = re.compile(r"^```json[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def queue_one(room: Room, settings: Settings) -> bool:
    """Queue one orchestrator task; False when none may be queued now (and why is logged)."""
    for state in ("queue", "running", "parked"):
        if any(n.startswith(PREFIX) for n in os.listdir(room.state_dir(state))):
            if state == "parked":  # its kill condition: a person looks before the next one
                _hold(
                    room,
                    events.ORCHESTRATE_HELD,
                    "an orchestrator task is parked: retry or cancel it to orchestrate again",
                )
            return False
    if ROUTE in history.held(room, settings):
        return False
    task_id = f"{PREFIX}{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{os.urandom(2).hex()}"
    answer = results.folder(room, task_id) / "answer.md"  # where the runner keeps what it said
    task: Task = {
        "id": task_id,
        "role": "orchestrator",
        "priority": -1,
        "objective": "The queue has no ready task. Read the room (CURRENT_CONTEXT, DIGEST, ROUTES, the "
        "graveyard, intelligence/) and propose the next bounded tasks as ```json blocks, "
        "or propose nothing and say why.",
        "falsifier": "It proposes tasks that are not valid: the room learns nothing from this run.",
        "validator": [
            *entries.command_argv(),
            "--room",
            str(room.root),
            "validate",
            "--proposals",
            str(answer),
        ],
        "max_cost_usd": settings.orchestrator_max_cost_usd,
        "wall_clock_s": settings.orchestrator_wall_clock_s,
        "kill_condition": "Two orchestrator runs in a row propose only invalid tasks: a person must re-plan.",
        "route": ROUTE,
    }
    if settings.orchestrator_adapter:
        task["adapter"] = settings.orchestrator_adapter
    if settings.orchestrator_command:
        command = settings.orchestrator_command
        task["command"] = command if isinstance(command, str) else list(command)
    try:
        admission.add(room, settings, task, source="on_empty_queue: orchestrate", new_route=TITLE)
    except ControlRoomError as exc:
        _hold(room, events.ORCHESTRATE_REFUSED, str(exc))
        return False
    return True


def _hold(room: Room, event: events.Event, detail: str) -> None:
    """Log why no orchestrator task was queued, once a day."""
    holds = Holds(room)
    holds.log("orchestrate", {"route": ROUTE}, event, detail)
    holds.save()


def slices_of(raw: Any) -> tuple[list[Any], str | None]:
    """A proposal's ``slices``: ``[{"title", "objective", "owns"?, "validator"?}, ...]``, checked
    as ``task fanout`` checks them; (slices, problem)."""
    from control_room.dispatch.queue import fanout  # only for a proposal that fans out

    if not isinstance(raw, list) or not all(isinstance(x, dict) for x in raw):
        return [], "slices must be a list of objects {title, objective, owns, validator}"
    for x in raw:  # an agent wrote them: a value of the wrong kind is its refusal, never a crash
        owns, validator = x.get("owns", []), x.get("validator")
        if not isinstance(owns, list) or not all(isinstance(p, str) for p in owns):
            return [], "a slice's owns must be a list of paths"
        if validator is not None and not (
            isinstance(validator, str)
            or (isinstance(validator, list) and all(isinstance(a, str) for a in validator))
        ):
            return [], "a slice's validator must be a command: a string or a list of strings"
    try:
        slices = [
            fanout.Slice(
                " ".join(str(x["title"]).split()),
                str(x["objective"]).strip(),
                tuple(x.get("owns", [])),
                x.get("validator"),
            )
            for x in raw
        ]
    except KeyError as exc:
        return [], f"a slice has no {exc.args[0]}"
    if len(slices) < 2:
        return [], "a fan-out needs at least 2 slices"
    return slices, fanout.same_information(slices)


def _fan_out(room: Room, settings: Settings, parent: str, slices: list[Any]) -> list[str]:
    """Split the just-queued ``parent``; if its slices are refused, the parent is cancelled
    (with the reason) rather than left waiting for nothing, and the refusal goes on."""
    from control_room.dispatch.person import decisions  # with fanout, below
    from control_room.dispatch.queue import fanout  # only for a proposal that fans out

    try:
        return [c["id"] for c in fanout.fanout(room, settings, parent, slices).children]
    except ControlRoomError as exc:
        decisions.cancel(room, parent, f"its proposed fan-out was refused: {exc}")
        raise


def extract(text: str) -> list[tuple[int, Any, str | None]]:
    """(line, parsed object or None, problem or None) for each ```json block in ``text``."""
    out: list[tuple[int, Any, str | None]] = []
    for m in _FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        try:
            data = json.loads(m.group(1))
        except (ValueError, RecursionError) as exc:
            out.append((line, None, f"not valid JSON: {exc}"))
            continue
        for item in data if isinstance(data, list) else [data]:
            out.append((line, item, None if isinstance(item, dict) else "a proposal must be a JSON object"))
    return out


def accept(room: Room, settings: Settings, source: str, text: str) -> tuple[list[str], list[str]]:
    """Queue the proposals in ``text`` (from the run of task ``source``); return (queued ids,
    refusals). Every outcome is in the ledger."""
    queued: list[str] = []
    refused: list[str] = []
    cap = settings.max_new_tasks
    for line, data, problem in extract(text):
        if problem is None and len(queued) >= cap:
            problem = f"over max_new_tasks ({cap}) for one run"
        slices: list[Any] = []
        if problem is None and "slices" in data:  # a fan-out: the task, then its slices
            data = dict(data)
            slices, problem = slices_of(data.pop("slices"))
            if problem is None and len(queued) + 1 + len(slices) > cap:
                problem = f"a fan-out of {len(slices)} slices is over max_new_tasks ({cap}) for one run"
        if problem is None:
            try:
                task = admission.add(room, settings, dict(data), source=source)
                queued.append(task["id"])
                if slices:
                    queued += _fan_out(room, settings, task["id"], slices)
                continue
            except ControlRoomError as exc:
                problem = str(exc)
        what = f"proposal at line {line} of {source}'s answer: {problem}"
        refused.append(what)
        ledger.append(room.ledger, events.PROPOSAL_REFUSED, task=source, detail=what)
    return queued, refused
