"""CONTROL.md (SPEC §8): the room's settings (limits, approvals) in its front matter.

``keys.KEYS`` is the one table of keys: each key's default, kind and one-line doc; ``Settings``
declares their types (docs/gates.md and the CONTROL.md template are checked against the table
by a test). A key that is absent takes its default; a key with a wrong type is an error naming
the key, because settings that cannot be read must fail closed. The parsed values are cached
against the file's fingerprint, so most commands never import the YAML parser.

Where the word "gate" appears in code it means a task's approval gate (``gpu``, ``submit``):
an approval is recorded here, under ``approvals``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from typing import Any

from control_room import redact
from control_room.errors import InvalidError
from control_room.room.keys import KEYS, KINDS, NAMES, adapters_problem
from control_room.room.layout import Room
from control_room.store import cache, files
from control_room.store.docs import flow, has_front_matter, split
from control_room.store.files import read_text
from control_room.text import escaped


class Settings:
    """The values of CONTROL.md's front matter, defaults filled in; read-only. (A plain class
    rather than a dataclass or NamedTuple: every command imports it, and this costs ~1 ms less.)"""

    __slots__ = NAMES
    max_parallel: int
    daily_budget_usd: float
    daily_budget_tokens: int
    max_task_cost_usd: float
    max_turns: int
    max_rounds: int
    max_dispatcher_deaths: int
    max_queued: int
    default_adapter: str
    default_model: str | None
    allow_extra_args: bool
    env_allow: tuple[str, ...]
    workdir: str | None
    repo: str | None
    base_branch: str | None
    repo_remote: str | None
    auto_integrate: bool
    conflict_resolver: str | None
    notify: str | tuple[str, ...] | None
    review: tuple[str, ...] | dict[str, list[str]]
    review_when: str
    megafile_lines: int
    remote: str | None
    validator_timeout_s: float
    grace_s: float
    min_free_mb: int
    capture_max_bytes: int
    retention_days: int
    min_free_gb: int
    on_empty_queue: str
    max_new_tasks: int
    field_guide_max_lines: int
    digest_max_bytes: int
    max_identical_failures: int
    death_loop_n: int
    orchestrator_adapter: str | None
    orchestrator_command: str | tuple[str, ...] | None
    orchestrator_max_cost_usd: float
    orchestrator_wall_clock_s: float
    command_argv: tuple[str, ...]
    adapters: Mapping[str, Mapping[str, Any] | None]
    prices: Mapping[str, Mapping[str, float]]
    approvals: tuple[Mapping[str, Any], ...]

    def __init__(self, **values: Any) -> None:
        for name, (default, _, _) in KEYS.items():
            v = values.pop(name, default)
            v = dict(v) if isinstance(v, dict) else v  # never the table's own default
            object.__setattr__(self, name, tuple(v) if isinstance(v, list) else v)
        if values:
            raise TypeError(f"unknown settings: {', '.join(values)}")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("settings are read-only: change CONTROL.md")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Settings) and self.as_dict() == other.as_dict()

    def __repr__(self) -> str:
        return f"Settings({', '.join(f'{n}={getattr(self, n)!r}' for n in NAMES)})"

    def replace(self, **changes: Any) -> Settings:
        """A copy with some values changed."""
        return Settings(**{**self.as_dict(), **changes})

    def approved(self, task_id: str, gate: str) -> bool:
        """Whether a person approved this task's gate (``control-room approve``)."""
        return any(
            isinstance(a, Mapping) and a.get("task") == task_id and a.get("gate") == gate
            for a in self.approvals
        )

    def as_dict(self) -> dict[str, Any]:
        """The values as plain JSON-like data (tuples as lists): what adapters see."""
        return {name: _plain(getattr(self, name)) for name in NAMES}


DEFAULTS = Settings()


def _plain(v: Any) -> Any:
    return [_plain(x) for x in v] if isinstance(v, (tuple, list)) else v


