"""control_room.views.mcp_server: in-process through the SDK's client: tools, resources, refusals, writer."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Awaitable, Callable
from types import SimpleNamespace
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, MCPError
from mcp_types import Implementation
from support import entries, task

from control_room import __version__
from control_room.room.layout import Room
from control_room.views import mcp_server
from control_room.views.mcp_tools import PERSON_ONLY, TOOLS

Work = Callable[[Client], Awaitable[Any]]


def talk(room: Room, work: Work, *, name: str = "test-client", mode: str = "auto") -> Any:
    """Connect the SDK's client to ``build(room)`` in this process, run ``work``, return its result.
    ``auto`` speaks the 2026 protocol (client info in each request's _meta); ``legacy``, the
    initialize handshake of stdio clients today."""

    async def main() -> Any:
        info = Implementation(name=name, version="1.0")
        async with Client(mcp_server.build(room), mode=mode, client_info=info, cache=None) as client:
            return await work(client)

    return anyio.run(main)


def text(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


def _fill(room: Room) -> None:
    """One file of every kind the server offers, and some it must not."""
    (room.state_dir("queue") / "t1.json").write_text(json.dumps(task("t1")))
    (room.state_dir("parked") / "t2.json").write_text(json.dumps(task("t2")))
    (room.state_dir("parked") / "t2.reason").write_text("max rounds\n")
    (room.state_dir("queue") / ".tmp-x.json").write_text("{}")
    (room.root / "graveyard" / "dead-end.md").write_text("---\ncandidate: dead-end\n---\n")
    results = room.swarm / "results" / "t0"
    (results / "run-1").mkdir(parents=True)
    for folder in (results, results / "run-1"):
        (folder / "report.md").write_text("DECISION: x\n")
        (folder / "meta.json").write_text("{}")
    (results / "agent.stdout").write_text("not offered")


def test_resources_are_the_room_files_it_offers_and_only_those(room: Room) -> None:
    _fill(room)
    found = mcp_server.resources(room)
    assert {uri: (path.relative_to(room.root).as_posix(), what) for uri, (path, what) in found.items()} == {
        "control-room://control-room/CURRENT_CONTEXT.md": (
            "control-room/CURRENT_CONTEXT.md",
            "what the room is doing now (CURRENT_CONTEXT.md)",
        ),
        "control-room://control-room/DIGEST.md": (
            "control-room/DIGEST.md",
            "what the ledger taught the room (DIGEST.md)",
        ),
        "control-room://control-room/ROUTES.md": (
            "control-room/ROUTES.md",
            "the board of routes (ROUTES.md)",
        ),
        "control-room://skills/report-format.md": (
            "skills/report-format.md",
            "the report format every agent ends with",
        ),
        "control-room://intelligence/FIELD_GUIDE.md": (
            "intelligence/FIELD_GUIDE.md",
            "lessons injected into prompts",
        ),
        "control-room://graveyard/dead-end.md": ("graveyard/dead-end.md", "tombstone of route dead-end"),
        "control-room://swarm/queue/t1.json": ("swarm/queue/t1.json", "task t1 (queue)"),
        "control-room://swarm/parked/t2.json": ("swarm/parked/t2.json", "task t2 (parked)"),
        "control-room://swarm/results/t0/report.md": ("swarm/results/t0/report.md", "report of t0"),
        "control-room://swarm/results/t0/meta.json": ("swarm/results/t0/meta.json", "meta of t0"),
        "control-room://swarm/results/t0/run-1/report.md": (
            "swarm/results/t0/run-1/report.md",
            "report of t0 run-1",
        ),
        "control-room://swarm/results/t0/run-1/meta.json": (
            "swarm/results/t0/run-1/meta.json",
            "meta of t0 run-1",
        ),
    }


def test_a_missing_file_or_folder_is_simply_not_offered(room: Room) -> None:
    room.digest.unlink(missing_ok=True)
    (room.swarm / "results").rename(room.root / "elsewhere")
    found = mcp_server.resources(room)
    assert "control-room://control-room/DIGEST.md" not in found
    assert not any(uri.startswith("control-room://swarm/results/") for uri in found)
    assert "control-room://control-room/CONTROL.md" not in found


def test_writing_as_names_the_client_after_the_host_and_puts_the_writer_back(room: Room) -> None:
    assert os.environ["CONTROL_ROOM_WRITER"] == "tester"
    with mcp_server.writing_as(room, "bot"):
        assert os.environ["CONTROL_ROOM_WRITER"] == "tester.mcp.bot"
    assert os.environ["CONTROL_ROOM_WRITER"] == "tester"
    with pytest.raises(RuntimeError), mcp_server.writing_as(room, "bot"):
        raise RuntimeError("a tool failed")
    assert os.environ["CONTROL_ROOM_WRITER"] == "tester"


def test_writing_as_leaves_no_writer_when_there_was_none(room: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CONTROL_ROOM_WRITER")
    with mcp_server.writing_as(room, "bot"):
        assert os.environ["CONTROL_ROOM_WRITER"].endswith(".mcp.bot")
    assert "CONTROL_ROOM_WRITER" not in os.environ


def _ctx(init_name: str | None = None, meta: Any = None) -> Any:
    params = None
    if init_name is not None:
        params = types.InitializeRequestParams(
            protocol_version="2025-11-25",
            capabilities=types.ClientCapabilities(),
            client_info=Implementation(name=init_name, version="1"),
        )
    return SimpleNamespace(session=SimpleNamespace(client_params=params), meta=meta)


def test_client_name_is_made_safe_for_a_ledger_cell() -> None:
    assert mcp_server.client_name(_ctx("claude-code")) == "claude-code"
    assert mcp_server.client_name(_ctx("My Client | v2!")) == "My-Client-v2"
    assert mcp_server.client_name(_ctx("x" * 60)) == "x" * 48
    assert mcp_server.client_name(_ctx("!!!")) == "unknown"
    key = types.CLIENT_INFO_META_KEY
    assert mcp_server.client_name(_ctx(meta={key: {"name": "codex mcp", "version": "1"}})) == "codex-mcp"
    assert mcp_server.client_name(_ctx(meta={key: "not an object"})) == "unknown"
    assert mcp_server.client_name(_ctx(meta={})) == "unknown"
    assert mcp_server.client_name(_ctx()) == "unknown"


def test_call_answers_with_text_and_structured_content(room: Room) -> None:
    listed = mcp_server.call(room, "cl", "task_list", {"states": ["queue"]})
    assert listed.is_error is False
    assert (text(listed), listed.structured_content) == ("[]", {"result": []})
    status = mcp_server.call(room, "cl", "status", {})
    assert json.loads(text(status)) == status.structured_content
    assert text(status).startswith('{\n  "room": ')  # indented, as --json prints


@pytest.mark.parametrize(
    ("name", "args", "said"),
    [
        ("resume", {}, "Error: no tool resume. " + PERSON_ONLY),
        ("task_show", {"id": "ghost"}, None),
        ("ledger_tail", {"n": "ten"}, "Error: ledger_tail: argument n must be an integer, not a string"),
        ("task_add", {"task": "x"}, "Error: task_add: argument task must be an object, not a string"),
        ("scorecard", {"since": 5}, "Error: scorecard: argument since must be a string, not a number"),
    ],
)
def test_call_refuses_in_one_line(room: Room, name: str, args: dict[str, Any], said: str | None) -> None:
    result = mcp_server.call(room, "cl", name, args)
    assert result.is_error is True and result.structured_content is None
    if said is None:
        assert text(result).startswith("Error: no task ghost") and "\n" not in text(result)
    else:
        assert text(result) == said


def test_call_reports_a_file_it_cannot_read_as_the_command_line_does(room: Room) -> None:
    room.ledger.unlink()
    result = mcp_server.call(room, "cl", "ledger_tail", {})
    assert (result.is_error, text(result)) == (True, f"Error: {room.ledger}: No such file or directory")


def test_a_changing_call_writes_as_the_client_and_refreshes_the_views(room: Room) -> None:
    before = room.context.read_text()
    result = mcp_server.call(room, "bot", "task_add", {"task": task("via-mcp")})
    assert result.is_error is False
    assert result.structured_content is not None and result.structured_content["queued"] == "via-mcp"
    (added,) = entries(room, "task-add")
    assert added.writer == "tester.mcp.bot"
    assert os.environ["CONTROL_ROOM_WRITER"] == "tester"
    after = room.context.read_text()
    assert after != before and "- tasks: queue 1, running 0, done 0," in after
    assert "  task-add  via-mcp  queued  make parse() twice as fast\n" in after


def test_a_reading_call_writes_nothing(room: Room) -> None:
    (room.state_dir("queue") / "t1.json").write_text(json.dumps(task("t1")))
    before = {p: p.read_bytes() for p in (room.context, room.digest, room.ledger)}
    assert mcp_server.call(room, "bot", "status", {}).is_error is False
    assert {p: p.read_bytes() for p in before} == before


def test_the_server_lists_every_tool_with_its_schema(room: Room) -> None:
    async def work(c: Client) -> Any:
        return (await c.list_tools()).tools, c.instructions, c.server_info

    tools, instructions, info = talk(room, work)
    assert [(t.name, t.description, t.input_schema) for t in tools] == [
        (t.name, t.description, t.schema) for t in TOOLS
    ]
    assert (
        instructions == f"The control room at {room.root}: a swarm's tasks, routes and ledger. " + PERSON_ONLY
    )
    assert info is not None and (info.name, info.version) == ("control-room", __version__)


def test_the_server_lists_resources_afresh_and_reads_one(room: Room) -> None:
    async def work(c: Client) -> Any:
        first = (await c.list_resources()).resources
        (room.state_dir("queue") / "t1.json").write_text(json.dumps(task("t1")))
        second = (await c.list_resources()).resources
        got = await c.read_resource("control-room://swarm/queue/t1.json")
        guide = await c.read_resource("control-room://intelligence/FIELD_GUIDE.md")
        return first, second, got, guide

    offered = list(mcp_server.resources(room))
    first, second, got, guide = talk(room, work)
    assert [str(r.uri) for r in first] == offered
    assert [str(r.uri) for r in second] == [*offered, "control-room://swarm/queue/t1.json"]
    (t1,) = [r for r in second if str(r.uri) == "control-room://swarm/queue/t1.json"]
    assert (t1.name, t1.description, t1.mime_type) == (
        "swarm/queue/t1.json",
        "task t1 (queue)",
        "application/json",
    )
    assert {r.mime_type for r in second if r is not t1} == {"text/markdown"}
    (content,) = got.contents
    assert (content.mime_type, json.loads(content.text)) == ("application/json", task("t1"))
    assert guide.contents[0].text == (room.root / "intelligence" / "FIELD_GUIDE.md").read_text()
    assert guide.contents[0].mime_type == "text/markdown"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_resource_it_does_not_list_is_refused_with_why(
    room: Room, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    async def work(c: Client) -> Any:
        try:
            await c.read_resource("control-room://control-room/CONTROL.md")
        except MCPError as exc:
            return exc
        return None

    with caplog.at_level(logging.ERROR):
        refused = talk(room, work, mode=mode)
    assert isinstance(refused, MCPError)
    assert (refused.code, refused.message) == (
        types.INVALID_PARAMS,
        "no resource control-room://control-room/CONTROL.md: list_resources names each one",
    )
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []  # a refusal, not a crash


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_ledger_names_the_client_it_was_told(room: Room, mode: str) -> None:
    async def work(c: Client) -> Any:
        return await c.call_tool("stop", {"reason": "an agent saw smoke"})

    result = talk(room, work, name="my agent!", mode=mode)
    assert result.is_error is False and room.stopped()
    (line,) = entries(room, "stop")
    assert (line.writer, line.detail) == ("tester.mcp.my-agent", "an agent saw smoke")


def test_a_refusal_reaches_the_client_as_a_tool_error(room: Room) -> None:
    async def work(c: Client) -> Any:
        return await c.call_tool("approve", {"id": "t1"}), await c.call_tool("task_show", {"id": "ghost"})

    approve, ghost = talk(room, work)
    assert (approve.is_error, text(approve)) == (True, "Error: no tool approve. " + PERSON_ONLY)
    assert ghost.is_error is True and text(ghost).startswith("Error: no task ghost")
