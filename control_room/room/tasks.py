"""The task schema (SPEC §3), in one place: the table of fields, the ``Task`` type, validation.

``FIELDS`` is the one table: each field's kind (what validation checks), whether a task needs
it, what its absence means, one line of doc, and who writes it: ``person`` (whoever writes the
task: ``task add``, a file dropped into the queue, a plan, an agent's proposal, an MCP client)
or ``dispatcher`` (control-room itself, keeping the task's history: rounds, reviews, merges).
``Task`` declares the same fields with their types, in the same order (a test holds the two
together); docs/tasks.md's table is generated from ``FIELDS``.

``validate`` takes anything (the result of ``json.loads`` on a hand-written file included) and
returns the normalised task plus a list of problems; it never raises. A task with problems never
enters the queue. A task's author may not write the dispatcher's fields (``owned_problem``, one
wording for every way in); the dispatcher's own files carry a ``seal`` over them, so a file
dropped by hand that carries them is told apart (``sealed``).
"""

from __future__ import annotations

import json
import os
import posixpath
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypedDict, cast

from control_room.room.values import is_id, is_number

PERSON, DISPATCHER = "person", "dispatcher"


class Field:
    """One field of the task schema. (A plain class: a dataclass costs every command that reads
    a task ~3 M instructions to build.)"""

    __slots__ = ("default", "help", "kind", "name", "required", "writer")

    def __init__(self, name: str, kind: str, required: bool, default: Any, writer: str, help: str) -> None:
        self.name = name
        self.kind = kind  # text | id | ids | cost | seconds | int | count | strs | argv | paths | sides
        self.required = required
        self.default = default  # what an absent field means (None: nothing)
        self.writer = writer  # PERSON or DISPATCHER
        self.help = help

    def __repr__(self) -> str:
        return f"Field({self.name!r}, {self.kind!r})"


def _f(name: str, kind: str, help: str, *, default: Any = None, required: bool = False) -> Field:
    return Field(name, kind, required, default, PERSON, help)


def _d(name: str, kind: str, help: str, *, default: Any = None) -> Field:
    return Field(name, kind, False, default, DISPATCHER, help)


DEFAULT_ROLE = "engineer"

