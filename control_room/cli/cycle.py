"""control-room cycle / run"""

from __future__ import annotations

import contextlib
import functools
import sys
import time
from collections.abc import Callable
from pathlib import Path

import click

from control_room import errors, interrupt
from control_room.cli.common import current_room, refresh_views, room_option
from control_room.dispatch.cycle import cycle as run_cycle
from control_room.room.layout import Room
from control_room.timeutil import now_iso, parse_duration


@click.command()
@room_option
@click.option(
    "--log",
    "log",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Append each line to this file, after its UTC time, instead of printing it (for a scheduler).",
)
def cycle(log: Path | None) -> None:
    """Run one cycle: take one ready task from the queue, run it, validate it, write it down.

    \b
    Exit codes: 0 nothing to do, 10 passed, 11 failed, 12 stopped, 13 busy,
    3 no room, 14 adapter unavailable, 15 room invalid (nothing claimed),
    130/143/129 interrupted by SIGINT/SIGTERM/SIGHUP (the task back in the queue).
    See docs/exit-codes.md.
    """
    say = click.echo if log is None else functools.partial(_append, log)
    room = current_room()
    with interrupt.handled():
        try:
            result = run_cycle(room, say=say)
        except interrupt.Interrupted as exc:
            _last_word(str(exc))
            sys.exit(exc.exit_code)
    say(result.message)
    sys.exit(result.code)


def _append(log: Path, line: str) -> None:
    """``cycle --log``: one line of the cycle's output, after its time (a stand-in until the
    lead's version merges)."""
    with open(log, "a", encoding="utf-8") as f:
        f.write(f"{now_iso()}  {line}\n")


@click.command()
@room_option
@click.option(
    "--every",
    default="30m",
    show_default=True,
    help="Time between cycle starts: 90s, 30m, 1h; 0 runs cycles back to back.",
)
@click.option("--cycles", type=click.IntRange(min=1), help="Stop after this many rounds of cycles.")
@click.option(
    "--parallel",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Cycles at once, each its own process and slot (at most CONTROL.md max_parallel).",
)
def run(every: str, cycles: int | None, parallel: int) -> None:
    """Run cycles in the foreground until STOP, Ctrl-C or --cycles.

    One line per cycle; a countdown between cycles on a terminal. Ctrl-C, SIGTERM or SIGHUP
    ends the running agent's process group, puts its task back in the queue without using a
    round, and exits 130, 143 or 129. With --parallel N, N cycles run at once each time (up to
    max_parallel), and a signal reaches every one of them. For people without cron: see
    `control-room schedule`.
    """
    try:
        period = parse_duration(every, zero=True)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--every") from None
    room = current_room()
    one_round = _in_process if parallel == 1 else _in_parallel(room, parallel)
    tty = sys.stdout.isatty()
    done = 0
    with interrupt.handled():
        try:
            while True:
                started = time.monotonic()
                done += 1
                codes = one_round(room, done)
                for code in (errors.STOPPED, errors.ROOM_INVALID):
                    if code in codes:
                        sys.exit(code)
                if cycles is not None and done >= cycles:
                    return
                _wait(room, started + period, tty)
                if room.stopped():
                    click.echo(f"{now_iso()}  stopped: {room.stop} exists")
                    sys.exit(errors.STOPPED)
        except interrupt.Interrupted as exc:
            for line in exc.said:  # what the parallel cycles said as they stopped
                _last_word(f"{now_iso()}  cycle {done}  {line}")
            _last_word(("\n" if tty else "") + f"{now_iso()}  {exc}")
            sys.exit(exc.exit_code)


def _in_process(room: Room, done: int) -> list[int]:
    """One cycle in this process; its exit code."""
    say = functools.partial(_say, done)
    result = run_cycle(room, say=say)
    refresh_views()  # the next cycle's prompt reads CURRENT_CONTEXT.md and DIGEST.md
    say(result.message)
    return [result.code]


def _in_parallel(room: Room, parallel: int) -> Callable[[Room, int], list[int]]:
    """Cycles at once (``parallel``, capped at max_parallel), each a `control-room cycle`
    process of its own; their lines as they end, numbered ``cycle N.k``; their exit codes."""
    from control_room import proc  # subprocess: only when cycles run in parallel
    from control_room.room import settings as settings_file  # likewise

    n = min(parallel, settings_file.load(room).max_parallel)
    argv = [sys.executable, "-m", "control_room", "--room", str(room.root), "cycle"]

    def one_round(room: Room, done: int) -> list[int]:
        codes = []
        for k, (code, out, err) in enumerate(proc.run_all([argv] * n, cwd=room.root), start=1):
            for line in (out + err).splitlines():
                click.echo(f"{now_iso()}  cycle {done}.{k}  {line}")
            codes.append(code)
        refresh_views()
        return codes

    return one_round


def _last_word(line: str) -> None:
    """Say why we stop, on stderr; after SIGHUP the terminal may be gone, and then so be it."""
    with contextlib.suppress(OSError):
        click.echo(line, err=True)


def _say(n: int, line: str) -> None:
    click.echo(f"{now_iso()}  cycle {n}  {line}")


def _wait(room: Room, until: float, tty: bool) -> None:
    while (left := until - time.monotonic()) > 0:
        if room.stopped():
            break
        if tty:
            click.echo(f"\rnext cycle in {int(left) // 60:02d}:{int(left) % 60:02d} ", nl=False)
        time.sleep(min(1.0, left))
    if tty:
        click.echo("\r" + " " * 24 + "\r", nl=False)
