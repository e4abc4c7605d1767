"""control-room cycle / run"""

from __future__ import annotations

import contextlib
import functools
import sys
import time

import click

from control_room import errors, interrupt
from control_room.cli.common import current_room, refresh_views, room_option
from control_room.dispatch.cycle import cycle as run_cycle
from control_room.room.layout import Room
from control_room.timeutil import now_iso, parse_duration


@click.command()
@room_option
def cycle() -> None:
    """Run one cycle: take one ready task from the queue, run it, validate it, write it down.

    \b
    Exit codes: 0 nothing to do, 10 passed, 11 failed, 12 stopped, 13 busy,
    3 no room, 14 adapter unavailable, 15 room invalid (nothing claimed),
    130/143/129 interrupted by SIGINT/SIGTERM/SIGHUP (the task back in the queue).
    See docs/exit-codes.md.
    """
    room = current_room()
    with interrupt.handled():
        try:
            result = run_cycle(room, say=click.echo)
        except interrupt.Interrupted as exc:
            _last_word(str(exc))
            sys.exit(exc.exit_code)
    click.echo(result.message)
    sys.exit(result.code)


@click.command()
@room_option
@click.option(
    "--every",
    default="30m",
    show_default=True,
    help="Time between cycle starts: 90s, 30m, 1h; 0 runs cycles back to back.",
)
@click.option("--cycles", type=click.IntRange(min=1), help="Stop after this many cycles.")
def run(every: str, cycles: int | None) -> None:
    """Run cycles in the foreground until STOP, Ctrl-C or --cycles.

    One line per cycle; a countdown between cycles on a terminal. Ctrl-C, SIGTERM or SIGHUP
    ends the running agent's process group, puts its task back in the queue without using a
    round, and exits 130, 143 or 129. For people without cron: see `control-room schedule`.
    """
    try:
        period = parse_duration(every, zero=True)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--every") from None
    room = current_room()
    tty = sys.stdout.isatty()
    done = 0
    with interrupt.handled():
        try:
            while True:
                started = time.monotonic()
                done += 1
                say = functools.partial(_say, done)
                result = run_cycle(room, say=say)
                refresh_views()  # the next cycle's prompt reads CURRENT_CONTEXT.md and DIGEST.md
                say(result.message)
                if result.code in (errors.STOPPED, errors.ROOM_INVALID):
                    sys.exit(result.code)
                if cycles is not None and done >= cycles:
                    return
                _wait(room, started + period, tty)
                if room.stopped():
                    click.echo(f"{now_iso()}  stopped: {room.stop} exists")
                    sys.exit(errors.STOPPED)
        except interrupt.Interrupted as exc:
            _last_word(("\n" if tty else "") + f"{now_iso()}  {exc}")
            sys.exit(exc.exit_code)


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
