"""Whether this process runs inside an agent's run: the test behind person-only commands.

A person's decisions (approve, resume, done, route reopen, ...) are refused from inside a run,
and whatever an agent writes itself is written under a name that says which task
(docs/security.md). "Inside a run" is decided from the process tree, not from one variable
an agent could unset:

- ``CONTROL_ROOM_TASK`` in this process's environment (the dispatcher sets it for every agent
  and validator), or in the environment any ancestor started with (``/proc/<pid>/environ``:
  ``env -u CONTROL_ROOM_TASK control-room approve`` still has the agent's shell above it);
- or an ancestor that is a dispatcher (``control-room cycle``, ``run``, ``demo``, ``integrate``): a daemon
  that left the agent's session is re-parented to the dispatcher, its subreaper (reaper.py).

Where there is no ``/proc`` (macOS) only the variable is seen.
"""

from __future__ import annotations

import functools
import os
from typing import Any

from control_room import reaper

TASK_VARIABLE = "CONTROL_ROOM_TASK"
UNKNOWN = "unknown"  # inside a run, but which task's is not known (a dispatcher above us)
DISPATCHERS = frozenset({"cycle", "run", "demo", "integrate"})  # the commands that run agents or validators
_MAX_DEPTH = 64
_NEEDLE = f"{TASK_VARIABLE}=".encode()


def inside_run(command: str = "") -> str | None:
    """The id of the task whose run this process is part of (``UNKNOWN`` when only a
    dispatcher above us says so); None for a person's own shell. ``command``: the command
    asking (by default this process's own, from its command line); a ``cycle`` that ``run
    --parallel`` started is the person's, not an agent's: it writes and claims as its host."""
    return run_of(env(TASK_VARIABLE), command)


def run_of(own: str | None, command: str = "") -> str | None:
    """``inside_run`` when this process's ``CONTROL_ROOM_TASK`` is ``own`` (None: not set): the
    answer depends on nothing else that can change while the process lives (its ancestors and
    its own command are read once), so a caller may keep it by ``own``."""
    if own is not None:
        return own.strip() or UNKNOWN
    return _above(command or _own_command())


def env(name: str) -> str | None:
    """``os.environ.get(name)``, for what is read on every ledger line (``CONTROL_ROOM_TASK``,
    ``CONTROL_ROOM_WRITER``): looked up in the mapping ``os.environ`` keeps of the environment
    (every change made through ``os.environ`` updates it: a test's monkeypatch, the MCP server's
    writer), without the three Python calls of ``get`` and, for a variable not set, its two
    exceptions. Where ``os.environ`` keeps none (replaced by a plain dict), it is ``get``."""
    environ, data, keys = _env
    if os.environ is not environ:
        environ, data, keys = _env_of(os.environ)
    if data is None:
        said: str | None = environ.get(name)
        return said
    raw = data.get(keys.get(name) or _key(environ, keys, name))
    if raw is None:
        return None
    text: str | None = _decoded.get(raw)  # decoded once per value
    if text is None:
        if len(_decoded) >= 64:
            _decoded.clear()
        text = _decoded[raw] = environ.decodevalue(raw)
    return text


def _env_of(environ: Any) -> tuple[Any, dict[Any, Any] | None, dict[str, Any]]:
    global _env
    data = getattr(environ, "_data", None)
    known = isinstance(data, dict) and callable(getattr(environ, "encodekey", None))
    _env = (environ, data if known else None, {})
    return _env


def _key(environ: Any, keys: dict[str, Any], name: str) -> Any:
    keys[name] = key = environ.encodekey(name)
    return key


_env: tuple[Any, dict[Any, Any] | None, dict[str, Any]] = (None, None, {})  # os.environ, its mapping, keys
_decoded: dict[Any, str] = {}  # a raw value (bytes on POSIX) -> its text


