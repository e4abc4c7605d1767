"""CONTROL.md's keys (SPEC §8): the one table of them (``KEYS``: each key's default, kind and
one-line doc) and how a value of each kind is checked (``KINDS``), with the settings of one
entry of ``adapters:``. ``settings.Settings`` declares each key's type in the same order (a test
holds the two together); docs/gates.md's table and the CONTROL.md template are checked against
``KEYS``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from control_room.room.values import is_number

Check = Callable[[Any], bool]


def _posint(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v > 0


def _count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _money(v: Any) -> bool:
    return is_number(v) and v >= 0


def _seconds(v: Any) -> bool:
    return is_number(v) and v > 0


def _text(v: Any) -> bool:
    return v is None or isinstance(v, str)


def _name(v: Any) -> bool:
    return isinstance(v, str) and bool(v.strip())


def _strs(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _command(v: Any) -> bool:
    return v is None or (isinstance(v, str) and bool(v.strip())) or (_strs(v) and bool(v))


def _review(v: Any) -> bool:
    """A list of lens names (every task), or a mapping of route (``"*"``: any other) -> list."""
    if isinstance(v, dict):
        return all(isinstance(k, str) and _strs(x) for k, x in v.items())
    return _strs(v)


def _choice(*allowed: str) -> Check:
    def check(v: Any) -> bool:
        return v in allowed

    return check


_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}\Z")

# The settings of one entry of ``adapters:`` (``adapters.base.Setup`` has the same fields):
# name -> (check, what the error says a value must be).
ADAPTER_SETTINGS: dict[str, tuple[Check, str]] = {
    "base_url": (
        lambda v: isinstance(v, str) and v.startswith(("http://", "https://")) and len(v.split()) == 1,
        "a URL starting with http:// or https://",
    ),
    "api_key_env": (
        lambda v: isinstance(v, str) and bool(_ENV_NAME.match(v)),
        "the NAME of an environment variable (letters, digits, _), never the key itself",
    ),
    "model": (_name, "a model name"),
    "isolated": (lambda v: isinstance(v, bool), "true or false"),
}


def adapters_problem(v: Any) -> str | None:
    """What is wrong with an ``adapters:`` value (CONTROL.md's or a role's), or None. An unknown
    setting is refused, not ignored: a misspelt ``base_url`` must not quietly send the run to
    the user's own login."""
    if not isinstance(v, Mapping):
        return f"must be a mapping of adapter name -> settings (got {v!r})"
    for name, entry in v.items():
        if not (isinstance(name, str) and _SAFE_NAME.match(name)):
            return f"{name!r} is not an adapter name"
        if entry is None:
            continue
        if not isinstance(entry, Mapping):
            return f"{name} must be a mapping of settings ({', '.join(ADAPTER_SETTINGS)}) (got {entry!r})"
        for key, value in entry.items():
            if key not in ADAPTER_SETTINGS:
                return f"{name}: unknown setting {key!r} (known: {', '.join(ADAPTER_SETTINGS)})"
            check, must = ADAPTER_SETTINGS[key]
            if value is not None and not check(value):
                return f"{name}.{key} must be {must} (got {value!r})"
    return None


def _prices(v: Any) -> bool:
    """``{model: {input: USD, output: USD}}``, per million tokens."""
    return isinstance(v, Mapping) and all(
        isinstance(model, str)
        and isinstance(p, Mapping)
        and set(p) <= {"input", "output"}
        and all(_money(x) for x in p.values())
        for model, p in v.items()
    )


# kind -> (check, what the error says a value must be)
KINDS: dict[str, tuple[Check, str]] = {
    "posint": (_posint, "a positive integer"),
    "count": (_count, "an integer >= 0"),
    "money": (_money, "a number of USD >= 0"),
    "seconds": (_seconds, "a number of seconds > 0"),
    "text": (_text, "a string"),
    "adapter": (_name, "an adapter name"),
    "bool": (lambda v: isinstance(v, bool), "true or false"),
    "names": (_strs, "a list of names"),
    "strs": (_strs, "a list of strings"),
    "command": (_command, "a command string or a list of strings"),
    "on_empty_queue": (_choice("idle", "orchestrate"), "one of idle, orchestrate"),
    "list": (lambda v: isinstance(v, list), "a list"),
    "review": (_review, "a list of lens names, or a mapping of route (or *) -> list of lens names"),
    "review_when": (_choice("pass", "always"), "one of pass, always"),
    "adapters": (lambda v: adapters_problem(v) is None, "a mapping of adapter name -> settings"),
    "prices": (_prices, "a mapping of model -> {input: USD, output: USD} per million tokens"),
}


