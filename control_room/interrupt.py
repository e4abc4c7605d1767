"""The operator's signals: Ctrl-C (SIGINT), SIGTERM and SIGHUP, as one exception.

``cycle`` and ``run`` turn the three signals into ``Interrupted`` (``handled``). Whoever holds
a child process ends its whole group before letting it pass (``proc.run``); the cycle puts its
claimed task back in the queue without using a round and writes one ``interrupted`` line.

A few steps must not be cut in half (a rename and its claim file; a run's results, its ledger
line and its move): they run under ``deferred``, which holds the signals back until the step
is over and then lets the first one through.

A child forked to read and cache for a command (a first scan's share of the queue, a first
run's ledger fold) comes from ``fork``: it starts with the default actions, so a signal ends
it, and never raises ``Interrupted`` in a copy of the command.

``Interrupted`` derives from ``BaseException``, like ``KeyboardInterrupt``, so that no
``except Exception`` on the way swallows it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from types import FrameType

from control_room import errors

# signal -> the exit code it ends a command with (128 + the signal's number)
CODES: dict[int, int] = {signal.SIGINT: errors.INTERRUPTED, signal.SIGTERM: errors.TERMINATED}
if hasattr(signal, "SIGHUP"):  # POSIX
    CODES[signal.SIGHUP] = errors.HANGUP
SIGNALS = tuple(CODES)


class Interrupted(BaseException):
    """The operator (or the system) asked us to stop: SIGINT, SIGTERM or SIGHUP."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        self.name = signal.Signals(signum).name
        self.exit_code = CODES.get(signum, 128 + signum)
        self.outcome = ""  # what the interrupted command did about it, said by whoever knows
        self.said: list[str] = []  # what child processes said as they ended (``proc.run_all``)
        super().__init__(f"interrupted by {self.name}")

    def __str__(self) -> str:
        return f"interrupted by {self.name}" + (f": {self.outcome}" if self.outcome else "")


def _raise(signum: int, frame: FrameType | None) -> None:
    raise Interrupted(signum)


@contextlib.contextmanager
def handled() -> Iterator[None]:
    """While inside, the three signals raise ``Interrupted``; the old handlers come back after."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can be set from the main thread only
        return
    old = {s: signal.signal(s, _raise) for s in SIGNALS}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Hold the signals back while inside; one that came meanwhile is delivered on leaving."""
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def fork() -> int:
    """``os.fork`` with the three signals held back across it: the child starts with their
    default actions, so one ends it at once and it never runs the parent's handlers (which
    would raise ``Interrupted`` in a copy of the cycle); the parent's arrive after the fork.
    For children that only read and cache, then ``os._exit``: the caller does the work itself
    on ``OSError``, which comes as from ``os.fork``, and where no such child is forked: a
    system without ``fork``, or a process with other threads (the child would inherit the
    locks they hold, and could hang on one)."""
    if not hasattr(os, "fork") or threading.active_count() > 1:
        raise OSError("no child forked: no fork here, or other threads run")
    with deferred():
        pid = os.fork()
        if pid == 0:
            for s in SIGNALS:
                signal.signal(s, signal.SIG_DFL)
    return pid
