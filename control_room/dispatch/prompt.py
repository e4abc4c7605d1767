"""Prompt assembly: what an agent is told, in a fixed order, and how big it is.

role prompt + report-format skill + CURRENT_CONTEXT + DIGEST + FIELD_GUIDE (capped) + the
route's history + the task. Every part is a file a person can read; the assembled prompt is
snapshotted to ``swarm/outbox/ID.md``. Its size is recorded as bytes, estimated tokens
(characters / 4, a documented proxy) and its share of the adapter's context window: the run's
context pressure.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from control_room.errors import InvalidError
from control_room.room.layout import Room

CHARS_PER_TOKEN = 4


@dataclass
class Prompt:
    text: str
    role_settings: dict[str, Any]
    warnings: list[str]

    def pressure(self, context_window: int) -> dict[str, Any]:
        tokens = (len(self.text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN
        return {
            "prompt_bytes": len(self.text.encode("utf-8")),
            "prompt_tokens_est": tokens,
            "context_window": context_window,
            "context_pressure": round(tokens / context_window, 4) if context_window else None,
        }


def _read(path: Path) -> str | None:
    from control_room.store.files import read_text

    try:
        return read_text(path)
    except (FileNotFoundError, IsADirectoryError):
        return None


def settings(gate: dict[str, Any], role_settings: dict[str, Any]) -> dict[str, Any]:
    """What an adapter sees: CONTROL.md's values, overridden by the role's non-empty ones."""
    return {**gate, **{k: v for k, v in role_settings.items() if v not in (None, "", [])}}


def role(room: Room, name: str) -> tuple[dict[str, Any], str]:
    """(front matter, body) of ``agents/<name>.md``; cached against the file, so a cycle does
    not import the YAML parser unless the role changed."""
    from control_room.room.tasks import is_id
    from control_room.store import cache
    from control_room.store.markdown import front_matter

    if not is_id(name):
        raise InvalidError(f"role {name!r} is not a valid role name")
    path = room.root / "agents" / f"{name}.md"

    def parse() -> list[Any]:
        text = _read(path)
        if text is None:
            raise InvalidError(f"role {name!r} has no prompt: {path} is missing")
        meta, body = front_matter(text, path)
        return [meta, body]

    meta, body = cache.derived(room.cache / f"role-{name}", path, parse)
    return meta, body


def field_guide(room: Room, max_lines: int) -> tuple[str, list[str]]:
    text = _read(room.root / "intelligence" / "FIELD_GUIDE.md") or ""
    lines = text.splitlines()
    if len(lines) <= max_lines:
        return text, []
    warning = (
        f"intelligence/FIELD_GUIDE.md has {len(lines)} lines, over the cap of {max_lines}: "
        f"only the first {max_lines} were injected"
    )
    return "\n".join(lines[:max_lines]) + "\n", [warning]


def task_block(task: dict[str, Any]) -> str:
    keys = (
        "id",
        "objective",
        "falsifier",
        "validator",
        "max_cost_usd",
        "wall_clock_s",
        "kill_condition",
        "route",
        "owns",
        "deps",
        "command",
    )
    lines = []
    for k in keys:
        if k in task:
            v = task[k]
            if isinstance(v, list):
                v = " ".join(v) if k in ("validator", "command") else ", ".join(v)
            lines.append(f"{k}: {v}")
    if task.get("last_failure"):
        lines += [
            "",
            f"What failed in round {task.get('rounds', 1)} (do not repeat it):",
            str(task["last_failure"]),
        ]
    return "\n".join(lines)


def assemble(room: Room, task: dict[str, Any], control: dict[str, Any], history: str = "") -> Prompt:
    settings, role_body = role(room, task.get("role") or "engineer")
    skill = _read(room.root / "skills" / "report-format.md")
    if skill is None:
        raise InvalidError(f"{room.root / 'skills' / 'report-format.md'} is missing")
    guide, warnings = field_guide(room, int(control["field_guide_max_lines"]))
    parts = [
        f"# Brief for task {task['id']}",
        "You are one agent in a swarm coordinated through files (a control room). Do exactly the "
        "task at the end of this brief, within its bounds, then end your answer with a report in "
        "the format below.",
        f"## Your role: {task.get('role') or 'engineer'}\n\n{role_body.strip()}",
        f"## Report format\n\n{_body(skill)}",
        f"## Current context\n\n{(_read(room.context) or '(none)').strip()}",
        f"## Digest\n\n{(_read(room.digest) or '(none yet)').strip()}",
        f"## Field guide\n\n{guide.strip() or '(empty)'}",
    ]
    if history:
        parts.append(f"## This route so far\n\n{history.strip()}")
    parts.append(f"## Your task\n\n{task_block(task)}")
    return Prompt("\n\n".join(parts) + "\n", settings, warnings)


def _body(markdown: str) -> str:
    """Drop a front matter block, keep the rest."""
    if markdown.startswith("---\n"):
        end = markdown.find("\n---", 4)
        if end != -1:
            return markdown[end + 4 :].strip()
    return markdown.strip()