# The one table of keys: name -> (default, kind (``KINDS``), one-line doc). ``Settings`` below
# declares each key's type, in the same order (a test holds the two together). A ``text`` or
# ``command`` key left empty means "none"; any other key left empty means its default.
KEYS: dict[str, tuple[Any, str, str]] = {
    "max_parallel": (1, "posint", "cycles that may run at once (slots)"),
    "daily_budget_usd": (10.0, "money", "spend per UTC day; no task starts past it"),
    "daily_budget_tokens": (
        0,
        "count",
        "tokens (in and out) per UTC day, for a subscription billed in tokens: no task starts past it, "
        "and a run that streams its usage ends there ([faults.md](faults.md#live-spend-caps)); 0: none",
    ),
    "max_task_cost_usd": (2.0, "money", "the highest `max_cost_usd` a task may declare"),
    "max_turns": (
        0,
        "count",
        "model turns an agent may take in one run, unless its task says (`max_turns`): passed as its "
        "CLI's own flag where it has one, and held by the live cap ([faults.md](faults.md#live-spend-caps)); "
        "0: none",
    ),
    "max_rounds": (2, "posint", "failed rounds before a task is parked"),
    "max_dispatcher_deaths": (
        3,
        "posint",
        "times a task's dispatcher may die running it (not rounds) before it is parked as a poison task",
    ),
    "max_queued": (10000, "posint", "`task add` refuses a task when the queue holds this many"),
    "default_adapter": ("probe", "adapter", "adapter when neither the task nor its role names one"),
    "default_model": (None, "text", "model when neither the task nor its role names one"),
    "allow_extra_args": (False, "bool", "whether tasks may carry `extra_args`"),
    "env_allow": (
        (),
        "names",
        "variables agents and validators get besides their adapter's own list (names, or `PREFIX*`); "
        "never the whole environment ([adapters.md](adapters.md#the-environment))",
    ),
    "workdir": (".", "text", "where agents and validators run, relative to the room"),
    "repo": (
        None,
        "text",
        "the target git repository, relative to the room: each route then runs in a worktree of it "
        "([worktrees.md](worktrees.md))",
    ),
    "base_branch": (None, "text", "the branch route worktrees start from; none: the repo's current branch"),
    "repo_remote": (
        None,
        "text",
        "with `repo`: the repo's git remote (a name such as `origin`, or a URL): route branches are "
        "pushed to it, and the merge queue takes the base from it and pushes it back, fast-forward "
        "only ([many-machines.md](many-machines.md#worktrees-and-the-merge-queue)); none: the base "
        "stays on this machine",
    ),
    "auto_integrate": (
        False,
        "bool",
        "with `repo`: a passing task goes through the merge queue in the same cycle (unless it has a "
        "`merge` gate not yet approved) ([integration.md](integration.md))",
    ),
    "conflict_resolver": (
        None,
        "text",
        "a role: a rebase that conflicts queues a resolver task with it on that worktree; none: the "
        "conflict is a failed round",
    ),
    "notify": (
        None,
        "command",
        "a command (argv or a string without shell syntax) run with a JSON event on stdin when a "
        "person is needed ([notifications.md](notifications.md))",
    ),
    "review": (
        (),
        "review",
        "lenses that review every passing task (`[correctness, security]`), or per route "
        "(`{faster-parse: [falsifier], '*': [correctness]}`); a task's own `review` overrides "
        "([review.md](review.md))",
    ),
    "review_when": (
        "pass",
        "review_when",
        "`pass`: reviews run after the validator passes; `always`: after a failed round too, "
        "their findings then join the next brief",
    ),
    "megafile_lines": (
        0,
        "count",
        "integration refuses a change that takes a file past this many lines or grows one past it, "
        "and queues a decompose task (0: off) ([integration.md](integration.md#megafiles))",
    ),
    "remote": (
        None,
        "text",
        "a git remote (a name such as `origin`, or a URL) the room's clones share: each cycle fetches, "
        "claims through it and pushes what it did ([many-machines.md](many-machines.md)); none: this "
        "machine only",
    ),
    "validator_timeout_s": (600, "seconds", "time limit of a task's validator"),
    "grace_s": (60, "seconds", "extra time after a claim's deadline before it counts as dead"),
    "min_free_mb": (64, "count", "free disk space a cycle needs before it claims a task, in MiB"),
    "capture_max_bytes": (10_000_000, "posint", "per stream; output beyond it is dropped and noted"),
    "retention_days": (
        30,
        "count",
        "days a finished task's results are kept; `cleanup` removes older ones (0: never by age) "
        "([cleanup.md](cleanup.md))",
    ),
    "min_free_gb": (
        1,
        "count",
        "`cleanup` removes finished tasks' results, oldest first, while less is free on the disk, "
        "in GiB (0: off)",
    ),
    "on_empty_queue": (
        "idle",
        "on_empty_queue",
        "`idle` or `orchestrate` ([orchestrator.md](orchestrator.md))",
    ),
    "max_new_tasks": (5, "posint", "tasks one orchestrator run may queue"),
    "field_guide_max_lines": (80, "posint", "lines of `intelligence/FIELD_GUIDE.md` injected into prompts"),
    "digest_max_bytes": (8192, "posint", "size cap of DIGEST.md ([digest.md](digest.md))"),
    "max_identical_failures": (
        3,
        "posint",
        "failed rounds in a row with one fingerprint (the same change failing the same way) that park "
        "the task and propose a kill of its route ([findings.md](findings.md))",
    ),
    "death_loop_n": (
        3,
        "posint",
        "identical failures in a row that hold a route ([findings.md](findings.md))",
    ),
    "orchestrator_adapter": (
        None,
        "text",
        "the orchestrator's adapter; none: its role's, else `default_adapter`",
    ),
    "orchestrator_command": (
        None,
        "command",
        "what the `probe` adapter runs as the orchestrator (string or list)",
    ),
    "orchestrator_max_cost_usd": (0.5, "money", "the orchestrator task's `max_cost_usd`"),
    "orchestrator_wall_clock_s": (900, "seconds", "the orchestrator task's `wall_clock_s`"),
    "command_argv": ((), "strs", "argv template of the `command` adapter ([adapters.md](adapters.md))"),
    "adapters": (
        {},
        "adapters",
        "per adapter: `base_url`, `api_key_env`, `model`, `isolated` for a gateway or a local model "
        "([adapters.md](adapters.md#a-gateway-or-a-local-model)); empty: each CLI uses the user's own login",
    ),
    "prices": (
        {},
        "prices",
        "per model, `{input: USD, output: USD}` per million tokens: the estimated spend of a CLI that "
        "streams tokens but no dollars, for its live cap ([faults.md](faults.md#live-spend-caps))",
    ),
    "approvals": ((), "list", "written by `control-room approve`: `{task, gate, by, at}`"),
}
NAMES: tuple[str, ...] = tuple(KEYS)