@functools.cache
def _above(command: str) -> str | None:
    """What the ancestors say (``inside_run`` when our own environment says nothing): read once
    per process, like the ancestors themselves."""
    for depth, (task, dispatcher) in enumerate(_ancestors()):
        if task is not None:
            return task
        if dispatcher and not (depth == 0 and dispatcher == "run" and command == "cycle"):
            return UNKNOWN
    return None


@functools.cache
def _own_command() -> str:
    """The dispatcher command this process runs (``cycle``, ...), from ``/proc/self``; else ""."""
    return _dispatcher(_read("/proc/self/cmdline"))


@functools.cache
def _ancestors() -> tuple[tuple[str | None, str], ...]:
    """Each ancestor, nearest first: the task id its environment names (None: none), and the
    dispatcher command it runs ("": it is none)."""
    out: list[tuple[str | None, str]] = []
    pid = os.getppid()
    while pid > 1 and len(out) < _MAX_DEPTH:
        out.append((task_of(pid), _dispatcher(_read(f"/proc/{pid}/cmdline"))))
        pid = _parent(pid)
    return tuple(out)


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(1 << 20)
    except OSError:  # gone, another user's, or no /proc
        return b""


def task_of(pid: int) -> str | None:
    """The task id ``CONTROL_ROOM_TASK`` names in the environment process ``pid`` started with
    (``UNKNOWN`` when empty); None when it names none, or the process cannot be read."""
    for item in _read(f"/proc/{pid}/environ").split(b"\0"):
        if item.startswith(_NEEDLE):
            return item[len(_NEEDLE) :].decode("utf-8", "replace").strip() or UNKNOWN
    return None


def groups_of_run(room: str, task_id: str) -> list[int]:
    """The process groups on this machine of task ``task_id``'s run in the room at ``room``: of
    every process whose environment names both (``CONTROL_ROOM_TASK``, ``CONTROL_ROOM``, as the
    dispatcher sets them for an agent and its validator), from ``/proc``. For a dead claim that
    did not get to write down its agent's group (its cycle was killed just after the start)."""
    task, where, home = _NEEDLE + task_id.encode(), b"CONTROL_ROOM=", os.path.realpath(room)
    groups: set[int] = set()
    try:
        pids = [int(n) for n in os.listdir("/proc") if n.isdigit()]
    except OSError:
        return []
    for pid in pids:
        items = _read(f"/proc/{pid}/environ").split(b"\0") if pid != os.getpid() else []
        if task not in items:
            continue
        rooms = [i[len(where) :].decode("utf-8", "replace") for i in items if i.startswith(where)]
        if rooms and os.path.realpath(rooms[0]) == home:
            fields = reaper.stat_fields(pid)
            if len(fields) > 2 and fields[2].isdigit() and int(fields[2]) > 1:
                groups.add(int(fields[2]))
    return sorted(groups)


def _parent(pid: int) -> int:
    fields = reaper.stat_fields(pid)
    try:
        return int(fields[1])
    except (IndexError, ValueError):
        return 0


def _dispatcher(cmdline: bytes) -> str:
    """The command for ``control-room [options] cycle|run|demo|integrate ...`` (the
    script, ``python .../control-room`` or ``python -m control_room``); else ""."""
    argv = [a.decode("utf-8", "replace") for a in cmdline.split(b"\0") if a]
    for i, arg in enumerate(argv[:3]):
        if i and not os.path.basename(argv[0]).startswith("python"):
            return ""  # a wrapper of a person's (``timeout 60 control-room cycle``) is no dispatcher
        if os.path.basename(arg) == "control-room":
            return _runs_agents(argv[i + 1 :])
        if arg == "-m" and i + 1 < len(argv) and argv[i + 1].split(".")[0] == "control_room":
            return _runs_agents(argv[i + 2 :])
    return ""


def _runs_agents(args: list[str]) -> str:
    """The first word that is not an option (or ``--room``'s value) is the command."""
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg == "--room":
            skip = True
        elif not arg.startswith("-"):
            return arg if arg in DISPATCHERS else ""
    return ""
