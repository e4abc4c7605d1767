"""The task schema (SPEC §3), in one place, and its validation.

``validate`` takes anything (the result of ``json.loads`` on a hand-written file included) and
returns the normalised task plus a list of problems; it never raises. A task with problems never
enters the queue.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

from control_room.room.values import is_id, is_number


@dataclass(frozen=True)
class Field:
    name: str
    kind: str  # text | id | ids | cost | seconds | int | argv | paths | bool | sides
    required: bool
    help: str


FIELDS: tuple[Field, ...] = (
    Field("id", "id", False, "[a-z0-9][a-z0-9._-]{0,63}; generated if absent; never a path"),
    Field("objective", "text", True, "what to do, in words"),
    Field("falsifier", "text", True, "the result that would prove this route wrong"),
    Field("validator", "argv", True, "command the dispatcher runs after the agent; exit 0 = pass"),
    Field("max_cost_usd", "cost", True, "cost ceiling for this run, in USD"),
    Field("wall_clock_s", "seconds", True, "hard time limit for the agent, in seconds"),
    Field("kill_condition", "text", True, "when the route should be killed rather than retried"),
    Field("role", "id", False, "agents/<role>.md; default engineer"),
    Field("route", "id", False, "the route in ROUTES.md this task serves"),
    Field("adapter", "id", False, "override the role's / CONTROL.md default adapter"),
    Field("model", "text", False, "override the role's / CONTROL.md default model"),
    Field("deps", "ids", False, "task ids that must be done before this one is ready"),
    Field("owns", "paths", False, "paths this task may edit"),
    Field("gate", "ids", False, "gates (gpu, submit, merge, ...) that need an approval first"),
    Field("priority", "int", False, "higher runs first; ties oldest first"),
    Field("extra_args", "strs", False, "extra CLI flags; refused unless CONTROL.md allows them"),
    Field("command", "argv", False, "what the probe adapter runs itself"),
    Field(
        "review",
        "ids",
        False,
        "lenses that review this task when it passes ([] for none); overrides CONTROL.md",
    ),
    Field("brief", "text", False, "what the agent is told beyond the objective (a fan-out slice's text)"),
    Field("fanout_of", "id", False, "the task this is a fan-out slice of (`task fanout`): its gather step"),
    Field("plan", "text", False, "the plan file it was imported from (`plan import`)"),
    Field("plan_hash", "text", False, "its content hash as `plan import` wrote it (unchanged: untouched)"),
    # Written by control-room, not by people:
    Field("created", "text", False, "when the task was queued (UTC, ISO 8601)"),
    Field("rounds", "int", False, "failed rounds so far"),
    Field("dispatcher_deaths", "int", False, "times the cycle running it died (not rounds)"),
    Field("last_failure", "text", False, "what failed in the last round, for the next brief"),
    Field("passed_at", "text", False, "when the task passed its validator"),
    Field(
        "for_task",
        "id",
        False,
        "a conflict resolver or decompose task the merge queue queued for that task: runs in its worktree",
    ),
    Field("reviews", "id", False, "a review task: the task it reviews (in that task's worktree)"),
    Field("lens", "id", False, "a review task: its lens, `agents/lenses/<lens>.md`"),
    Field("arbitrates", "id", False, "an arbiter task: the task whose reviews disagree"),
    Field("sides", "sides", False, "an arbiter task: the review tasks behind Position A and B"),
    Field("meaning", "sides", False, "an arbiter task: which of A and B accepts (never in its prompt)"),
    Field(
        "reviewed_state",
        "text",
        False,
        "a failed round's uncommitted work, saved (`git stash create`) while reviewers look at it",
    ),
    Field(
        "reviewed_commit", "text", False, "the commit its reviews saw; what a reviewer changes is reset to it"
    ),
    Field("verdict", "text", False, "a review or arbiter task: its decision once it passed"),
    Field("review_tasks", "ids", False, "the review tasks of this task's last pass"),
    Field("review_verdict", "text", False, "`accept` once its reviews (or an arbiter) accepted it"),
    Field("arbitrations", "int", False, "times its reviews needed an arbiter; a second escalates"),
    Field("merged_at", "text", False, "when the merge queue fast-forwarded the base branch to it"),
    Field("merged_commit", "text", False, "the base branch's commit after the merge"),
    Field("done_at", "text", False, "when a person marked it Done (`control-room done ID`)"),
    Field("done_by", "text", False, "who marked it Done"),
)
BY_NAME = {f.name: f for f in FIELDS}
REQUIRED = tuple(f.name for f in FIELDS if f.required)
DEFAULT_ROLE = "engineer"


def _strs(v: object) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _check(f: Field, v: Any) -> str | None:
    """Why ``v`` is not a valid value for field ``f``, or None."""
    if f.kind == "text":
        return None if isinstance(v, str) and v.strip() else "must be a non-empty string"
    if f.kind == "id":
        return None if is_id(v) else "must match [a-z0-9][a-z0-9._-]{0,63}"
    if f.kind == "ids":
        return None if isinstance(v, list) and all(is_id(x) for x in v) else "must be a list of ids"
    if f.kind == "cost":
        return None if is_number(v) and v >= 0 else "must be a number >= 0"
    if f.kind == "seconds":
        return None if is_number(v) and v > 0 else "must be a number of seconds > 0"
    if f.kind == "int":
        return None if isinstance(v, int) and not isinstance(v, bool) else "must be an integer"
    if f.kind == "strs":
        return None if _strs(v) else "must be a list of strings"
    if f.kind == "argv":
        if isinstance(v, str) and v.strip():
            return None
        if _strs(v) and v and v[0]:
            return None
        return "must be a command string or a non-empty list of strings"
    if f.kind == "sides":  # {"A": [ids], "B": [ids]} or {"A": word, "B": word}
        ok = isinstance(v, dict) and set(v) <= {"A", "B"}
        ok = ok and all(
            isinstance(x, str) or (isinstance(x, list) and all(is_id(i) for i in x)) for x in v.values()
        )
        return None if ok else "must map A and B to lists of task ids or to words"
    if f.kind == "paths":
        if not _strs(v):
            return "must be a list of paths"
        for p in v:
            if not p or p.startswith(("/", "~")) or ".." in p.replace("\\", "/").split("/"):
                return f"path {p!r} must be relative to the work dir, without '..'"
        return None
    raise AssertionError(f.kind)  # pragma: no cover


def validate(data: object, *, expected_id: str | None = None) -> tuple[dict[str, Any], list[str]]:
    """Check a task; return (task, problems). Never raises."""
    if not isinstance(data, dict):
        return {}, [f"a task must be a JSON object, not {type(data).__name__}"]
    problems: list[str] = []
    missing = missing_fields(data)
    if missing:
        problems.append(
            "missing required field" + ("s" if len(missing) > 1 else "") + ": " + ", ".join(missing)
        )
    unknown = sorted(str(k) for k in data if k not in BY_NAME)
    if unknown:
        problems.append(f"unknown field{'s' if len(unknown) > 1 else ''}: {', '.join(unknown)}")
    task: dict[str, Any] = {}
    for f in FIELDS:
        if f.name not in data or data[f.name] in (None, ""):
            continue
        why = _check(f, data[f.name])
        if why:
            problems.append(f"{f.name} {why}")
        else:
            task[f.name] = data[f.name]
    if expected_id is not None:
        if "id" not in data:
            task["id"] = expected_id
        elif task.get("id") not in (None, expected_id):
            problems.append(f"id {task['id']!r} does not match the file name {expected_id}.json")
    return task, problems


def missing_fields(data: dict[str, Any]) -> list[str]:
    return [name for name in REQUIRED if data.get(name) in (None, "")]


def new_id(objective: str) -> str:
    """An id from the objective's first words plus a random suffix: readable and unique."""
    words = re.findall(r"[a-z0-9]+", objective.lower())[:5]
    stem = "-".join(words)[:40].strip("-") or "task"
    return f"{stem}-{os.urandom(3).hex()}"
