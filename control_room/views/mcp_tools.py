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
from control_room.room.layout import STATES, Room
from control_room.views import answers
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
    return {"type": "object", "properties": props or {}, "required": list(required)}


_STR = {"type": "string"}
_ID = {"type": "string", "description": "a task or route id"}


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
    return [answers.task_row(t) for t in answers.task_rows(room, list(a.get("states") or []))]


def _task_show(room: Room, _c: str, a: dict[str, Any]) -> Any:
    return answers.task_detail(room, str(a.get("id", ""))).as_dict()


def _validate_report(_r: Room, _c: str, a: dict[str, Any]) -> Any:
    return validate(str(a.get("text", ""))).as_dict()


def _ledger_tail(room: Room, _c: str, a: dict[str, Any]) -> Any:
    lines = tail(room.ledger, max(0, int(a.get("n", 10))))
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
        room, settings_file.load(room), f"mcp-{client}", str(a.get("text", ""))
    )
    return {"queued": queued, "refused": refused}


def _field_guide_add(room: Room, _c: str, a: dict[str, Any]) -> Any:
    n = prompt.add_lesson(room, settings_file.load(room), str(a.get("lesson", "")))
    return {"added": True, "lesson_lines": n, "cap": settings_file.load(room).field_guide_max_lines}


def _stop(room: Room, _c: str, a: dict[str, Any]) -> Any:
    created = brake.stop(room, str(a.get("reason", "")))
    return {"stopped": True, "created": created, "file": str(room.stop)}


_TASK_FIELDS = (
    "objective, falsifier, validator, max_cost_usd, wall_clock_s, kill_condition (all required), and "
    "optionally id, route, role, adapter, model, deps, owns, gate, review, priority, command"
)

TOOLS: tuple[Tool, ...] = (
    Tool("status", "The room on one screen, as `control-room status --json`.", _obj(), _status),
    Tool(
        "task_add",
        "Queue a task, admitted exactly as `control-room task add` admits one: refused, with the same "
        "words, without a falsifier, validator, max cost, wall clock or kill condition. "
        f"Fields: {_TASK_FIELDS}. "
        "new_route: put the task's route on the board if it is not there. " + PERSON_ONLY,
        _obj({"task": {"type": "object"}, "new_route": {"type": "boolean"}}, ("task",)),
        _task_add,
        changes=True,
    ),
    Tool(
        "task_list",
        "Tasks by state (queue in run order), as `control-room task list --json`.",
        _obj({"states": {"type": "array", "items": {"type": "string", "enum": list(STATES)}}}),
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
        _obj({"text": _STR}, ("text",)),
        _validate_report,
    ),
    Tool(
        "ledger_tail",
        "The last n ledger lines (default 10).",
        _obj({"n": {"type": "integer", "minimum": 0}}),
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
        _obj({"since": _STR}),
        _scorecard,
    ),
    Tool(
        "propose_tasks",
        "Propose tasks as an orchestrator does: text holding ```json blocks, each a task; each is admitted "
        "like task_add (its route must be on the board), at most CONTROL.md max_new_tasks per call; "
        "refusals are returned and logged. " + PERSON_ONLY,
        _obj({"text": _STR}, ("text",)),
        _propose,
        changes=True,
    ),
    Tool(
        "field_guide_add",
        "Append one lesson line to intelligence/FIELD_GUIDE.md; refused when the guide holds CONTROL.md "
        "field_guide_max_lines lessons already. " + PERSON_ONLY,
        _obj({"lesson": _STR}, ("lesson",)),
        _field_guide_add,
        changes=True,
    ),
    Tool(
        "stop",
        "Create STOP: every cycle halts and running agents are killed (failing closed is always allowed). "
        "Lifting it (resume) is a person's: " + PERSON_ONLY,
        _obj({"reason": _STR}),
        _stop,
        changes=True,
    ),
)

BY_NAME = {t.name: t for t in TOOLS}
