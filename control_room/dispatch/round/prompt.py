"""Prompt assembly: what an agent is told, in a fixed order, and how big it is.

role prompt + report-format skill + CURRENT_CONTEXT + DIGEST + FIELD_GUIDE's lessons (capped) + the
route's history + the task. Every part is a file a person can read; the assembled prompt is
snapshotted to ``swarm/outbox/ID.md``. Its size is recorded as bytes, estimated tokens
(characters / 4, a documented proxy) and its share of the adapter's context window: the run's
context pressure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from control_room.errors import InvalidError
from control_room.plain import Plain
from control_room.room import roles
from control_room.room.layout import Room
from control_room.room.settings import Settings
from control_room.room.tasks import Task
from control_room.store.files import read_optional, update
from control_room.text import one_line
from control_room.words import count

CHARS_PER_TOKEN = 4
LESSON_MAX = 2_000  # characters of one lesson: every later prompt carries it (docs/mcp.md caps)


class Prompt(Plain):
    """A run's prompt, and what assembling it warned of."""

    __slots__ = ("text", "warnings")

    def __init__(self, text: str, warnings: list[str]) -> None:
        self.text, self.warnings = text, warnings

    def pressure(self, context_window: int) -> dict[str, Any]:
        tokens = (len(self.text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN
        return {
            "prompt_bytes": len(self.text.encode("utf-8")),
            "prompt_tokens_est": tokens,
            "context_window": context_window,
            "context_pressure": round(tokens / context_window, 4) if context_window else None,
        }


_COMMENT = r"(?s)<!--.*?(?:-->|\Z)"  # an HTML comment; one left open runs to the end of the file

# The text of intelligence/FIELD_GUIDE.md as `init` wrote it before 0.3.0, when its guidance and
# examples were plain lines: rooms made then still hold it, and it is not a lesson either.
SHIPPED_BEFORE_0_3 = frozenset(
    (
        "This notebook belongs to the agents. It is injected into every prompt, and it is capped at",
        "CONTROL.md `field_guide_max_lines` (default 80): beyond the cap only the first lines are",
        "injected, so prune before you add. Keep only terse, durable, verified lessons: one line each,",
        "newest at the bottom, with the task id that shows it; delete what turned out wrong.",
        "injected, so prune before you add, and put the lessons that matter most at the top. Keep only",
        "terse, durable, verified lessons: one line each, with the task id that shows it; delete what",
        "turned out wrong.",
        "- Example: `python3 bench/run.py` varies by up to 3% between identical runs on this machine; "
        "take the median of 5 runs before calling a gain (task bench-noise-1).",
        "- Example: the validator for tests/ needs `PYTHONHASHSEED=0` or test_order fails at random; "
        "set it in the task's validator, not in the code (task fix-flaky-2).",
    )
)


def guide_lines(text: str) -> list[str]:
    """The lines of FIELD_GUIDE.md that reach a prompt: its lessons. Not injected: HTML comments
    (``<!-- ... -->``, where the guide's own guidance and examples live), blank lines, the
    ``# ...`` title on its first line, and the text older rooms were given by ``init``."""
    lines = [ln.rstrip() for ln in re.sub(_COMMENT, "", text).splitlines() if ln.strip()]
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    return [ln for ln in lines if ln not in SHIPPED_BEFORE_0_3]


def field_guide(room: Room, max_lines: int) -> tuple[str, list[str]]:
    """The injected field guide (its lessons, at most ``max_lines``) and any warning."""
    lines = guide_lines(read_optional(room.root / "intelligence" / "FIELD_GUIDE.md") or "")
    if len(lines) <= max_lines:
        return "".join(f"{ln}\n" for ln in lines), []
    warning = (
        f"intelligence/FIELD_GUIDE.md has {count(len(lines), 'lesson line')}, over the cap of "
        f"{max_lines}: only the first {max_lines} were injected"
    )
    return "".join(f"{ln}\n" for ln in lines[:max_lines]), [warning]


def add_lesson(room: Room, settings: Settings, lesson: str) -> int:
    """Append one lesson line to intelligence/FIELD_GUIDE.md (the MCP tool ``field_guide_add``);
    return how many lesson lines it now has. The lesson is put on one line, without control
    characters. Refused (``InvalidError``) when it is empty, or longer than ``LESSON_MAX``
    characters (every later prompt would carry it), or the guide already holds CONTROL.md
    ``field_guide_max_lines`` lessons: beyond the cap a lesson would not reach any prompt, so a
    person must prune the guide first."""
    from control_room import ledger  # the ledger writer: only a command that writes pays for it
    from control_room.ledger import events  # likewise

    if not isinstance(lesson, str):
        raise InvalidError(f"lesson refused: it must be a string, not {type(lesson).__name__}")
    text = one_line(lesson)
    if not text:
        raise InvalidError("lesson refused: it is empty")
    if len(text) > LESSON_MAX:
        raise InvalidError(
            f"lesson refused: it is {len(text)} characters long, over the cap of {LESSON_MAX} "
            "(every later prompt carries it): one terse line"
        )
    line = text if text.startswith("- ") else f"- {text}"
    path = room.root / "intelligence" / "FIELD_GUIDE.md"
    cap = settings.field_guide_max_lines

    def change(old: str) -> str:
        held = len(guide_lines(old))
        if held >= cap:
            raise InvalidError(
                f"lesson refused: intelligence/FIELD_GUIDE.md has {count(held, 'lesson line')}, the cap "
                f"(CONTROL.md field_guide_max_lines) is {cap}; a person must prune it first"
            )
        start = old if not old or old.endswith("\n") else old + "\n"
        return f"{start}{line}\n"

    new = update(path, change)
    ledger.append(room.ledger, events.FIELD_GUIDE_ADD, detail=line)
    return len(guide_lines(new))


def task_block(task: Task) -> str:
    keys = (
        "id",
        "objective",
        "brief",
        "fanout_of",
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
    fields: Mapping[str, Any] = task
    for k in keys:
        if k in fields:
            v = fields[k]
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


def place(role: str, meta: dict[str, Any]) -> str:
    """What the role does and never does in the swarm (seed 003: executors never plan, planners
    never implement, reviewers never edit)."""
    if meta.get("writes_tasks") is True:
        return "You plan: you propose tasks for others to run. You never implement anything yourself."
    if role in roles.REVIEWING:
        return "You review: you judge work others did, by evidence. You never edit a file."
    return "You execute: do this one task, nothing else. You never plan other work or queue tasks."


def assemble(
    room: Room,
    task: Task,
    role: str,
    settings: Settings,
    history: str = "",
    *,
    runs_on: str = "",
    shown: str = "",
) -> Prompt:
    """The brief; ``runs_on`` names the adapter and model (recorded in the snapshot), ``shown``
    is what a review or arbiter task is given (``dispatch/review/queueing.py``)."""
    role_meta, role_body = roles.read(room, role)
    skill = read_optional(room.root / "skills" / "report-format.md")
    if skill is None:
        raise InvalidError(f"{room.root / 'skills' / 'report-format.md'} is missing")
    guide, warnings = field_guide(room, settings.field_guide_max_lines)
    parts = [
        f"# Brief for task {task['id']}",
        "You are one agent in a swarm coordinated through files (a control room). Do exactly the "
        "task at the end of this brief, within its bounds, then end your answer with a report in "
        "the format below.",
        f"## Your role: {role}\n\n{place(role, role_meta)}"
        + (f" You run on {runs_on}." if runs_on else "")
        + f"\n\n{role_body.strip()}",
        f"## Report format\n\n{_body(skill)}",
    ]
    if not shown:  # a reviewer or an arbiter sees only what its lens shows: the room's own views
        # (CURRENT_CONTEXT, DIGEST, the route's history) name other reviews' lenses and verdicts
        parts += [
            f"## Current context\n\n{(read_optional(room.context) or '(none)').strip()}",
            f"## Digest\n\n{(read_optional(room.digest) or '(none yet)').strip()}",
        ]
    parts.append(f"## Field guide\n\n{guide.strip() or '(empty)'}")
    if history and not shown:
        parts.append(f"## This route so far\n\n{history.strip()}")
    if shown:
        parts.append(shown.strip())
    parts.append(f"## Your task\n\n{task_block(task)}")
    return Prompt("\n\n".join(parts) + "\n", warnings)


def _body(markdown: str) -> str:
    """Drop a front matter block, keep the rest."""
    if markdown.startswith("---\n"):
        end = markdown.find("\n---", 4)
        if end != -1:
            return markdown[end + 4 :].strip()
    return markdown.strip()
