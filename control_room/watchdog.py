"""A run loop's watchdog: one process for all of a loop's runs, ending an agent's process group
by its wall clock should the loop die first (``reaper.keep_watch`` starts it; a single cycle
wraps each run in coreutils ``timeout`` instead).

It reads lines from its stdin, a pipe only the loop holds open:

- ``? DEADLINE TASK ROOM``: a run is about to start (``DEADLINE``: ``time.monotonic()`` seconds,
  a clock every process of the machine shares; the task (``-``: none) and the room its
  environment names, the room last: its path may hold spaces);
- ``+ PGID``: the run announced first and not yet said started is started, as process group
  ``PGID`` (``0``: it could not start);
- ``- PGID``: that run ended, its group with it.

At the end of its stdin, the loop is gone. Each group still watched is sent SIGTERM
``GRACE_S`` after its deadline, and SIGKILL ``KILL_S`` later; a run announced but never said
started (the loop was killed in between) is found by its environment, as ``lineage`` finds a
dead claim's agent. Then it exits. It runs in a session of its own (a Ctrl-C at the terminal is
the loop's to handle) and imports nothing of control-room's but ``lineage``, and that only then.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import time
from collections.abc import Iterable, Iterator

GRACE_S = 5.0  # after the wall clock; well inside a claim's grace_s (default 60)
KILL_S = 2.0  # SIGTERM, then SIGKILL this much later
PAUSE_S = 0.25  # between two reads of the pipe


def watch(lines: Iterable[bytes]) -> tuple[dict[int, float], list[tuple[float, str, str]]]:
    """The groups still watched (pgid -> deadline) and the runs announced but never said
    started, once ``lines`` end."""
    groups: dict[int, float] = {}
    pending: list[tuple[float, str, str]] = []
    for raw in lines:
        parts = raw.decode("utf-8", "replace").rstrip("\n").split(" ", 3)
        try:
            if parts[0] == "?" and len(parts) == 4:
                pending.append((float(parts[1]), parts[3], "" if parts[2] == "-" else parts[2]))
            elif parts[0] == "+" and pending:
                group, deadline = int(parts[1]), pending.pop(0)[0]
                if group > 0:  # (0: it could not start)
                    groups[group] = deadline
            elif parts[0] == "-":
                groups.pop(int(parts[1]), None)
        except ValueError:
            continue
    return groups, pending


def lines_of(fd: int, pause_s: float = PAUSE_S) -> Iterator[bytes]:
    """The lines on ``fd`` until its end, read at most once every ``pause_s``: while it sleeps,
    a line the loop writes waits in the pipe and wakes no one (a run loop says three lines a
    run; waking for each cost it more than the run's ``true``). What it is told matters only
    once the loop is gone, seconds later. The pause ends early when the loop closes the pipe
    (asked for no event but the hang-up, which is always reported): a loop that ends waits for
    its watchdog's exit, not for its nap."""
    rest = b""
    hangup = select.poll()
    hangup.register(fd, 0)
    while True:
        data = os.read(fd, 1 << 16)
        if not data:
            if rest:
                yield rest
            return
        *whole, rest = (rest + data).split(b"\n")
        for line in whole:
            yield line + b"\n"
        hangup.poll(pause_s * 1000)


def end(groups: dict[int, float], pending: list[tuple[float, str, str]]) -> None:
    """The loop is gone: end each group by its deadline, SIGTERM then SIGKILL."""
    if pending:
        from control_room import lineage  # only when the loop died between a start and its word

        for deadline, room, task in pending:
            for group in lineage.groups_of_run(room, task) if room and task else ():
                groups.setdefault(group, deadline)
    for group, deadline in sorted(groups.items(), key=lambda g: g[1]):
        time.sleep(max(0.0, deadline + GRACE_S - time.monotonic()))
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signal.SIGTERM)
    if groups:
        time.sleep(KILL_S)
    for group in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signal.SIGKILL)


def main() -> None:
    for sig in (signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    end(*watch(lines_of(sys.stdin.fileno())))


if __name__ == "__main__":
    main()