FIELDS: tuple[Field, ...] = (
    _f("id", "id", "`[a-z0-9][a-z0-9._-]{0,63}`; generated if absent; never a path"),
    _f("objective", "text", "what to do, in words", required=True),
    _f("falsifier", "text", "the result that would prove this route wrong", required=True),
    _f("validator", "argv", "command the dispatcher runs after the agent; exit 0 = pass", required=True),
    _f("max_cost_usd", "cost", "cost ceiling for this run, in USD", required=True),
    _f("wall_clock_s", "seconds", "hard time limit for the agent, in seconds", required=True),
    _f("kill_condition", "text", "when the route should be killed rather than retried", required=True),
    _f("role", "id", "`agents/<role>.md`", default=DEFAULT_ROLE),
    _f("route", "id", "the route in ROUTES.md this task serves"),
    _f("adapter", "id", "override the role's / CONTROL.md default adapter"),
    _f("model", "text", "override the role's / CONTROL.md default model"),
    _f(
        "fallback",
        "ids",
        "adapters to run on, in order, while its own cools down after its provider refused (faults.md); "
        "overrides the role's",
        default=[],
    ),
    _f("deps", "ids", "task ids that must be done before this one is ready", default=[]),
    _f("owns", "paths", "paths this task may edit (none: any)", default=[]),
    _f("gate", "ids", "gates (gpu, submit, merge, ...) that need an approval first", default=[]),
    _f("priority", "int", "higher runs first; ties oldest first", default=0),
    _f(
        "max_turns",
        "count",
        "model turns the agent may take in one run (its CLI's own flag, and the live cap: faults.md); "
        "0: CONTROL.md's",
        default=0,
    ),
    _f("extra_args", "strs", "extra CLI flags; refused unless CONTROL.md allows them", default=[]),
    _f("command", "argv", "what the probe adapter runs itself"),
    _f("review", "ids", "lenses that review this task when it passes ([] for none); overrides CONTROL.md"),
    _f("brief", "text", "what the agent is told beyond the objective (a fan-out slice's text)"),
    # Written by control-room, not by a task's author:
    _d("fanout_of", "id", "the task this is a fan-out slice of (`task fanout`): its gather step"),
    _d("plan", "text", "the plan file it was imported from (`plan import`)"),
    _d("plan_hash", "text", "its content hash as `plan import` wrote it (unchanged: untouched)"),
    _d("created", "text", "when the task was queued (UTC, ISO 8601); absent: its file's time"),
    _d("rounds", "int", "failed rounds so far", default=0),
    _d("dispatcher_deaths", "int", "times the cycle running it died (not rounds)", default=0),
    _d("last_failure", "text", "what failed in the last round, for the next brief"),
    _d("passed_at", "text", "when the task passed its validator"),
    _d(
        "for_task",
        "id",
        "a conflict resolver or decompose task the merge queue queued for that task: runs in its worktree",
    ),
    _d("reviews", "id", "a review task: the task it reviews (in that task's worktree)"),
    _d("lens", "id", "a review task: its lens, `agents/lenses/<lens>.md`"),
    _d("arbitrates", "id", "an arbiter task: the task whose reviews disagree"),
    _d("sides", "sides", "an arbiter task: the review tasks behind Position A and B"),
    _d("meaning", "sides", "an arbiter task: which of A and B accepts (never in its prompt)"),
    _d(
        "reviewed_state",
        "text",
        "a failed round's uncommitted work, saved (`git stash create`) while reviewers look at it",
    ),
    _d("reviewed_commit", "text", "the commit its reviews saw; what a reviewer changes is reset to it"),
    _d("verdict", "text", "a review or arbiter task: its decision once it passed"),
    _d("review_tasks", "ids", "the review tasks of this task's last pass"),
    _d("review_verdict", "text", "`accept` once its reviews (or an arbiter) accepted it"),
    _d("arbitrations", "int", "times its reviews needed an arbiter; a second escalates", default=0),
    _d("arbiter", "id", "the arbiter task its reviews' last disagreement queued"),
    _d(
        "escalated",
        "text",
        "when its reviews' disagreement was parked for a person (`task accept` may take it)",
    ),
    _d("merged_at", "text", "when the merge queue fast-forwarded the base branch to it"),
    _d("merged_commit", "text", "the base branch's commit after the merge"),
    _d("done_at", "text", "when a person marked it Done (`control-room done ID`)"),
    _d("done_by", "text", "who marked it Done"),
    _d("seal", "text", "a check over its id and the fields above: written with them, by control-room"),
)
BY_NAME = {f.name: f for f in FIELDS}
REQUIRED = tuple(f.name for f in FIELDS if f.required)
PERSON_FIELDS = tuple(f.name for f in FIELDS if f.writer == PERSON)
OWNED = tuple(f.name for f in FIELDS if f.writer == DISPATCHER)  # the seal included


if TYPE_CHECKING:  # at run time a task is a plain dict: building this TypedDict costs ~7 M
    # instructions (its annotations are compiled), on every command; mypy checks against it.

    class _Identity(TypedDict):
        """What every task read from its file has: its id and the fields ``REQUIRED`` names."""

        id: str
        objective: str
        falsifier: str
        validator: str | list[str]
        max_cost_usd: float
        wall_clock_s: float
        kill_condition: str

    class Task(_Identity, total=False):
        """A task, as read from its file (``swarm.read_task``) and passed along: the fields of
        ``FIELDS``, in the same order, with their types. A plain dict at run time (what JSON reads
        and writes); mypy checks every key and value."""

        role: str
        route: str
        adapter: str
        model: str
        fallback: list[str]
        deps: list[str]
        owns: list[str]
        gate: list[str]
        priority: int
        max_turns: int
        extra_args: list[str]
        command: str | list[str]
        review: list[str]
        brief: str
        fanout_of: str
        plan: str
        plan_hash: str
        created: str
        rounds: int
        dispatcher_deaths: int
        last_failure: str
        passed_at: str
        for_task: str
        reviews: str
        lens: str
        arbitrates: str
        sides: dict[str, Any]
        meaning: dict[str, Any]
        reviewed_state: str
        reviewed_commit: str
        verdict: str
        review_tasks: list[str]
        review_verdict: str
        arbitrations: int
        arbiter: str
        escalated: str
        merged_at: str
        merged_commit: str
        done_at: str
        done_by: str
        seal: str

else:
    Task = dict


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
    if f.kind in ("int", "count"):
        whole = isinstance(v, int) and not isinstance(v, bool)
        if f.kind == "int":
            return None if whole else "must be an integer"
        return None if whole and v >= 0 else "must be an integer >= 0"
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


