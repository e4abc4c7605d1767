"""control-room mcp: the SDK's own client over a real stdio subprocess of the installed command."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_types import Implementation
from support import data_lines, entries, error, set_gate, task

from control_room.errors import NO_EXTRA
from control_room.room.layout import Room
from control_room.views.mcp_tools import TOOLS

CLIENT = "test-client"
Session = Callable[[ClientSession], Awaitable[Any]]


def talk(exe: str, room: Room, work: Session) -> Any:
    """Start `control-room mcp --room ROOM`, initialise as CLIENT, run ``work``, return its result."""
    params = StdioServerParameters(
        command=exe, args=["mcp", "--room", str(room.root)], env=dict(os.environ), cwd=str(room.root)
    )

    async def main() -> Any:
        async with stdio_client(params) as (read, write):
            info = Implementation(name=CLIENT, version="1.0")
            async with ClientSession(read, write, client_info=info) as session:
                await session.initialize()
                return await work(session)

    return anyio.run(main)


def text(result: Any) -> str:
    return "".join(c.text for c in result.content)


def test_lists_the_tools_and_resources_and_never_offers_a_persons_commands(exe: str, room: Room) -> None:
    (room.state_dir("queue") / "t1.json").write_text(json.dumps(task("t1")), encoding="utf-8")
    (room.root / "graveyard" / "dead-end.md").write_text("---\nroute: dead-end\n---\n", encoding="utf-8")
    results = room.swarm / "results" / "t0"
    (results / "run-1").mkdir(parents=True)
    for folder in (results, results / "run-1"):
        (folder / "report.md").write_text("DECISION: x\n", encoding="utf-8")
        (folder / "meta.json").write_text("{}", encoding="utf-8")
    (results / "agent.stdout").write_text("not offered", encoding="utf-8")

    async def work(s: ClientSession) -> Any:
        return (await s.list_tools()).tools, (await s.list_resources()).resources

    tools, resources = talk(exe, room, work)
    names = [t.name for t in tools]
    assert names == [t.name for t in TOOLS]  # the list itself: tests/views/test_mcp_tools.py
    for absent in ("resume", "approve", "done", "route_reopen", "set", "control"):
        assert absent not in names
    desc = {t.name: t.description for t in tools}
    for name in ("task_add", "propose_tasks", "field_guide_add", "stop"):
        assert "Never through MCP (a person's, at the command line): resume, approve, done, route reopen" in (
            desc[name] or ""
        )
    uris = [str(r.uri) for r in resources]
    assert uris == [
        "control-room://control-room/CURRENT_CONTEXT.md",
        "control-room://control-room/DIGEST.md",
        "control-room://control-room/ROUTES.md",
        "control-room://skills/report-format.md",
        "control-room://intelligence/FIELD_GUIDE.md",
        "control-room://graveyard/dead-end.md",
        "control-room://swarm/queue/t1.json",
        "control-room://swarm/results/t0/report.md",
        "control-room://swarm/results/t0/meta.json",
        "control-room://swarm/results/t0/run-1/report.md",
        "control-room://swarm/results/t0/run-1/meta.json",
    ]


def test_reads_a_task_and_refuses_a_file_it_does_not_list(exe: str, room: Room) -> None:
    (room.state_dir("queue") / "t1.json").write_text(json.dumps(task("t1")), encoding="utf-8")

    async def work(s: ClientSession) -> Any:
        got = await s.read_resource("control-room://swarm/queue/t1.json")
        try:
            await s.read_resource("control-room://control-room/CONTROL.md")
        except Exception as exc:  # the SDK raises its MCPError for a server's error
            return got, str(exc)
        return got, None

    got, refused = talk(exe, room, work)
    assert json.loads(got.contents[0].text)["id"] == "t1"
    assert refused is not None and "no resource control-room://control-room/CONTROL.md" in refused


def test_task_add_queues_it_and_the_ledger_names_the_client(exe: str, room: Room) -> None:
    async def work(s: ClientSession) -> Any:
        added = await s.call_tool("task_add", {"task": task("via-mcp")})
        listed = await s.call_tool("task_list", {"states": ["queue"]})
        shown = await s.call_tool("task_show", {"id": "via-mcp"})
        tail = await s.call_tool("ledger_tail", {"n": 1})
        return added, listed, shown, tail

    result, listed, shown, tail = talk(exe, room, work)
    assert result.is_error is False
    assert json.loads(text(result))["queued"] == "via-mcp"
    assert [t["id"] for t in json.loads(text(listed))] == ["via-mcp"]
    assert json.loads(text(shown))["state"] == "queue"
    (last,) = json.loads(text(tail))
    assert (last["event"], last["task"], last["writer"]) == ("task-add", "via-mcp", f"tester.mcp.{CLIENT}")
    assert (room.state_dir("queue") / "via-mcp.json").is_file()
    (added,) = entries(room, "task-add")
    assert (added.task, added.writer) == ("via-mcp", f"tester.mcp.{CLIENT}")


def test_a_task_without_a_falsifier_is_refused_in_the_clis_words(
    exe: str, room: Room, run: Callable[..., Any], tmp_path: Path
) -> None:
    vague = {k: v for k, v in task("vague").items() if k != "falsifier"}
    path = tmp_path / "vague.json"
    path.write_text(json.dumps(vague), encoding="utf-8")
    before = data_lines(room.ledger)
    cli = run("--room", str(room.root), "task", "add", "--file", str(path))

    async def work(s: ClientSession) -> Any:
        return await s.call_tool("task_add", {"task": vague})

    result = talk(exe, room, work)
    assert cli.exit_code == 4
    assert result.is_error is True
    assert text(result) + "\n" == cli.stderr
    assert text(result).startswith("Error: task refused: ") and "falsifier" in text(result)
    assert not (room.state_dir("queue") / "vague.json").exists()
    assert data_lines(room.ledger) == before


def test_stop_propose_and_field_guide_write_ledger_lines_naming_the_client(exe: str, room: Room) -> None:
    set_gate(room, "max_new_tasks", "1")
    proposals = "".join(
        f"```json\n{json.dumps(task(i))}\n```\n" for i in ("first-proposal", "second-proposal")
    )

    async def work(s: ClientSession) -> Any:
        proposed = await s.call_tool("propose_tasks", {"text": proposals})
        lesson = await s.call_tool("field_guide_add", {"lesson": "run the bench five times (task t1)"})
        stopped = await s.call_tool("stop", {"reason": "an agent saw smoke"})
        resume = await s.call_tool("resume", {})
        bad = await s.call_tool("ledger_tail", {"n": "ten"})
        return proposed, lesson, stopped, resume, bad

    proposed, lesson, stopped, resume, bad = talk(exe, room, work)
    assert bad.is_error is True and text(bad).startswith("Error: ")
    assert json.loads(text(proposed)) == {
        "queued": ["first-proposal"],
        "refused": [f"proposal at line 4 of mcp-{CLIENT}'s answer: over max_new_tasks (1) for one run"],
    }
    assert lesson.is_error is False
    assert (
        (room.root / "intelligence" / "FIELD_GUIDE.md")
        .read_text(encoding="utf-8")
        .endswith("- run the bench five times (task t1)\n")
    )
    assert room.stopped() and stopped.is_error is False
    assert resume.is_error is True and text(resume).startswith("Error: no tool resume.")
    who = f"tester.mcp.{CLIENT}"
    for event in ("task-add", "proposal-refused", "field-guide-add", "stop"):
        (line,) = entries(room, event)
        assert line.writer == who, event
    assert entries(room, "task-add")[0].detail.startswith(f"proposed by mcp-{CLIENT}: ")
    assert entries(room, "stop")[0].detail == "an agent saw smoke"


def test_field_guide_add_respects_the_line_cap(exe: str, room: Room) -> None:
    set_gate(room, "field_guide_max_lines", "1")

    async def work(s: ClientSession) -> Any:
        first = await s.call_tool("field_guide_add", {"lesson": "one"})
        second = await s.call_tool("field_guide_add", {"lesson": "two"})
        return first, second

    first, second = talk(exe, room, work)
    assert first.is_error is False
    assert text(second) == (
        "Error: lesson refused: intelligence/FIELD_GUIDE.md has 1 lesson line, the cap "
        "(CONTROL.md field_guide_max_lines) is 1; a person must prune it first"
    )
    assert len(entries(room, "field-guide-add")) == 1


@pytest.mark.parametrize("client", ["claude", "codex", "gemini", "cursor", "opencode"])
def test_print_config(run: Callable[..., Any], inside: Room, client: str) -> None:
    result = run("mcp", "--print-config", client)
    assert result.exit_code == 0
    argv = ["mcp", "--room", str(inside.root)]
    if client == "codex":
        args = f'args = ["mcp", "--room", "{inside.root}"]\n'
        assert result.stdout == f'[mcp_servers.control-room]\ncommand = "control-room"\n{args}'

    elif client == "opencode":
        assert json.loads(result.stdout) == {
            "$schema": "https://opencode.ai/config.json",
            "mcp": {"control-room": {"type": "local", "command": ["control-room", *argv], "enabled": True}},
        }
    else:
        server: dict[str, Any] = {"command": "control-room", "args": argv}
        if client == "claude":
            server = {"type": "stdio", **server}
        assert json.loads(result.stdout) == {"mcpServers": {"control-room": server}}
    assert result.stderr.startswith(f"# {client}: ")


def test_without_the_extra_one_line_and_its_own_exit_code(
    run: Callable[..., Any], inside: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)  # `import mcp` raises ImportError
    error(
        run("mcp"),
        NO_EXTRA,
        "control-room mcp needs the MCP SDK: pip install 'control-room[mcp]'",
    )
