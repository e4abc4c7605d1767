"""The plan format (SPEC §13, docs/plans.md): markdown a person or a planner agent writes, read
into routes and tasks (``parse``) and written back from them (``render``).

- ``## route-name — title`` starts a route (the title is optional; ``—``, ``–`` or ``-``
  between), and a ``Falsifier: ...`` line under it, before its first task, is the route's
  falsifier (what ``route add`` would be given). Other lines there are notes, not kept.
- ``### task-id`` starts a task of the route above it (of no route before the first ``##``).
  The ``key: value`` lines right after it (a leading ``- `` allowed) are its fields, named as in
  the task JSON (``PLAN_FIELDS``); lists are comma separated; ``wall_clock_s`` takes ``90``,
  ``30m``, ``1h``. The first line that is not a field (a blank line) ends them.
- Whatever follows, up to the next heading, is the task's ``brief`` (passed into its prompt).
- Lines before the first heading are the plan's introduction, not kept. Headings inside a
  fenced block (```) are text.

Parsing never raises: each problem is a string naming the task (or the line) and the field.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from control_room.room import tasks
from control_room.room.tasks import Task
from control_room.room.values import is_id
from control_room.timeutil import parse_duration

# The fields a plan sets: those a task's author writes (``tasks.PERSON_FIELDS``), but the id (the
# heading), the route (the ``##`` above) and the brief (the prose).
_NOT_IN_PLAN = ("id", "route", "brief")
PLAN_FIELDS: tuple[str, ...] = tuple(n for n in tasks.PERSON_FIELDS if n not in _NOT_IN_PLAN)
_ROUTE = re.compile(r"^##\s+(\S+)(?:\s+[—–-]+\s*(.*?))?\s*$")
_TASK = re.compile(r"^###\s+(.*?)\s*$")
_FIELD = re.compile(r"^(?:[-*]\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.*?)\s*$")
_FALSIFIER = re.compile(r"^(?:[-*]\s+)?falsifier\s*:\s*(.*?)\s*$", re.IGNORECASE)
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass
class PlanRoute:
    name: str
    title: str
    falsifier: str
    line: int


@dataclass
class PlanTask:
    id: str
    route: str | None
    line: int
    fields: dict[str, Any] = field(default_factory=dict)
    brief: str = ""
    problems: list[str] = field(default_factory=list)

    def data(self) -> dict[str, Any]:
        """The task as ``task add`` would be given it."""
        out: dict[str, Any] = {"id": self.id, **self.fields}
        if self.route:
            out["route"] = self.route
        if self.brief:
            out["brief"] = self.brief
        return out


@dataclass
class Parsed:
    routes: list[PlanRoute] = field(default_factory=list)
    tasks: list[PlanTask] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # not of one task: headings, duplicates


def value(name: str, text: str) -> Any:
    """A field's value from its text, by its kind; ValueError saying what is wrong."""
    kind = tasks.BY_NAME[name].kind
    if kind in ("ids", "paths", "strs"):
        return [x.strip() for x in text.split(",") if x.strip()]
    if kind == "cost":
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"{name} {text!r} is not a number (USD)") from None
    if kind == "seconds":
        try:
            return parse_duration(text)
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None
    if kind in ("int", "count"):
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"{name} {text!r} is not an integer") from None
    return text


def parse(text: str, name: str = "the plan") -> Parsed:
    """Read a plan (see the module's docstring); ``name`` is how problems name the file."""
    out = Parsed()
    route: str | None = None
    current: PlanTask | None = None
    in_fields = False
    brief: list[str] = []
    fenced = False

    def close() -> None:
        if current is not None:
            current.brief = "\n".join(brief).strip("\n")
            brief.clear()

    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        level = len(line) - len(line.lstrip("#")) if not fenced and line[3:4] != "#" else 0
        if _FENCE.match(line):
            fenced = not fenced
        if level == 2:
            close()
            current, in_fields = None, False
            m = _ROUTE.match(line)
            if m is None:
                out.problems.append(f"{name}:{n}: a route's heading is `## route-name — title`, not {line!r}")
                route = None
                continue
            route = m.group(1)
            if not is_id(route):
                out.problems.append(f"{name}:{n}: route {route!r} must match [a-z0-9][a-z0-9._-]{{0,63}}")
            if any(r.name == route for r in out.routes):
                out.problems.append(f"{name}:{n}: route {route} is in the plan twice")
            out.routes.append(PlanRoute(route, (m.group(2) or "").strip(), "", n))
            continue
        if level == 3 and (m := _TASK.match(line)):
            close()
            tid = m.group(1)
            current, in_fields = PlanTask(tid, route, n), True
            if not is_id(tid):
                current.problems.append(f"the id after ### must match [a-z0-9][a-z0-9._-]{{0,63}}: {tid!r}")
            out.tasks.append(current)
            continue
        if current is None:
            f = _FALSIFIER.match(line) if route is not None else None
            if f and out.routes and not out.routes[-1].falsifier:
                out.routes[-1].falsifier = f.group(1)
            continue
        if in_fields:
            if not line.strip() and not current.fields:
                continue  # blank lines between the heading and its fields
            m = _FIELD.match(line)
            if m:
                _field(current, m.group(1).lower(), m.group(2))
                continue
            in_fields = False
        brief.append(line)
    close()
    seen: dict[str, int] = {}
    for t in out.tasks:
        if t.id in seen:
            out.problems.append(f"{name}:{t.line}: task {t.id} is in the plan twice (also line {seen[t.id]})")
        seen.setdefault(t.id, t.line)
    return out


def _field(t: PlanTask, key: str, text: str) -> None:
    if key in tasks.OWNED:  # the one wording of every way in (``tasks.owned_problem``)
        t.problems.append(str(tasks.owned_problem({key: text or "-"})))
    elif key not in PLAN_FIELDS:
        why = "is not set in a plan" if key in tasks.BY_NAME else "is not a task field"
        t.problems.append(f"{key} {why} (a plan sets: {', '.join(PLAN_FIELDS)})")
    elif key in t.fields:
        t.problems.append(f"{key} is given twice")
    elif text:
        try:
            t.fields[key] = value(key, text)
        except ValueError as exc:
            t.problems.append(str(exc))


def _num(v: Any) -> str:
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)


def show(name: str, v: Any) -> str:
    """A field's value as a plan writes it (``value`` reads it back)."""
    kind = tasks.BY_NAME[name].kind
    if kind == "argv" and isinstance(v, list):
        return shlex.join(v)
    if isinstance(v, list):
        return ", ".join(str(x) for x in v)
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return _num(v)
    return " ".join(str(v).split())


def render_task(task: Mapping[str, Any]) -> list[str]:
    lines = [f"### {task['id']}"]
    lines += [f"{k}: {show(k, task[k])}" for k in PLAN_FIELDS if task.get(k) not in (None, "", [])]
    if task.get("brief"):
        lines += ["", str(task["brief"]).strip("\n")]
    return [*lines, ""]


Section = tuple[PlanRoute, list[Task]]


def render(intro: str, loose: list[Task], routes: list[Section]) -> str:
    """A plan: ``intro`` (its first lines), the tasks of no route, then each route's."""
    lines = [intro.rstrip("\n"), ""]
    for t in loose:
        lines += render_task(t)
    for r, ts in routes:
        lines += [f"## {r.name}" + (f" — {' '.join(r.title.split())}" if r.title else "")]
        if r.falsifier:
            lines += [f"Falsifier: {' '.join(r.falsifier.split())}"]
        lines += [""]
        for t in ts:
            lines += render_task(t)
    return "\n".join(lines).rstrip("\n") + "\n"
