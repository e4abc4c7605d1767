"""control-room stop / resume"""

from __future__ import annotations

import click

from control_room.cli.common import current_room, echo, person_only, room_option
from control_room.dispatch.person.brake import resume as do_resume
from control_room.dispatch.person.brake import stop as do_stop
from control_room.errors import InvalidError
from control_room.room.layout import Room

_EVERYWHERE = click.option(
    "--everywhere",
    is_flag=True,
    help="In a shared room (CONTROL.md remote:): also commit it and push it, so every machine "
    "does the same at its next sync.",
)


@click.command()
@room_option
@click.option("--reason", default="", help="Why, for the people and agents who find it.")
@_EVERYWHERE
def stop(reason: str, everywhere: bool) -> None:
    """Create the STOP file: every cycle halts and running agents are killed.

    STOP is checked before anything else, by its mere existence. Remove it with
    `control-room resume` (or `rm STOP`). In a shared room a STOP halts this machine
    only, at once and with no network; --everywhere halts every machine at its next sync.
    """
    room = current_room()
    if do_stop(room, reason):
        echo(f"stopped: {room.stop} exists; every cycle halts until `control-room resume`")
    else:
        echo(f"already stopped: {room.stop} exists")
    if everywhere:
        _share_stop(room, True)


@click.command()
@room_option
@_EVERYWHERE
@person_only
def resume(everywhere: bool) -> None:
    """Remove the STOP file so cycles run again."""
    room = current_room()
    if do_resume(room):
        echo("resumed: STOP removed; cycles run again")
    else:
        echo("not stopped: there is no STOP file")
    if everywhere:
        _share_stop(room, False)


def _share_stop(room: Room, stopped: bool) -> None:
    from control_room.dispatch.shared import sharing  # git: only for --everywhere
    from control_room.room import settings as settings_file  # likewise

    share = sharing.shared(room, settings_file.load(room))
    if share is None:
        raise InvalidError(
            f"{room.control} sets no remote: --everywhere needs a shared room (docs/many-machines.md)"
        )
    share.publish_stop(stopped)
    share.sync(why="STOP everywhere" if stopped else "resume everywhere", views_alone=True)
    where = f"{share.remote}/{share.branch}"
    echo(f"pushed to {where}: every machine {'halts' if stopped else 'resumes'} at its next sync")
