"""CONTROL.md, the gate (SPEC §8): limits and approvals in its front matter.

Missing keys take the defaults below; a key with a wrong type is an error that names the key,
since a gate that cannot be read must fail closed. The parsed values are cached against the
file's fingerprint, so most commands never import the YAML parser.
"""

from __future__ import annotations

from typing import Any

from control_room.errors import InvalidError
from control_room.room.layout import Room
from control_room.room.values import is_number as num

DEFAULTS: dict[str, Any] = {
    "max_parallel": 1,
    "daily_budget_usd": 10.0,
    "max_task_cost_usd": 2.0,
    "max_rounds": 2,
    "max_queued": 10000,
    "default_adapter": "probe",
    "default_model": None,
    "allow_extra_args": False,
    "env_allow": [],
    "workdir": ".",
    "repo": None,
    "validator_timeout_s": 600,
    "grace_s": 60,
    "capture_max_bytes": 10_000_000,
    "retention_days": 30,
    "on_empty_queue": "idle",
    "max_new_tasks": 5,
    "field_guide_max_lines": 80,
    "digest_max_bytes": 8192,
    "death_loop_n": 3,
    "orchestrator_adapter": None,
    "orchestrator_command": None,
    "orchestrator_max_cost_usd": 0.5,
    "orchestrator_wall_clock_s": 900,
    "command_argv": [],
    "approvals": [],
}

_POSINT = (
    "max_parallel",
    "max_rounds",
    "max_queued",
    "max_new_tasks",
    "field_guide_max_lines",
    "digest_max_bytes",
    "death_loop_n",
    "capture_max_bytes",
)
_MONEY = ("daily_budget_usd", "max_task_cost_usd", "orchestrator_max_cost_usd")
_SECONDS = ("validator_timeout_s", "grace_s", "orchestrator_wall_clock_s")
_OPTIONAL_TEXT = ("default_model", "workdir", "repo", "orchestrator_adapter")
_CHOICES = {"on_empty_queue": ("idle", "orchestrate")}


def _why(key: str, v: Any) -> str | None:
    if key in _POSINT:
        return None if isinstance(v, int) and not isinstance(v, bool) and v > 0 else "a positive integer"
    if key in _MONEY:
        return None if num(v) and v >= 0 else "a number of USD >= 0"
    if key in _SECONDS:
        return None if num(v) and v > 0 else "a number of seconds > 0"
    if key == "retention_days":
        return None if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else "an integer >= 0"
    if key in _OPTIONAL_TEXT:
        return None if v is None or isinstance(v, str) else "a string"
    if key == "default_adapter":
        return None if isinstance(v, str) and v.strip() else "an adapter name"
    if key == "allow_extra_args":
        return None if isinstance(v, bool) else "true or false"
    if key == "env_allow":
        return None if isinstance(v, list) and all(isinstance(x, str) for x in v) else "a list of names"
    if key in _CHOICES:
        return None if v in _CHOICES[key] else "one of " + ", ".join(_CHOICES[key])
    if key == "orchestrator_command":
        ok = (
            v is None
            or (isinstance(v, str) and v.strip())
            or (isinstance(v, list) and v and all(isinstance(x, str) for x in v))
        )
        return None if ok else "a command string or a list of strings"
    if key == "command_argv":
        return None if isinstance(v, list) and all(isinstance(x, str) for x in v) else "a list of strings"
    if key == "approvals":
        return None if isinstance(v, list) else "a list"
    return "a known key"


def parse(text: str, where: str) -> dict[str, Any]:
    from control_room.store.markdown import front_matter

    meta, _ = front_matter(text, where)
    if not meta and not text.lstrip("\ufeff").startswith("---"):
        raise InvalidError(
            f"{where}: no front matter: the limits (max_parallel, daily_budget_usd, ...) "
            "belong between --- lines at the top; `control-room init` writes a default one"
        )
    unknown = sorted(str(k) for k in meta if k not in DEFAULTS)
    if unknown:
        raise InvalidError(
            f"{where}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
            f"(known: {', '.join(DEFAULTS)})"
        )
    values = dict(DEFAULTS)
    for key, v in meta.items():
        if v is None and key not in _OPTIONAL_TEXT:
            continue  # an empty value means "the default"
        why = _why(str(key), v)
        if why:
            raise InvalidError(f"{where}: {key} must be {why} (got {v!r})")
        values[str(key)] = v
    return values


