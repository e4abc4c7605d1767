"""control-room mcp: the room over MCP (stdio), or --print-config for a client"""

from __future__ import annotations

import json

import click

from control_room.cli.common import current_room, echo, room_option
from control_room.errors import NO_EXTRA, ControlRoomError
from control_room.room.layout import Room

# client -> (the file it reads, how the snippet is made)
CLIENTS = {
    "claude": ".mcp.json in the project (or `claude mcp add`)",
    "codex": "~/.codex/config.toml (or .codex/config.toml in a trusted project)",
    "gemini": "~/.gemini/settings.json (or .gemini/settings.json in the project)",
    "cursor": ".cursor/mcp.json in the project (or ~/.cursor/mcp.json)",
    "opencode": "opencode.json in the project (or ~/.config/opencode/opencode.json)",
}
NAME = "control-room"


def config(client: str, room: Room) -> str:
    """The snippet that registers ``control-room mcp --room ROOM`` with ``client``."""
    args = ["mcp", "--room", str(room.root)]
    if client == "codex":
        quoted = ", ".join(json.dumps(a) for a in args)
        return f'[mcp_servers.{NAME}]\ncommand = "control-room"\nargs = [{quoted}]\n'
    if client == "opencode":
        entry: dict[str, object] = {"type": "local", "command": ["control-room", *args], "enabled": True}
        data: dict[str, object] = {"$schema": "https://opencode.ai/config.json", "mcp": {NAME: entry}}
    else:
        server: dict[str, object] = {"command": "control-room", "args": args}
        if client == "claude":
            server = {"type": "stdio", **server}
        data = {"mcpServers": {NAME: server}}
    return json.dumps(data, indent=2) + "\n"


@click.command()
@room_option
@click.option(
    "--print-config",
    "client",
    type=click.Choice(sorted(CLIENTS)),
    help="Print the snippet that registers this room's server with that client, and exit.",
)
def mcp(client: str | None) -> None:
    """Serve the room over MCP on stdin/stdout, for an agent that prefers tools to a shell.

    Tools: status, task_add (admitted as `task add` admits), task_list, task_show,
    validate_report, ledger_tail, route_list, route_show, findings, scorecard, propose_tasks,
    field_guide_add, stop. Resources: CURRENT_CONTEXT, DIGEST, ROUTES, the report format, the
    field guide, tombstones, tasks, run reports and meta. Never offered: resume, approve, done,
    route reopen, CONTROL.md changes (a person's). Needs the extra: pip install
    'control-room[mcp]'. See docs/mcp.md.

    \b
    Example:
      control-room mcp --print-config claude > .mcp.json
    """
    room = current_room()
    if client:
        echo(f"# {client}: {CLIENTS[client]}", err=True)
        echo(config(client, room), nl=False)
        return
    try:
        import mcp as _sdk  # the optional extra: only this command needs it
    except ImportError:
        raise ControlRoomError(
            "control-room mcp needs the MCP SDK: pip install 'control-room[mcp]'", exit_code=NO_EXTRA
        ) from None
    del _sdk
    from control_room.views import mcp_server  # the SDK and its server: only when serving

    mcp_server.serve(room)
