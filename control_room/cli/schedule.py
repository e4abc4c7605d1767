"""control-room schedule"""

from __future__ import annotations

import json

import click

from control_room.cli.common import current_room, echo, json_option, person_only, room_option
from control_room.dispatch.schedule import entries as sched
from control_room.dispatch.schedule import install as inst
from control_room.room.layout import Room
from control_room.timeutil import parse_duration


@click.command()
@room_option
@click.option("--cron", is_flag=True, help="A crontab entry.")
@click.option("--launchd", is_flag=True, help="A launchd plist (macOS).")
@click.option("--systemd", is_flag=True, help="A systemd user service and timer (Linux).")
@click.option("--every", help="How often cycles fire: 5m, 30m, 1h.  [default: 30m]")
@click.option(
    "--parallel",
    type=click.IntRange(min=1),
    help="Cycles started at each firing, each its own slot (at most CONTROL.md max_parallel).  [default: 1]",
)
@click.option("--install", is_flag=True, help="Install the entry for this room (replacing its own, if any).")
@click.option(
    "--uninstall", is_flag=True, help="Remove what --install installed for this room, nothing else."
)
@click.option("--status", is_flag=True, help="Say what is installed for this room and when a cycle last ran.")
@json_option
@person_only
def schedule(
    cron: bool,
    launchd: bool,
    systemd: bool,
    every: str | None,
    parallel: int | None,
    install: bool,
    uninstall: bool,
    status: bool,
    as_json: bool,
) -> None:
    """Print, install or remove a schedule entry that fires cycles of this room every so often.

    \b
    control-room schedule --cron                  print the crontab block
    control-room schedule --cron --install        add it to your crontab (other lines kept)
    control-room schedule --launchd --install     ~/Library/LaunchAgents/<label>.plist, loaded
    control-room schedule --systemd --install     ~/.config/systemd/user/<name>.service + .timer
    control-room schedule --cron --uninstall      remove exactly that block
    control-room schedule --status [--json]       what is installed, when a cycle last ran
    Each firing runs `control-room --room ROOM cycle --log ROOM/control-room/cycle.log`
    (--parallel N: N of them at once). Overlap is harmless: a cycle finding every slot taken
    exits busy and changes nothing. See docs/scheduling.md.
    """
    kinds = [k for k, given in (("cron", cron), ("launchd", launchd), ("systemd", systemd)) if given]
    actions = [
        a for a, given in (("--install", install), ("--uninstall", uninstall), ("--status", status)) if given
    ]
    if len(actions) > 1:
        raise click.UsageError(f"{' and '.join(actions)} do different things: give one")
    if len(kinds) > 1:
        raise click.UsageError(
            f"{' and '.join('--' + k for k in kinds)} are different entries: give one, run again for another"
        )
    if as_json and not status:
        raise click.UsageError("--json goes with --status")
    if (uninstall or status) and (every is not None or parallel is not None):
        raise click.UsageError(
            f"--every and --parallel describe an entry to print or install: {actions[0]} takes neither"
        )
    if status:
        _status(current_room(), kinds, as_json)
        return
    if not kinds:
        raise click.UsageError("say which scheduler: --cron, --launchd or --systemd")
    kind = kinds[0]
    room = current_room()
    if uninstall:
        for line in inst.uninstall(room, kind):
            echo(line)
        return
    try:
        seconds = parse_duration(every or "30m")
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--every") from None
    n = parallel or 1
    if install:
        for line in inst.install(room, kind, seconds, n):
            echo(line)
        return
    sched.check_parallel(room, n)
    _print(room, kind, seconds, n)


def _print(room: Room, kind: str, seconds: float, parallel: int) -> None:
    if kind == "cron":
        echo(sched.cron_block(room, seconds, parallel), nl=False)
        echo("# add it with `crontab -e`, or run again with --install", err=True)
    elif kind == "launchd":
        echo(sched.launchd_plist(room, seconds, parallel).decode("utf-8"), nl=False)
        path = inst.plist_path(room)
        echo(f"# save as {path}, then: launchctl load -w {path} (or run again with --install)", err=True)
    else:
        timer = sched.systemd_timer(room, seconds, parallel)
        service_path, timer_path = inst.unit_paths(room)
        echo(f"# file: {service_path}\n{sched.systemd_service(room, parallel)}", nl=False)
        echo(f"# file: {timer_path}\n{timer}", nl=False)
        echo(
            f"# save both, then: systemctl --user daemon-reload && systemctl --user enable --now "
            f"{timer_path.name} (or run again with --install)",
            err=True,
        )


def _status(room: Room, kinds: list[str], as_json: bool) -> None:
    kinds = kinds or list(inst.KINDS)
    found = {i.kind: i for i in inst.installed(room)}
    last = inst.last_cycle(room)
    log_line = inst.last_log_line(room)
    no_crontab = "cron" in kinds and "cron" not in found and not inst.has_crontab()
    if as_json:
        doc = {
            "room": str(room.root),
            "installed": [found[k]._asdict() for k in kinds if k in found],
            "crontab_missing": no_crontab,
            "last_cycle": None
            if last is None
            else {"time": last.time, "event": last.event, "task": last.task},
            "last_log_line": log_line,
        }
        echo(json.dumps(doc, indent=2))
        return
    echo(f"schedule of {room.root}")
    for kind in kinds:
        i = found.get(kind)
        if i is not None:
            state = f"{i.where}, every {i.every}, {sched.per_firing(i.parallel)}"
        else:
            state = (
                "crontab is not on PATH: cannot tell" if kind == "cron" and no_crontab else "not installed"
            )
        echo(f"{kind:<8} {state}")
    if last is None:
        echo("last cycle: none in the ledger")
    else:
        echo(f"last cycle: {last.time} ({last.event}{' ' + last.task if last.task else ''}, from the ledger)")
    echo(f"last log line: {log_line or 'none'}")
