"""Plain helpers shared by several test modules (fixtures live in conftest.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from control_room.ledger.line import HEADER
from control_room.room import Room

VALID_TASK: dict[str, Any] = {
    "objective": "make parse() twice as fast",
    "falsifier": "no gain over three runs",
    "validator": "python bench.py --check",
    "max_cost_usd": 1,
    "wall_clock_s": 600,
    "kill_condition": "two rounds without gain",
    "command": "python bench.py",
}


def task(task_id: str, **fields: Any) -> dict[str, Any]:
    """A valid task with this id (fields override)."""
    return {"id": task_id, **VALID_TASK, **fields}


def drop(room: Room, name: str, content: str | bytes | dict[str, Any]) -> Path:
    """Drop a file into swarm/queue/ by hand, as a person or a script would."""
    path = room.state_dir("queue") / name
    if isinstance(content, dict):
        content = json.dumps(content)
    if isinstance(content, str):
        content = content.encode("utf-8")
    path.write_bytes(content)
    return path


def data_lines(ledger: Path) -> list[str]:
    """The ledger's data lines (after the header and the separator)."""
    lines = ledger.read_text(encoding="utf-8").split("\n")
    body = lines[lines.index(HEADER) + 2 :]
    return body[:-1] if body and body[-1] == "" else body


def events(ledger: Path) -> list[str]:
    """The event column of every data line."""
    from control_room.ledger.line import parse

    out = []
    for line in data_lines(ledger):
        entry = parse(line)
        assert entry is not None, line
        out.append(entry.event)
    return out


def no_room_error(where: Path) -> str:
    """The exact stderr of a room command run in ``where``, outside any room."""
    return (
        f"Error: not inside a control room ({where} and its parents have no control-room/ "
        "folder); run `control-room init` or pass --room DIR\n"
    )


ADD_ARGS = [
    "--objective", "make parse() twice as fast",
    "--falsifier", "no gain over three runs",
    "--validator", "python bench.py --check",
    "--max-cost", "1",
    "--wall-clock", "10m",
    "--kill-condition", "two rounds without gain",
    "--command", "python bench.py",
]  # fmt: skip