def load(room: Room) -> dict[str, Any]:
    """The room's CONTROL.md values; a missing or broken gate is an error (fail closed)."""
    from control_room.store import cache

    def compute() -> dict[str, Any]:
        from control_room.store.files import read_text

        try:
            text = read_text(room.control)
        except FileNotFoundError:
            raise InvalidError(
                f"{room.control} is missing: the gate is gone, so nothing runs; "
                "restore it (git checkout) or run `control-room init` to write a default one"
            ) from None
        return parse(text, str(room.control))

    return cache.derived(room.cache / "control", room.control, compute)


def approve(room: Room, task_id: str, gates: list[str], who: str) -> list[str]:
    """Record approvals for a task's gates in CONTROL.md front matter; return the new ones.

    Only the ``approvals:`` entry is rewritten (as one flow-style YAML line), so the comments
    and the rest of the file stay as the person wrote them.
    """
    import yaml

    from control_room import ledger
    from control_room.errors import InvalidError
    from control_room.room import swarm
    from control_room.store.files import update
    from control_room.timeutil import now_iso
    from control_room.views import context

    _, path = swarm.locate(room, task_id)
    task, _ = swarm.read_task(path)
    wanted = gates or list(task.get("gate", []))
    if not wanted:
        raise InvalidError(f"task {task_id} has no gate to approve")
    unknown = [g for g in wanted if g not in task.get("gate", [])]
    if unknown:
        raise InvalidError(
            f"task {task_id} has no gate {', '.join(unknown)} (its gates: "
            f"{', '.join(task.get('gate', [])) or 'none'})"
        )
    added: list[str] = []

    def change(text: str) -> str:
        added.clear()
        current = parse(text, str(room.control))["approvals"] or []
        new = list(current)
        for g in wanted:
            if not any(
                isinstance(a, dict) and a.get("task") == task_id and a.get("gate") == g for a in current
            ):
                new.append({"task": task_id, "gate": g, "by": who, "at": now_iso()})
                added.append(g)
        if not added:
            return text
        flow = yaml.safe_dump(new, default_flow_style=True, width=1 << 30).strip()
        comment = next(
            (_trailing_comment(ln) for ln in text.splitlines() if ln.startswith("approvals:")), None
        )
        line = f"approvals: {flow}" + (f"  #{comment}" if comment else "") + "\n"
        return _replace_key(text, "approvals", line)

    update(room.control, change)
    for g in added:
        ledger.append(room.ledger, "approve", task=task_id, outcome="approved", detail=f"gate {g} by {who}")
    if added:
        context.refresh(room)
    return added


def _trailing_comment(line: str) -> str | None:
    """The text after a YAML comment's ``#`` on ``line``, ignoring ``#`` inside quotes."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and i > 0 and line[i - 1] in " \t":
            return line[i + 1 :].rstrip("\n")
    return None


def _replace_key(text: str, key: str, line: str) -> str:
    """Replace a top-level key and its value's continuation lines in the front matter. Comment
    lines among them are kept (after the new line); a blank line ends the value."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return f"---\n{line}---\n" + text
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        raise InvalidError(f"{key}: the front matter of CONTROL.md has no closing ---")
    for i in range(1, end):
        if lines[i].startswith(f"{key}:"):
            j = i + 1
            comments = []
            while j < end and lines[j].strip() and lines[j].startswith((" ", "\t", "-", "#")):
                if lines[j].lstrip().startswith("#"):
                    comments.append(lines[j])
                j += 1
            return "".join(lines[:i]) + line + "".join(comments) + "".join(lines[j:])
    return "".join(lines[:end]) + line + "".join(lines[end:])
