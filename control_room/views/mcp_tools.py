"""The tools `control-room mcp` offers (docs/mcp.md): each one a call of the library function
the matching command calls, with the same admission and the same refusals. Plain Python, no
MCP here: ``views/mcp_server.py`` wires these to the SDK.

Never offered, whatever a client asks: ``resume``, ``approve``, ``done``, ``route reopen``,
CONTROL.md changes, anything that spends money or lifts a brake. Those stay a person's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from control_room.dispatch.person import brake
from control_room.dispatch.queue import admission, orchestrator
from control_room.dispatch.round import prompt
from control_room.dispatch.round.report import validate
from control_room.errors import ControlRoomError, InvalidError
from control_room.knowledge import findings, history, routes, scorecard
from control_room.ledger.line import parse
from control_room.ledger.read import tail
from control_room.room import settings as settings_file
from control_room.room import tasks
from control_room.room.layout import Room
from control_room.views import answers
from control_room.views.mcp_args import cap, states_schema, string, task_schema
from control_room.views.status import gather

PERSON_ONLY = (
    "Never through MCP (a person's, at the command line): resume, approve, done, route reopen, "
    "CONTROL.md changes, anything that spends money or lifts a brake."
)


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    schema: dict[str, Any]  # JSON Schema of the arguments
    run: Callable[[Room, str, dict[str, Any]], Any]  # (room, client name, arguments) -> JSON-able
    changes: bool = False  # writes to the room (a ledger line naming the client)


def _obj(props: dict[str, Any] | None = None, required: tuple[str, ...] = ()) -> dict[str, Any]:
    """A tool's input schema: its arguments, checked before it runs (``views/mcp_args.py``)."""
    return {
        "type": "object",
        "properties": props or {},
        "required": list(required),
        "additionalProperties": False,
    }


_ID = string("id", "a task or route id")


def _status(room: Room, _c: str, _a: dict[str, Any]) -> Any:
    return gather(room)


def _task_add(room: Room, _c: str, a: dict[str, Any]) -> Any:
    data = a.get("task")
    if not isinstance(data, dict):
        raise InvalidError("task must be a JSON object (the fields of a task file)")
    new_route = bool(a.get("new_route"))
    if new_route and not data.get("route"):
        raise InvalidError("--new-route needs the task's route: give --route ID")
    t = admission.add(room, settings_file.load(room), dict(data), new_route="" if new_route else None)
    return {"queued": t["id"], "file": f"swarm/queue/{t['id']}.json", "task": t}


def _task_list(room: Room, _c: str, a: dict[str, Any]) -> Any:
    return [answers.task_row(t) for t in answers.task_rows(room, list(dict.fromkeys(a.get("states") or [])))]


def _task_show(room: Room, _c: str, a: dict[str, Any]) -> Any:
    return answers.task_detail(room, str(a.get("id", ""))).as_dict()


def _validate_report(_r: Room, _c: str, a: dict[str, Any]) -> Any:
    return validate(a.get("text") or "").as_dict()


def _ledger_tail(room: Room, _c: str, a: dict[str, Any]) -> Any:
    n = a.get("n")
    lines = tail(room.ledger, max(0, 10 if n is None else n))
    return [e.as_dict() if (e := parse(line)) else {"unparsed": line} for line in lines]


def _route_list(room: Room, _c: str, _a: dict[str, Any]) -> Any:
    try:
        settings = settings_file.load(room)
    except ControlRoomError:
        settings = settings_file.DEFAULTS
    try:
        held = sorted(history.held(room, settings))
    except FileNotFoundError:
        held = []
    return {
        "routes": routes.rows(room),
        "held": held,
        "problems": routes.problems(room),
        "reviews": history.reviews(room),
    }


def _route_show(room: Room, _c: str, a: dict[str, Any]) -> Any:
    return answers.route_detail(room, str(a.get("id", "")))


def _findings(room: Room, _c: str, _a: dict[str, Any]) -> Any:
    return findings.gather(room, settings_file.load(room))


def _scorecard(room: Room, _c: str, a: dict[str, Any]) -> Any:
    return scorecard.card(room, a.get("since") or None)