def values(meta: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The checked values of a front matter, defaults filled in, as plain data."""
    unknown = sorted(escaped(str(k)) for k in meta if k not in NAMES)  # a key's line break: one line
    if unknown:
        raise InvalidError(
            f"{where}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
            f"(known: {', '.join(NAMES)})"
        )
    out: dict[str, Any] = DEFAULTS.as_dict()
    for name, (_, kind, _) in KEYS.items():
        if name not in meta:
            continue
        v = meta[name]
        if v is None and kind not in ("text", "command"):
            continue  # an empty value means "the default"
        check, must = KINDS[kind]
        if not check(v):
            if kind == "adapters":
                raise InvalidError(f"{where}: adapters: {adapters_problem(v)}")
            raise InvalidError(f"{where}: {name} must be {must} (got {v!r})")
        out[name] = v
    return out


def _checked(text: str, where: str) -> dict[str, Any]:
    """The checked values in the text of a CONTROL.md (plain data, as cached)."""
    meta, _ = split(text, where)
    if not meta and not has_front_matter(text):
        raise InvalidError(
            f"{where}: no front matter: the limits (max_parallel, daily_budget_usd, ...) "
            "belong between --- lines at the top; `control-room init` writes a default one"
        )
    return values(meta, where)


def parse(text: str, where: str) -> Settings:
    """The settings in the text of a CONTROL.md."""
    return Settings(**_checked(text, where))


def load(room: Room) -> Settings:
    """The room's settings; a missing or broken CONTROL.md is an error (fail closed)."""

    def compute() -> dict[str, Any]:
        try:
            text = read_text(room.control)
        except FileNotFoundError:
            raise InvalidError(
                f"{room.control} is missing: the gate is gone, so nothing runs; "
                "restore it (git checkout) or run `control-room init` to write a default one"
            ) from None
        return _checked(text, str(room.control))

    for tries_left in range(files.SETTLE_TRIES - 1, -1, -1):
        try:
            settings = Settings(**cache.derived(room.cache / "control", room.control, compute))
            break
        except InvalidError:
            if not tries_left or not files.just_saved(room.control):
                raise
            time.sleep(files.SETTLE_S)  # an editor's save in place (truncate, then write) may be half done
    redact.watch(*_key_names(settings))  # whoever reads CONTROL.md never writes those keys
    return settings


def _key_names(settings: Settings) -> list[str]:
    """The variables CONTROL.md's adapter setups name in ``api_key_env``."""
    setups = (v for v in settings.adapters.values() if isinstance(v, Mapping))
    return [n for v in setups if isinstance(n := v.get("api_key_env"), str)]


def mentions(room: Room, name: str) -> bool:
    """Whether CONTROL.md gives ``name`` a value on a line of its own: a look at the text, no
    parse, no cache written (the edge of every command asks it of ``notify``). False if the file
    cannot be read: the command itself says what is wrong."""
    try:
        text = read_text(room.control)
    except OSError:
        return False
    return re.search(rf"(?m)^{re.escape(name)}:[ \t]*[^\s#]", text) is not None


def set_value(text: str, name: str, value: Any) -> str:
    """CONTROL.md's text with ``name`` set to ``value``, written as one line of YAML. Only that
    key's lines change: the comment after it, and comment lines inside its old value, stay."""
    comment = next((trailing_comment(ln) for ln in text.splitlines() if ln.startswith(f"{name}:")), None)
    return replace_key(text, name, f"{name}: {flow(value)}" + (f"  #{comment}" if comment else "") + "\n")


def replace_key(text: str, name: str, line: str) -> str:
    """CONTROL.md's text with top-level key ``name`` (and its value's continuation lines)
    replaced by ``line``, or ``line`` added at the end of the front matter. Comment lines inside
    the old value are kept after the new line; a blank line ends the value."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return f"---\n{line}---\n" + text
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() == "---"), None)  # as docs.split
    if end is None:
        raise InvalidError(f"{name}: the front matter of CONTROL.md has no closing ---")
    for i in range(1, end):
        if lines[i].startswith(f"{name}:"):
            j = i + 1
            comments = []
            while j < end and lines[j].strip() and lines[j].startswith((" ", "\t", "-", "#")):
                if lines[j].lstrip().startswith("#"):
                    comments.append(lines[j])
                j += 1
            return "".join(lines[:i]) + line + "".join(comments) + "".join(lines[j:])
    return "".join(lines[:end]) + line + "".join(lines[end:])


def trailing_comment(line: str) -> str | None:
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