def owned(path: str) -> str:
    """An ``owns`` path as the dispatcher compares it: ``a/``, ``./a`` and ``a//b/..`` are ``a``;
    ``.`` (or empty) is the whole tree."""
    return posixpath.normpath(path.strip().replace("\\", "/") or ".")


def owns_overlap(a: str, b: str) -> bool:
    """Two ``owns`` paths overlap when one is the other or lies under it (``src`` and
    ``src/parse.py``, not ``src2``); the whole tree (``.``) overlaps every path."""
    a, b = owned(a), owned(b)
    return "." in (a, b) or a == b or a.startswith(b + "/") or b.startswith(a + "/")


def _shown(name: object) -> str:
    """A field name as a problem names it: as written if it is a plain name, else quoted with
    its escapes (a line break or a terminal's escape in a key must not reach the screen)."""
    text = str(name)
    if re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", text):
        return text
    return repr(text if len(text) <= 64 else text[:64] + "…")


def validate(data: object, *, expected_id: str | None = None) -> tuple[Task, list[str]]:
    """Check a task; return (task, problems). Never raises. With problems, the task holds only
    the fields that were valid (it is not a ``Task`` to run)."""
    if not isinstance(data, dict):
        return as_task({}), [f"a task must be a JSON object, not {type(data).__name__}"]
    problems: list[str] = []
    missing = missing_fields(data)
    if missing:
        problems.append(
            "missing required field" + ("s" if len(missing) > 1 else "") + ": " + ", ".join(missing)
        )
    unknown = sorted(_shown(k) for k in data if k not in BY_NAME)
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
        if data.get("id") in (None, ""):  # absent or empty, as every field: the file's name
            task["id"] = expected_id
        elif task.get("id") not in (None, expected_id):
            problems.append(f"id {task['id']!r} does not match the file name {expected_id}.json")
    return as_task(task), problems


def as_task(fields: dict[str, Any]) -> Task:
    """``fields`` as a ``Task``: what ``validate`` checked (all of a task, without problems)."""
    return cast("Task", fields)


def missing_fields(data: Mapping[str, Any]) -> list[str]:
    return [name for name in REQUIRED if data.get(name) in (None, "")]


def owned_problem(data: Mapping[str, Any]) -> str | None:
    """The one refusal of a task whose author wrote fields only control-room writes (every
    way in: ``task add``, a dropped file without its seal, a plan, a proposal, MCP), or None."""
    written = [name for name in OWNED if data.get(name) not in (None, "")]
    if not written:
        return None
    return (
        f"{', '.join(written)}: {'a field' if len(written) == 1 else 'fields'} only control-room "
        f"writes (a task's history is the room's): remove {'it' if len(written) == 1 else 'them'}"
    )


def seal(task: Mapping[str, Any]) -> str | None:
    """The seal of a task's dispatcher fields: a hash of its id and their values, or None when
    it has none. Not a secret: it tells the dispatcher's own files from a file written, copied or
    edited by hand, not from a forger who computes it (docs/tasks.md)."""
    owned = {k: v for k, v in task.items() if k in _SEALED and v not in (None, "")}
    if not owned:
        return None
    import hashlib  # only writers and a fresh queued file hash (status imports no hashlib)

    text = _SEAL_JSON.encode([task.get("id"), owned])
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


_SEALED = frozenset(OWNED) - {"seal"}
# json.dumps with these options builds an encoder at each call (a first scan seals 10,000 files)
_SEAL_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sealed(task: Mapping[str, Any]) -> bool:
    """Whether the task's dispatcher fields are as control-room wrote them (or it has none)."""
    return task.get("seal") == seal(task)


def new_id(objective: str) -> str:
    """An id from the objective's first words plus a random suffix: readable and unique."""
    words = re.findall(r"[a-z0-9]+", objective.lower())[:5]
    stem = "-".join(words)[:40].strip("-") or "task"
    return f"{stem}-{os.urandom(3).hex()}"


def without(task: Task, *names: str) -> Task:
    """A copy of ``task`` without the fields ``names``."""
    return as_task({k: v for k, v in task.items() if k not in names})


def split(task: Task) -> tuple[dict[str, Any], dict[str, Any]]:
    """(what its author wrote, what control-room wrote) of a task: the seal in neither."""
    person = {k: v for k, v in task.items() if BY_NAME[k].writer == PERSON}
    owned = {k: v for k, v in task.items() if BY_NAME[k].writer == DISPATCHER and k != "seal"}
    return person, owned
