"""Every descendant of a run ends with it, even one that left the agent's process group.

``proc.run`` starts the agent in a session of its own and kills that group at the end. A child
that calls ``setsid`` (a daemon, ``nohup setsid ...``, a double fork) leaves the group, and so
escaped that kill. Two mechanisms close the gap (docs/faults.md):

- **a subreaper** (Linux ``prctl(PR_SET_CHILD_SUBREAPER)``): while an agent runs, an orphan
  anywhere below us is re-parented to us rather than to init, so after the run ``end_strays``
  finds it among our own children (``/proc``) and ends it, its own group with it, until none is
  left;
- **a watchdog** (``watched``): something outside the dispatcher ends the whole group a few
  seconds after the wall clock even when the dispatcher itself was SIGKILLed, so an orphaned
  agent never outlives its lease into another machine's takeover. A single cycle runs each
  child under coreutils ``timeout``; a run loop starts one watchdog of its own for all its runs
  (``keep_watch``, ``control_room/watchdog.py``), told of each run before it starts (``watched``)
  and once it has (``started``): a ``timeout`` process a run costs about 1 ms of CPU.

Elsewhere (macOS: no subreaper, no ``timeout``) only the process group is ended, as before.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import subprocess

PR_SET_CHILD_SUBREAPER = 36
WATCHDOG_GRACE_S = 5.0  # after the wall clock; well inside a claim's grace_s (default 60)
ROUNDS = 50  # each round ends what the last one's deaths re-parented to us

spawned: set[int] = set()  # our own children (proc's Popen): never strays


def subreaper(on: bool) -> bool:
    """Make this process the subreaper of its descendants (or stop being it); False where the
    system has none."""
    if not sys.platform.startswith("linux"):
        return False
    global _prctl
    if _prctl is None:
        import ctypes  # Linux only, and only around an agent's run

        try:
            _prctl = ctypes.CDLL(None, use_errno=True).prctl
        except (OSError, AttributeError):
            return False
    return int(_prctl(PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0)) == 0


_prctl: Any = None  # libc's prctl, looked up once: a run loop asks four times a claim


def children() -> list[int]:
    """The pids whose parent is this process, from ``/proc`` (empty where there is none)."""
    pids: list[int] = []
    try:
        threads = os.listdir("/proc/self/task")
    except OSError:
        return pids
    for tid in threads:
        try:
            with open(f"/proc/self/task/{tid}/children", encoding="ascii") as f:
                pids.extend(int(p) for p in f.read().split())
        except (OSError, ValueError):
            continue
    return pids


def end_strays(killed_group: int | None = None) -> int:
    """End every child of ours that ``proc`` did not start (an orphan the subreaper adopted),
    with its process group, and reap it; repeat while their deaths bring more. How many had
    left ``killed_group`` (the agent's own, which proc killed already) and were still running:
    one of that group, or a zombie, is only reaped."""
    ended = 0
    ours = os.getpgrp()
    for _ in range(ROUNDS):
        strays = [pid for pid in children() if pid not in spawned]
        if not strays:
            break
        for pid in strays:
            if _zombie(pid):  # it ended already (in the group proc killed): reaped, not counted
                _reap(pid)
                continue
            group = None
            with contextlib.suppress(ProcessLookupError, PermissionError):
                group = os.getpgid(pid)
                if group != ours:
                    os.killpg(group, signal.SIGKILL)
                os.kill(pid, signal.SIGKILL)
            if _reap(pid) and (group is None or group != killed_group):
                ended += 1  # (a member of the agent's group may not have died yet: not counted)
    return ended


def stat_fields(pid: int) -> list[str]:
    """The fields of ``/proc/<pid>/stat`` after its command name (state, ppid, pgrp, ...); []
    when the process is gone or there is no ``/proc``. The name, in parentheses, may hold
    spaces and parentheses itself: the fields start after its last ``)``."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return []


def _zombie(pid: int) -> bool:
    return stat_fields(pid)[:1] == ["Z"]


def _reap(pid: int, wait_s: float = 2.0) -> bool:
    deadline = time.monotonic() + wait_s
    while True:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return True  # reaped already (or not ours after all)
        if done:
            return True
        if time.monotonic() >= deadline:
            return False  # stuck in the kernel (state D): the next round tries again
        time.sleep(0.01)


