"""control-room stop / resume"""

from __future__ import annotations

import click

from control_room.cli.common import current_room, room_option
from control_room.dispatch.brake import resume as do_resume
from control_room.dispatch.brake import stop as do_stop


@click.command()
@room_option
@click.option("--reason", default="", help="Why, for the people and agents who find it.")
def stop(reason: str) -> None:
    """Create the STOP file: every cycle halts and running agents are killed.

    STOP is checked before anything else, by its mere existence. Remove it with
    `control-room resume` (or `rm STOP`).
    """
    room = current_room()
    if do_stop(room, reason):
        click.echo(f"stopped: {room.stop} exists; every cycle halts until `control-room resume`")
    else:
        click.echo(f"already stopped: {room.stop} exists")


@click.command()
@room_option
def resume() -> None:
    """Remove the STOP file so cycles run again."""
    room = current_room()
    if do_resume(room):
        click.echo("resumed: STOP removed; cycles run again")
    else:
        click.echo("not stopped: there is no STOP file")
