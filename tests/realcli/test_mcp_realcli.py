"""The real Claude Code with `--mcp-config` naming `control-room mcp`, against the model server
scripted to call the room's `task_add` tool: after the cycle, the task it proposed is in the
queue, admitted as the command line admits one, and the ledger names the MCP client."""

from __future__ import annotations

import json

from modelserver import ModelServer, Tool
from support import entries

from control_room import errors

PROPOSED = {"id": "from-mcp", "objective": "measure parse() on the large input",
            "falsifier": "no number comes back",
            "validator": ["true"], "max_cost_usd": 0.5, "wall_clock_s": 600,
            "kill_condition": "two rounds without a number", "adapter": "probe",
            "command": ["true"]}  # fmt: skip


def test_claude_code_adds_a_task_through_the_rooms_mcp_server(real, tmp_path) -> None:  # type: ignore[no-untyped-def]
    r = real("claude")
    r.allow_extra_args()
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"control-room": {
        "command": r.exe, "args": ["--room", str(r.room.root), "mcp"]}}}))  # fmt: skip
    tool = "mcp__control-room__task_add"
    r.task(adapter="claude", extra_args=["--mcp-config", str(config), "--allowedTools", tool])
    with ModelServer(tool=Tool(tool, {"task": PROPOSED})) as server:
        r.gateway("claude", server.url)
        done = r.run("cycle")
        bodies = server.bodies()
    assert done.returncode == errors.PASSED, done.stdout + done.stderr
    assert tool in bodies  # the model was offered the room's tool
    queued = json.loads((r.room.state_dir("queue") / "from-mcp.json").read_text())
    assert (queued["objective"], queued["falsifier"]) == (PROPOSED["objective"], PROPOSED["falsifier"])
    (added,) = [e for e in entries(r.room, "task-add") if e.task == "from-mcp"]
    assert ".mcp." in added.writer, added.writer
