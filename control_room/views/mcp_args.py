"""What an MCP client may send (docs/mcp.md): the caps on each argument (``CAPS``, the one
table), the JSON Schema of a task generated from the task table (``task_schema``), and the
check of a call's arguments against its tool's schema (``problem``).

A client is an agent, untrusted: each argument is checked against the tool's input schema
before the tool runs (its type, whether it is required, an enum, a length or a range, no
argument the schema does not name), and a call that does not fit is answered with one line,
``Error: <tool>: <argument> ...``. The fields of a task are not checked here: admission does,
as for ``control-room task add``, in its words (``room/tasks.py`` ``validate``).
"""

from __future__ import annotations

from typing import Any

from control_room.dispatch.person.brake import REASON_MAX
from control_room.dispatch.round.prompt import LESSON_MAX
from control_room.room import tasks
from control_room.room.layout import STATES
from control_room.room.swarm import MAX_BYTES

# argument -> (its cap, what the cap is in, why); schemas take their maxLength / maximum from here.
CAPS: dict[str, tuple[int, str, str]] = {
    "lesson": (LESSON_MAX, "characters", "one line of the field guide, which every later prompt carries"),
    "text": (MAX_BYTES, "characters", "a report or an orchestrator's answer (a task file's cap)"),
    "reason": (
        REASON_MAX,
        "characters",
        "a STOP's reason: cut there, never refused (failing closed is always allowed)",
    ),
    "id": (64, "characters", "a task or route id (`[a-z0-9][a-z0-9._-]{0,63}`)"),
    "since": (64, "characters", "a date, a UTC time or a duration"),
    "n": (10_000, "lines", "ledger lines answered at once"),
}


def cap(name: str) -> int:
    return CAPS[name][0]


def string(name: str, description: str, *, refused: bool = True) -> dict[str, Any]:
    """A string argument capped by ``CAPS[name]``: refused over it, or (``refused=False``) told
    of the cap and cut by the library."""
    if not refused:
        return {"type": "string", "description": f"{description} (cut to {cap(name)} characters)"}
    return {"type": "string", "maxLength": cap(name), "description": description}


_ID_PATTERN = "^[a-z0-9][a-z0-9._-]{0,63}$"
_ID = {"type": "string", "pattern": _ID_PATTERN}
_STRS = {"type": "array", "items": {"type": "string"}}

# a task field's kind (room/tasks.py) -> its JSON Schema
_KINDS: dict[str, dict[str, Any]] = {
    "text": {"type": "string", "minLength": 1},
    "id": _ID,
    "ids": {"type": "array", "items": _ID},
    "cost": {"type": "number", "minimum": 0},
    "seconds": {"type": "number", "exclusiveMinimum": 0},
    "int": {"type": "integer"},
    "count": {"type": "integer", "minimum": 0},
    "strs": _STRS,
    "argv": {"anyOf": [{"type": "string", "minLength": 1}, {**_STRS, "minItems": 1}]},
    "paths": {**_STRS, "description": "relative to the work dir, without '..'"},
}


def task_schema() -> dict[str, Any]:
    """A task as its author writes it: every field of ``tasks.FIELDS`` a person writes, with its
    type and its one line of doc; the required ones required; no field the dispatcher owns (those
    are refused from any author, ``tasks.owned_problem``)."""
    props: dict[str, Any] = {}
    for f in tasks.FIELDS:
        if f.writer != tasks.PERSON:
            continue
        schema = dict(_KINDS[f.kind])
        doc = f.help if f.default in (None, [], 0) or f.required else f"{f.help} (default {f.default!r})"
        props[f.name] = {
            **schema,
            "description": f"{schema['description']}: {doc}" if "description" in schema else doc,
        }
    return {
        "type": "object",
        "properties": props,
        "required": list(tasks.REQUIRED),
        "additionalProperties": False,
        "description": "the fields of a task file (docs/tasks.md); the task file may hold at most "
        f"{MAX_BYTES} bytes",
    }


def states_schema() -> dict[str, Any]:
    return {"type": "array", "items": {"type": "string", "enum": list(STATES)}, "maxItems": len(STATES)}


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def _fits(schema: dict[str, Any], value: Any) -> str | None:
    """Why ``value`` does not fit ``schema`` (the subset of JSON Schema the tools use), or None.
    An object's own properties are not looked into (a task's fields are admission's)."""
    kind = schema.get("type")
    if kind is not None:
        ok = isinstance(value, _JSON_TYPES[kind]) and (kind == "boolean" or not isinstance(value, bool))
        if not ok:
            return f"must be {'an' if kind[0] in 'aeio' else 'a'} {kind}, not {_type_name(value)}"
    if "enum" in schema and value not in schema["enum"]:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:39] + "…"
        return f"{shown} is not one of {', '.join(map(str, schema['enum']))}"
    if isinstance(value, str) and len(value) > schema.get("maxLength", len(value)):
        return f"is {len(value)} characters long, over the cap of {schema['maxLength']}"
    if isinstance(value, int | float) and not isinstance(value, bool):
        if value < schema.get("minimum", value):
            return f"must be at least {schema['minimum']}"
        if value > schema.get("maximum", value):
            return f"is {value}, over the cap of {schema['maximum']}"
    if isinstance(value, list):
        if len(value) > schema.get("maxItems", len(value)):
            return f"has {len(value)} items, over the cap of {schema['maxItems']}"
        for i, item in enumerate(value):
            why = _fits(schema.get("items", {}), item)
            if why is not None:
                return f"item {i} {why}"
    return None


def problem(tool: str, schema: dict[str, Any], args: dict[str, Any]) -> str | None:
    """The one line refusing ``args`` of a call of ``tool`` (naming the argument), or None."""
    props: dict[str, Any] = schema.get("properties", {})
    for name in schema.get("required", []):
        if args.get(name) is None:
            return f"{tool}: argument {name} is required"
    for name, value in args.items():
        if name not in props:
            known = ", ".join(props) or "none"
            return f"{tool}: no argument {str(name)[:64]!r} (it takes: {known})"
        if value is None:
            continue  # absent, as JSON clients often send it
        why = _fits(props[name], value)
        if why is not None:
            return f"{tool}: argument {name} {why}"
    return None
