"""control-room cycle / run"""

from __future__ import annotations

import sys
import time

import click

from control_room import errors
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
    3 no room, 4 invalid, 14 adapter unavailable (docs/exit-codes.md).
    """
    result = run_cycle(current_room())
    click.echo(result.message)
    sys.exit(result.code)


@click.command()
@room_option
@click.option("--every", default="30m", show_default=True, help="Time between cycle starts: 90s, 30m, 1h.")
@click.option("--cycles", type=click.IntRange(min=1), help="Stop after this many cycles.")
def run(every: str, cycles: int | None) -> None:
    """Run cycles in the foreground until STOP, Ctrl-C or --cycles.

    One line per cycle; a countdown between cycles on a terminal. For people without cron:
    see `control-room schedule` for cron and launchd entries.
    """
    try:
        period = parse_duration(every)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--every") from None
    room = current_room()
    tty = sys.stdout.isatty()
    done = 0
    try:
        while True:
            started = time.monotonic()
            result = run_cycle(room)
            refresh_views()  # the next cycle's prompt reads CURRENT_CONTEXT.md and DIGEST.md
            done += 1
            click.echo(f"{now_iso()}  cycle {done}  {result.message}")
            if result.code == errors.STOPPED:
                sys.exit(errors.STOPPED)
            if cycles is not None and done >= cycles:
                return
            _wait(room, started + period, tty)
            if room.stopped():
                click.echo(f"{now_iso()}  stopped: {room.stop} exists")
                sys.exit(errors.STOPPED)
    except KeyboardInterrupt:
        click.echo("\ninterrupted", err=True)
        sys.exit(errors.INTERRUPTED)


def _wait(room: Room, until: float, tty: bool) -> None:
    while (left := until - time.monotonic()) > 0:
        if room.stopped():
            break
        if tty:
            click.echo(f"\rnext cycle in {int(left) // 60:02d}:{int(left) % 60:02d} ", nl=False)
        time.sleep(min(1.0, left))
    if tty:
        click.echo("\r" + " " * 24 + "\r", nl=False)
