"""control_room.views.mcp_args: the caps, a task's schema from the task table, the argument check."""

from __future__ import annotations

from typing import Any

import pytest

from control_room.dispatch.person.brake import REASON_MAX
from control_room.dispatch.round.prompt import LESSON_MAX
from control_room.room import tasks
from control_room.views import mcp_args
from control_room.views.mcp_tools import TOOLS

SCHEMA = {
    "type": "object",
    "properties": {
        "s": {"type": "string", "maxLength": 3},
        "n": {"type": "integer", "minimum": 0, "maximum": 5},
        "x": {"type": "number"},
        "b": {"type": "boolean"},
        "o": {"type": "object"},
        "a": {"type": "array", "items": {"type": "string", "enum": ["p", "q"]}, "maxItems": 2},
    },
    "required": ["s"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ({"s": "abc"}, None),
        ({"s": "abc", "n": 5, "x": 1.5, "b": False, "o": {"k": [1]}, "a": ["q", "p"]}, None),
        ({"s": "abc", "n": None}, None),  # null: absent
        ({}, "t: argument s is required"),
        ({"s": None}, "t: argument s is required"),
        ({"s": "abcd"}, "t: argument s is 4 characters long, over the cap of 3"),
        ({"s": 1}, "t: argument s must be a string, not a number"),
        ({"s": "a", "n": 1.0}, "t: argument n must be an integer, not a number"),
        ({"s": "a", "n": False}, "t: argument n must be an integer, not a boolean"),
        ({"s": "a", "n": 6}, "t: argument n is 6, over the cap of 5"),
        ({"s": "a", "x": True}, "t: argument x must be a number, not a boolean"),
        ({"s": "a", "b": 1}, "t: argument b must be a boolean, not a number"),
        ({"s": "a", "o": []}, "t: argument o must be an object, not an array"),
        ({"s": "a", "a": "p"}, "t: argument a must be an array, not a string"),
        ({"s": "a", "a": ["p", "r"]}, "t: argument a item 1 'r' is not one of p, q"),
        ({"s": "a", "a": ["p", 1]}, "t: argument a item 1 must be a string, not a number"),
        ({"s": "a", "a": ["p"] * 3}, "t: argument a has 3 items, over the cap of 2"),
        ({"s": "a", "zz": 1}, "t: no argument 'zz' (it takes: s, n, x, b, o, a)"),
    ],
)
def test_problem_names_the_argument_and_what_is_wrong(args: dict[str, Any], said: str | None) -> None:
    assert mcp_args.problem("t", SCHEMA, args) == said


def test_an_enum_refusal_never_repeats_a_huge_value() -> None:
    said = mcp_args.problem("t", SCHEMA, {"s": "a", "a": ["z" * 1_000_000]})
    assert said is not None and len(said) < 200


def test_the_caps_are_the_librarys_own() -> None:
    assert mcp_args.cap("lesson") == LESSON_MAX == 2000
    assert mcp_args.cap("reason") == REASON_MAX == 500
    assert list(mcp_args.CAPS) == ["lesson", "text", "reason", "id", "since", "n"]


def test_the_task_schema_is_the_task_table_a_person_writes() -> None:
    schema = mcp_args.task_schema()
    assert list(schema["properties"]) == list(tasks.PERSON_FIELDS)
    assert not set(schema["properties"]) & set(tasks.OWNED)
    assert schema["required"] == list(tasks.REQUIRED)
    for f in tasks.FIELDS:
        if f.writer == tasks.PERSON:
            assert f.help in schema["properties"][f.name]["description"], f.name
    assert schema["properties"]["wall_clock_s"]["exclusiveMinimum"] == 0
    assert schema["properties"]["priority"] == {
        "type": "integer",
        "description": tasks.BY_NAME["priority"].help,
    }


def test_every_tool_takes_only_what_its_schema_names() -> None:
    for tool in TOOLS:
        assert tool.schema["additionalProperties"] is False, tool.name
        assert mcp_args.problem(tool.name, tool.schema, {"nope": 1}) is not None
