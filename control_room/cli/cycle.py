"""control-room cycle / run"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable
from pathlib import Path

import click

from control_room import errors, interrupt, proc, reaper
from control_room.cli.common import current_room, echo, notify_people, person_only, refresh_views, room_option
from control_room.dispatch.run.cycle import cycle as run_cycle
from control_room.ledger import follow
from control_room.room import settings as settings_file
from control_room.room.layout import Room
from control_room.store.files import append_lines
from control_room.timeutil import now_iso, parse_duration


@click.command()
@room_option
@click.option(
    "--log",
    "log",
    type=click.Path(dir_okay=False),
    help="Append each line to this file after its UTC time, instead of printing it (for a scheduler: "
    "an error is also said on stderr).",
)
@person_only
def cycle(log: str | None) -> None:
    """Run one cycle: take one ready task from the queue, run it, validate it, write it down.

    \b
    Exit codes: 0 nothing to do, 10 passed, 11 failed, 12 stopped, 13 busy,
    3 no room, 14 adapter unavailable, 15 room invalid (nothing claimed),
    17 offline (a shared room's remote cannot be reached: nothing claimed),
    130/143/129 interrupted by SIGINT/SIGTERM/SIGHUP (the task back in the queue).
    See docs/exit-codes.md.
    """
    room = current_room()
    tell = _Teller(Path(log).absolute() if log else None)
    with interrupt.handled():
        try:
            result = run_cycle(room, say=tell.say, progress=tell.progress)
        except interrupt.Interrupted as exc:
            tell.last_word(str(exc))
            sys.exit(exc.exit_code)
        except errors.ControlRoomError as exc:
            tell.log(f"Error: {exc}")  # the log says it too; the edge prints it and exits
            raise
    refresh_views()
    if result.code != errors.OFFLINE:
        publish(room, tell.say)
    tell.say(result.message)
    sys.exit(result.code)


class _Teller:
    """Where a cycle's lines go: stdout, or (``--log``) a log file with timestamps instead, so
    that cron mails only errors (the edge says those on stderr too); on a terminal, one live
    line while the agent runs (``progress``), cleared before any other."""

    def __init__(self, log: Path | None, prefix: str = "") -> None:
        self.log_path, self.prefix = log, prefix
        self.live = _LiveLine() if sys.stdout.isatty() else None

    def log(self, line: str) -> None:
        if self.log_path is not None:
            append_lines(self.log_path, [f"{now_iso()}  {self.prefix}{line}"])

    def say(self, line: str) -> None:
        if self.log_path is not None:
            self.log(line)
            return
        if self.live is not None:
            self.live.clear()
        echo(line)

    def last_word(self, line: str) -> None:
        if self.live is not None:
            self.live.clear()
        _last_word(line)
        self.log(line)

    def progress(self, task: str, adapter: str, elapsed: float, limit: float, nbytes: int) -> None:
        if self.live is not None:
            self.live.show(task, adapter, elapsed, limit, nbytes)


class _LiveLine:
    """One line on the terminal, rewritten in place (at most 4 times a second)."""

    def __init__(self) -> None:
        self.shown, self.at = False, 0.0

    def show(self, task: str, adapter: str, elapsed: float, limit: float, nbytes: int) -> None:
        now = time.monotonic()
        if now - self.at < 0.25:
            return
        self.at = now
        size = f"{nbytes / 1024:.1f} KiB" if nbytes >= 1024 else f"{nbytes} B"
        text = (
            f"{task}  {adapter}  {elapsed:.0f}s / {limit:.0f}s  output {size}  "
            "(Ctrl-C to interrupt, `control-room stop` to halt all)"
        )
        import shutil  # a terminal's only: ~7 M instructions (bz2, lzma) no cron run needs

        width = shutil.get_terminal_size((100, 20)).columns - 1
        sys.stdout.write("\r\x1b[2K" + text[:width])
        sys.stdout.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            sys.stdout.write("\r\x1b[2K")
            sys.stdout.flush()
            self.shown = False


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
@person_only
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
    # one watchdog for all the loop's runs (else a `timeout` process a run: cheaper for one
    # cycle, as cron's `run --cycles 1`, than a Python process); with --parallel, each cycle is a
    # process of its own, under `timeout`
    kept = reaper.watch_kept() if parallel == 1 and cycles != 1 else contextlib.nullcontext()
    with kept, interrupt.handled():
        try:
            with follow.kept():  # the ledger's folds stay in memory from one cycle to the next
                while True:
                    started = time.monotonic()
                    done += 1
                    codes = one_round(room, done, started + period)
                    for code in (errors.STOPPED, errors.ROOM_INVALID):
                        if code in codes:
                            sys.exit(code)
                    if cycles is not None and done >= cycles:
                        return
                    _wait(room, started + period, tty)
                    if room.stopped():
                        echo(f"{now_iso()}  stopped: {room.stop} exists")
                        sys.exit(errors.STOPPED)
        except interrupt.Interrupted as exc:
            for line in exc.said:  # what the parallel cycles said as they stopped
                _last_word(f"{now_iso()}  cycle {done}  {line}")
            _last_word(("\n" if tty else "") + f"{now_iso()}  {exc}")
            sys.exit(exc.exit_code)


def _in_process(room: Room, done: int, next_at: float) -> list[int]:
    """One cycle in this process; its exit code. The views are refreshed after it (the next
    cycle's prompt reads CURRENT_CONTEXT.md and DIGEST.md), at most once a second
    (``VIEWS_EVERY_S``) while a task ran and the next cycle starts at once (``--every 0``): a loop
    that waits, or finds nothing to do, refreshes them before it waits, and its end does."""
    live = _LiveLine() if sys.stdout.isatty() else None

    def say(line: str) -> None:
        if live is not None:
            live.clear()
        _say(done, line)

    result = run_cycle(room, say=say, progress=live.show if live is not None else None)
    ran = result.code in (errors.PASSED, errors.FAILED)
    refresh_views(soon=ran and time.monotonic() >= next_at)
    if result.code != errors.OFFLINE:
        publish(room, say)
    notify_people()  # a long run tells a person as it goes, not when it ends
    say(result.message)
    return [result.code]


def _in_parallel(room: Room, parallel: int) -> Callable[[Room, int, float], list[int]]:
    """Cycles at once (``parallel``, capped at max_parallel), each a `control-room cycle`
    process of its own; their lines as they end, numbered ``cycle N.k``; their exit codes."""
    n = min(parallel, settings_file.load(room).max_parallel)
    argv = [sys.executable, "-m", "control_room", "--room", str(room.root), "cycle"]

    def one_round(room: Room, done: int, _next_at: float) -> list[int]:
        codes = []
        for k, (code, out, err) in enumerate(proc.run_all([argv] * n, cwd=room.root), start=1):
            for line in (out + err).splitlines():
                echo(f"{now_iso()}  cycle {done}.{k}  {line}")
            codes.append(code)
        refresh_views()
        publish(room, lambda line: echo(f"{now_iso()}  cycle {done}  {line}"))
        notify_people()
        return codes

    return one_round


def publish(room: Room, say: Callable[[str], None]) -> None:
    """The edge of a cycle in a shared room (CONTROL.md ``remote:``), after the views: commit
    and push what it did, finishing its claim. Offline, what it did stays committed here and
    the next sync pushes it."""
    if not settings_file.mentions(room, "remote"):
        return
    from control_room.dispatch.shared import sharing, sync  # a shared room's only: git and the remote

    try:
        share = sharing.shared(room, settings_file.load(room))
        if share is None:
            return
        done = share.sync(why="a cycle ended", optimistic=True, tries=sync.CYCLE_TRIES)
    except errors.OfflineError as exc:
        say(f"not pushed: {exc}; the next sync pushes it")
        return
    except errors.ControlRoomError as exc:
        say(f"not pushed: {exc}")
        return
    for line in done.said:
        say(line)
    if done.merged:
        refresh_views()


def _last_word(line: str) -> None:
    """Say why we stop, on stderr; after SIGHUP the terminal may be gone, and then so be it."""
    with contextlib.suppress(OSError):
        echo(line, err=True)


def _say(n: int, line: str) -> None:
    echo(f"{now_iso()}  cycle {n}  {line}")


def _wait(room: Room, until: float, tty: bool) -> None:
    while (left := until - time.monotonic()) > 0:
        if room.stopped():
            break
        if tty:
            click.echo(f"\rnext cycle in {int(left) // 60:02d}:{int(left) % 60:02d} ", nl=False)
        time.sleep(min(1.0, left))
    if tty:
        click.echo("\r" + " " * 24 + "\r", nl=False)