def _propose(room: Room, client: str, a: dict[str, Any]) -> Any:
    queued, refused = orchestrator.accept(
        room, settings_file.load(room), f"mcp-{client}", a.get("text") or ""
    )
    return {"queued": queued, "refused": refused}


def _field_guide_add(room: Room, _c: str, a: dict[str, Any]) -> Any:
    n = prompt.add_lesson(room, settings_file.load(room), a.get("lesson") or "")
    return {"added": True, "lesson_lines": n, "cap": settings_file.load(room).field_guide_max_lines}


def _stop(room: Room, _c: str, a: dict[str, Any]) -> Any:
    created = brake.stop(room, a.get("reason") or "")
    return {"stopped": True, "created": created, "file": str(room.stop)}


_TASK_FIELDS = (
    ", ".join(tasks.REQUIRED)
    + " (all required), and optionally "
    + ", ".join(f for f in tasks.PERSON_FIELDS if f not in tasks.REQUIRED)
)

TOOLS: tuple[Tool, ...] = (
    Tool("status", "The room on one screen, as `control-room status --json`.", _obj(), _status),
    Tool(
        "task_add",
        "Queue a task, admitted exactly as `control-room task add` admits one: refused, with the same "
        "words, without a falsifier, validator, max cost, wall clock or kill condition. "
        f"Fields: {_TASK_FIELDS}. "
        "new_route: put the task's route on the board if it is not there. " + PERSON_ONLY,
        _obj(
            {
                "task": task_schema(),
                "new_route": {"type": "boolean", "description": "put the task's route on the board"},
            },
            ("task",),
        ),
        _task_add,
        changes=True,
    ),
    Tool(
        "task_list",
        "Tasks by state (queue in run order), as `control-room task list --json`.",
        _obj({"states": states_schema()}),
        _task_list,
    ),
    Tool(
        "task_show",
        "One task: its state, fields, and why it was parked or rejected.",
        _obj({"id": _ID}, ("id",)),
        _task_show,
    ),
    Tool(
        "validate_report",
        "Check a report (skills/report-format.md) as `control-room validate` does; "
        "returns the parsed report.",
        _obj({"text": string("text", "the report, as an agent ends its answer")}, ("text",)),
        _validate_report,
    ),
    Tool(
        "ledger_tail",
        "The last n ledger lines (default 10).",
        _obj({"n": {"type": "integer", "minimum": 0, "maximum": cap("n"), "description": "how many lines"}}),
        _ledger_tail,
    ),
    Tool("route_list", "The routes in ROUTES.md, held routes, and hand-edit problems.", _obj(), _route_list),
    Tool(
        "route_show",
        "One route: its row, its tasks, its history, its tombstone.",
        _obj({"id": _ID}, ("id",)),
        _route_show,
    ),
    Tool("findings", "Death loops, unsupported CONFIRMED claims, escalated reviews.", _obj(), _findings),
    Tool(
        "scorecard",
        "Runs per adapter and model and per role. since: a date, a UTC time or a duration back (7d).",
        _obj({"since": string("since", "a date (2026-11-30), a UTC time or a duration back (7d)")}),
        _scorecard,
    ),
    Tool(
        "propose_tasks",
        "Propose tasks as an orchestrator does: text holding ```json blocks, each a task; each is admitted "
        "like task_add (its route must be on the board), at most CONTROL.md max_new_tasks per call; "
        "refusals are returned and logged. " + PERSON_ONLY,
        _obj({"text": string("text", "an orchestrator's answer: ```json blocks, each a task")}, ("text",)),
        _propose,
        changes=True,
    ),
    Tool(
        "field_guide_add",
        "Append one lesson line to intelligence/FIELD_GUIDE.md; refused when the guide holds CONTROL.md "
        "field_guide_max_lines lessons already. " + PERSON_ONLY,
        _obj(
            {"lesson": string("lesson", "one terse, verified lesson, with the task id that shows it")},
            ("lesson",),
        ),
        _field_guide_add,
        changes=True,
    ),
    Tool(
        "stop",
        "Create STOP: every cycle halts and running agents are killed (failing closed is always allowed). "
        "Lifting it (resume) is a person's: " + PERSON_ONLY,
        _obj({"reason": string("reason", "why, for the ledger and status", refused=False)}),
        _stop,
        changes=True,
    ),
)

BY_NAME = {t.name: t for t in TOOLS}
