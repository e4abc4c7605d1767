"""`control-room mcp`: the room served over MCP (stdio) with the official SDK (docs/mcp.md).

Only ``cli/mcp.py`` imports this module, and only when the command runs: the SDK is an
optional extra (``control-room[mcp]``) and heavy. The tools are ``views/mcp_tools.py`` (the
library calls the commands make); the resources are room files, listed afresh on each request
and read only if listed (a client cannot name any other file).

Every call that changes the room writes its ledger lines with the writer column naming the
client: ``<host>.mcp.<clientInfo name>``. Like the command line's edge, the views
(CURRENT_CONTEXT.md, DIGEST.md) are refreshed after such a call.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from control_room import __version__
from control_room.errors import ControlRoomError
from control_room.ledger.write import writer_name
from control_room.room.layout import STATES, Room
from control_room.store.files import read_output
from control_room.views import mcp_args
from control_room.views.mcp_tools import BY_NAME, PERSON_ONLY, TOOLS
from control_room.views.refresh import refresh

SCHEME = "control-room://"
RESOURCE_MAX = 2_000_000  # bytes of one resource returned


def client_name(ctx: ServerRequestContext[Any, Any]) -> str:
    """The client's clientInfo name (from ``initialize``, or the request's ``_meta``), cell-safe."""
    name = ""
    params = ctx.session.client_params
    if params is not None and params.client_info is not None:
        name = params.client_info.name
    elif ctx.meta:
        info = ctx.meta.get(types.CLIENT_INFO_META_KEY)
        name = str(info.get("name", "")) if isinstance(info, dict) else ""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-")[:48] or "unknown"


@contextmanager
def writing_as(room: Room, client: str) -> Iterator[None]:
    """Ledger lines written meanwhile name the client in their writer column (after the host id)."""
    before = os.environ.get("CONTROL_ROOM_WRITER")
    os.environ["CONTROL_ROOM_WRITER"] = f"{writer_name(room.cr)}.mcp.{client}"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("CONTROL_ROOM_WRITER", None)
        else:
            os.environ["CONTROL_ROOM_WRITER"] = before


def resources(room: Room) -> dict[str, tuple[Path, str]]:
    """URI -> (path, description) of every resource the room offers now."""
    root = room.root
    out: dict[str, tuple[Path, str]] = {}

    def add(path: Path, what: str) -> None:
        if path.is_file():
            out[SCHEME + path.relative_to(root).as_posix()] = (path, what)

    add(room.context, "what the room is doing now (CURRENT_CONTEXT.md)")
    add(room.digest, "what the ledger taught the room (DIGEST.md)")
    add(room.routes, "the board of routes (ROUTES.md)")
    add(root / "skills" / "report-format.md", "the report format every agent ends with")
    add(root / "intelligence" / "FIELD_GUIDE.md", "lessons injected into prompts")
    for p in _files(root / "graveyard", ".md"):
        if p.name != "README.md":
            add(p, f"tombstone of route {p.stem}")
    for state in STATES:
        for p in _files(room.state_dir(state), ".json"):
            add(p, f"task {p.stem} ({state})")
    for folder in _dirs(room.swarm / "results"):
        for run in (folder, *_dirs(folder)):
            label = folder.name if run == folder else f"{folder.name} {run.name}"
            add(run / "report.md", f"report of {label}")
            add(run / "meta.json", f"meta of {label}")
    return out


def _files(folder: Path, suffix: str) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if p.suffix == suffix and not p.name.startswith("."))
    except OSError:
        return []


def _dirs(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:
        return []


def _mime(path: Path) -> str:
    return "application/json" if path.suffix == ".json" else "text/markdown"


def _text(data: Any) -> str:
    return data if isinstance(data, str) else json.dumps(data, indent=2, ensure_ascii=False)


def call(room: Room, client: str, name: str, args: dict[str, Any]) -> types.CallToolResult:
    """Run tool ``name``; a refusal is a tool error saying `Error: <what>`, as the command line says it."""
    tool = BY_NAME.get(name)
    if tool is None:
        msg = f"Error: no tool {name[:64]}. " + PERSON_ONLY
        return types.CallToolResult(content=[types.TextContent(type="text", text=msg)], is_error=True)
    why = mcp_args.problem(name, tool.schema, args)  # before anything runs: the tool's own schema
    if why is not None:
        return _error(f"Error: {why}")
    try:
        if tool.changes:
            with writing_as(room, client):
                out = tool.run(room, client, args)
        else:
            out = tool.run(room, client, args)
    except ControlRoomError as exc:
        return _error(f"Error: {exc}")
    except (TypeError, ValueError) as exc:  # an argument of the wrong type (`n: "ten"`)
        return _error(f"Error: {name}: bad arguments: {exc}")
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        return _error(f"Error: {where}{exc.strerror or exc}")
    finally:
        if tool.changes:
            try:
                refresh(room)  # the edge: the views show what this call changed
            except (ControlRoomError, OSError):
                pass
    structured = out if isinstance(out, dict) else {"result": out}
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=_text(out))], structured_content=structured
    )


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def build(room: Room) -> Server[Any]:
    async def list_tools(
        _ctx: ServerRequestContext[Any, Any], _p: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[types.Tool(name=t.name, description=t.description, input_schema=t.schema) for t in TOOLS]
        )

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], p: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return call(room, client_name(ctx), p.name, dict(p.arguments or {}))

    async def list_resources(
        _ctx: ServerRequestContext[Any, Any], _p: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        found = resources(room)
        return types.ListResourcesResult(
            resources=[
                types.Resource(name=uri[len(SCHEME) :], uri=uri, description=what, mime_type=_mime(path))
                for uri, (path, what) in found.items()
            ]
        )

    async def read_resource(
        _ctx: ServerRequestContext[Any, Any], p: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(p.uri)
        found = resources(room).get(uri)
        if found is None:  # an error of the request, not of the server (which the SDK hides)
            raise MCPError(types.INVALID_PARAMS, f"no resource {uri}: list_resources names each one")
        text, _cut = read_output(found[0], RESOURCE_MAX)
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type=_mime(found[0]), text=text)]
        )

    return Server(
        "control-room",
        version=__version__,
        instructions=f"The control room at {room.root}: a swarm's tasks, routes and ledger. " + PERSON_ONLY,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )


def serve(room: Room) -> None:
    """Serve ``room`` on stdin/stdout until the client goes."""
    server = build(room)

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
