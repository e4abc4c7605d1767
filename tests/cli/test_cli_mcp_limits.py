"""control-room mcp as an untrusted client uses it: arguments of the wrong type, too long, unknown
or missing, each answered with one `Error:` line naming the argument, over a real stdio
subprocess of the installed command (the SDK's own client); the schemas a client is shown."""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_types import Implementation
from support import data_lines, task

from control_room.room import tasks
from control_room.room.layout import Room

Session = Callable[[ClientSession], Awaitable[Any]]
LESSON_MAX = 2_000  # docs/mcp.md's cap on a lesson (every later prompt carries it)


def talk(exe: str, room: Room, work: Session) -> Any:
    params = StdioServerParameters(
        command=exe, args=["mcp", "--room", str(room.root)], env=dict(os.environ), cwd=str(room.root)
    )

    async def main() -> Any:
        info = Implementation(name="limits", version="1")
        async with stdio_client(params) as (read, write), ClientSession(read, write, client_info=info) as s:
            await s.initialize()
            return await work(s)

    return anyio.run(main)


def text(result: Any) -> str:
    return "".join(c.text for c in result.content)


def calls(exe: str, room: Room, *asked: tuple[str, dict[str, Any]]) -> list[tuple[bool, str]]:
    """(is_error, text) of each call, in order, on one connection."""

    async def work(s: ClientSession) -> Any:
        return [await s.call_tool(name, args) for name, args in asked]

    return [(bool(r.is_error), text(r)) for r in talk(exe, room, work)]


def test_a_lesson_too_long_or_not_a_string_is_refused_and_the_guide_untouched(exe: str, room: Room) -> None:
    guide = room.root / "intelligence" / "FIELD_GUIDE.md"
    before, ledger = guide.read_text(encoding="utf-8"), data_lines(room.ledger)
    huge = "x" * 5_000_000
    answers = calls(
        exe, room,
        ("field_guide_add", {"lesson": huge}),
        ("field_guide_add", {"lesson": "y" * (LESSON_MAX + 1)}),
        ("field_guide_add", {"lesson": 42}),
        ("field_guide_add", {"lesson": ["a", "b"]}),
        ("field_guide_add", {}),
    )  # fmt: skip
    assert answers == [
        (True, "Error: field_guide_add: argument lesson is 5000000 characters long, over the cap of 2000"),
        (True, "Error: field_guide_add: argument lesson is 2001 characters long, over the cap of 2000"),
        (True, "Error: field_guide_add: argument lesson must be a string, not a number"),
        (True, "Error: field_guide_add: argument lesson must be a string, not an array"),
        (True, "Error: field_guide_add: argument lesson is required"),
    ]
    assert guide.read_text(encoding="utf-8") == before
    assert data_lines(room.ledger) == ledger
    (ok,) = calls(exe, room, ("field_guide_add", {"lesson": "z" * LESSON_MAX}))
    assert ok[0] is False and guide.read_text(encoding="utf-8").endswith("- " + "z" * LESSON_MAX + "\n")


def test_each_argument_is_checked_against_its_tools_schema(exe: str, room: Room) -> None:
    (room.state_dir("queue") / "t1.json").write_text(json.dumps(task("t1")), encoding="utf-8")
    answers = calls(
        exe, room,
        ("scorecard", {"since": 5}),
        ("task_list", {"states": "queue"}),
        ("task_list", {"states": ["queue", "nowhere"]}),
        ("ledger_tail", {"n": "ten"}),
        ("ledger_tail", {"n": True}),
        ("ledger_tail", {"n": 10_001}),
        ("ledger_tail", {"n": -1}),
        ("task_show", {"id": {"x": 1}}),
        ("task_show", {"id": "t" * 65}),
        ("status", {"verbose": True}),
        ("task_add", {"task": "objective: do it"}),
        ("task_add", {"task": task("t2"), "new_route": "yes"}),
        ("validate_report", {"text": None}),
    )  # fmt: skip
    assert answers == [
        (True, "Error: scorecard: argument since must be a string, not a number"),
        (True, "Error: task_list: argument states must be an array, not a string"),
        (True, "Error: task_list: argument states item 1 'nowhere' is not one of "
               "queue, running, passed, to-test, done, parked, rejected, cancelled"),
        (True, "Error: ledger_tail: argument n must be an integer, not a string"),
        (True, "Error: ledger_tail: argument n must be an integer, not a boolean"),
        (True, "Error: ledger_tail: argument n is 10001, over the cap of 10000"),
        (True, "Error: ledger_tail: argument n must be at least 0"),
        (True, "Error: task_show: argument id must be a string, not an object"),
        (True, "Error: task_show: argument id is 65 characters long, over the cap of 64"),
        (True, "Error: status: no argument 'verbose' (it takes: none)"),
        (True, "Error: task_add: argument task must be an object, not a string"),
        (True, "Error: task_add: argument new_route must be a boolean, not a string"),
        (True, "Error: validate_report: argument text is required"),
    ]  # fmt: skip
    assert not (room.state_dir("queue") / "t2.json").exists()
    ok = calls(exe, room, ("task_list", {"states": ["queue"]}), ("scorecard", {"since": "7d"}))
    assert [e for e, _ in ok] == [False, False]
    assert [t["id"] for t in json.loads(ok[0][1])] == ["t1"]


def test_task_adds_schema_names_the_fields_a_task_author_writes(exe: str, room: Room) -> None:
    async def work(s: ClientSession) -> Any:
        return {t.name: t.input_schema for t in (await s.list_tools()).tools}

    schemas = talk(exe, room, work)
    schema = schemas["task_add"]["properties"]["task"]
    person = [f.name for f in tasks.FIELDS if f.writer == tasks.PERSON]
    assert list(schema["properties"]) == person
    assert schema["required"] == list(tasks.REQUIRED) == [
        "objective", "falsifier", "validator", "max_cost_usd", "wall_clock_s", "kill_condition",
    ]  # fmt: skip
    assert schema["additionalProperties"] is False
    for owned in ("rounds", "seal", "for_task", "reviews", "done_by", "created"):
        assert owned not in schema["properties"]
    props = schema["properties"]
    assert props["max_cost_usd"] == {
        "type": "number", "minimum": 0, "description": "cost ceiling for this run, in USD",
    }  # fmt: skip
    assert props["deps"]["type"] == "array" and props["deps"]["items"]["pattern"].startswith("^[a-z0-9]")
    assert props["validator"]["anyOf"][0] == {"type": "string", "minLength": 1}
    assert props["role"]["description"].endswith("(default 'engineer')")
    assert schemas["field_guide_add"]["properties"]["lesson"]["maxLength"] == LESSON_MAX
    for name, s in schemas.items():
        assert s["type"] == "object" and s["additionalProperties"] is False, name


def test_a_stop_is_never_refused_for_its_reason_which_is_cut_to_one_line(exe: str, room: Room) -> None:
    (bad, stopped) = calls(
        exe, room, ("stop", {"reason": 5}), ("stop", {"reason": "smoke\nFORGED: line " * 100})
    )
    assert bad == (True, "Error: stop: argument reason must be a string, not a number")
    assert stopped[0] is False and room.stopped()
    reason = room.stop.read_text(encoding="utf-8").splitlines()[1]
    assert reason == "reason: " + ("smoke FORGED: line " * 100)[:499] + "…"
