"""control-room schedule"""

from __future__ import annotations

import click

from control_room.cli.common import current_room, room_option
from control_room.dispatch import schedule as sched
from control_room.timeutil import parse_duration


@click.command()
@room_option
@click.option("--cron", is_flag=True, help="Print a crontab line.")
@click.option("--launchd", is_flag=True, help="Print a launchd plist (macOS).")
@click.option("--every", default="30m", show_default=True, help="How often a cycle fires: 5m, 30m, 1h.")
def schedule(cron: bool, launchd: bool, every: str) -> None:
    """Print a ready schedule entry that fires one cycle of this room every so often.

    \b
    cron:     control-room schedule --cron --every 30m   (add it with `crontab -e`)
    launchd:  control-room schedule --launchd > ~/Library/LaunchAgents/NAME.plist
              then `launchctl load ~/Library/LaunchAgents/NAME.plist`
    Output goes to control-room/cycle.log in the room. Give one of --cron and --launchd: each
    prints one entry, ready to save as it is.
    """
    if cron == launchd:
        raise click.UsageError(
            "say which scheduler: --cron or --launchd"
            if not cron
            else "--cron and --launchd print different entries: give one, and run again for the other"
        )
    try:
        seconds = parse_duration(every)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--every") from None
    room = current_room()
    if cron:
        click.echo(sched.cron_entry(room, seconds), nl=False)
    else:
        click.echo(sched.launchd_plist(room, seconds).decode("utf-8"), nl=False)
        label = sched.launchd_label(room)
        click.echo(
            f"# save as ~/Library/LaunchAgents/{label}.plist, then: "
            f"launchctl load ~/Library/LaunchAgents/{label}.plist",
            err=True,
        )