@functools.cache
def _timeout_program() -> str | None:
    if not sys.platform.startswith("linux"):
        return None
    for folder in os.get_exec_path():  # (what shutil.which does, without loading shutil)
        name = os.path.join(folder, "timeout")
        if os.access(name, os.X_OK) and os.path.isfile(name):
            return name
    return None


def watched(argv: list[str], limit_s: float, env: Mapping[str, str] | None = None) -> list[str]:
    """``argv`` under a watchdog that kills its whole group ``WATCHDOG_GRACE_S`` after
    ``limit_s``, should we no longer be there to do it: this process's own (``keep_watch``), told
    of the run now (``env``: the room and task it names, to find it by should we die before
    ``started``), else coreutils ``timeout``; ``argv`` itself where there is neither."""
    deadline = time.monotonic() + limit_s
    room, task = ((env or os.environ).get(k, "") for k in ("CONTROL_ROOM", "CONTROL_ROOM_TASK"))
    if _tell(f"? {deadline:.3f} {task or '-'} {room}".replace("\n", " ")):  # (an id holds no space)
        _PENDING.append(True)
        return argv
    _PENDING.append(False)
    program = _timeout_program()
    if program is None:
        return argv
    # TERM, then KILL 2 s later: the TERM that proc sends at a time-out or STOP reaches the
    # agent as TERM (``timeout`` passes on the signal it gets as its own), with that grace
    return [program, "-s", "TERM", "-k", "2", f"{limit_s + WATCHDOG_GRACE_S:g}", *argv]


def started(pid: int | None) -> None:
    """The run ``watched`` was last asked for started as process group ``pid`` (None: it could
    not start): this process's watchdog, if it watches that run, now knows the group."""
    if _PENDING and _PENDING.pop():
        _tell(f"+ {pid}" if pid is not None else "+ 0")


def ended(pid: int) -> None:
    """Process group ``pid``'s run ended (its group killed with it): no longer watched."""
    _tell(f"- {pid}")


def keep_watch() -> bool:
    """Start this process's own watchdog, for all the runs it makes from now on (a run loop:
    one process for thousands of runs, instead of a ``timeout`` process each); whether there is
    one. Linux only, like the subreaper."""
    if not sys.platform.startswith("linux"):
        return False
    if _WATCHDOG and _WATCHDOG[0].poll() is None:
        return True
    import subprocess  # a run loop's only: `status` and `task list` read /proc through this module

    try:
        dog = subprocess.Popen(
            [sys.executable, "-m", "control_room.watchdog"],
            cwd=Path(__file__).resolve().parent.parent,  # where control_room is, installed or not
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # a Ctrl-C at the terminal is ours to handle, not its
        )
    except OSError:
        return False
    spawned.add(dog.pid)  # ours: never a stray
    _WATCHDOG[:] = [dog]
    return True


@contextlib.contextmanager
def watch_kept() -> Iterator[bool]:
    """``keep_watch`` for the time of a run loop: its watchdog let go at the end (all its runs
    ended by then, it exits at once), so a process that runs a loop and goes on (a test's) runs
    under ``timeout`` again."""
    kept = keep_watch()
    try:
        yield kept
    finally:
        if kept and _WATCHDOG:
            dog = _WATCHDOG.pop()
            with contextlib.suppress(OSError):
                if dog.stdin is not None:
                    dog.stdin.close()
            spawned.discard(dog.pid)
            import subprocess  # (loaded already: keep_watch started it)

            with contextlib.suppress(subprocess.TimeoutExpired):
                dog.wait(timeout=2)


_WATCHDOG: list[subprocess.Popen[bytes]] = []  # this process's watchdog, once started
_PENDING: list[bool] = []  # per run ``watched`` was asked for: whether the watchdog was told


def _tell(line: str) -> bool:
    """Say ``line`` to this process's watchdog; False when there is none (or it is gone)."""
    if not _WATCHDOG or _WATCHDOG[0].stdin is None:
        return False
    try:
        os.write(_WATCHDOG[0].stdin.fileno(), line.encode() + b"\n")
    except OSError:  # it died: runs go under `timeout` again
        _WATCHDOG.clear()
        return False
    return True
