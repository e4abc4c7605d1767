"""control-room status"""

from __future__ import annotations

import click

from control_room.cli.common import current_room, echo, echo_json, json_option, room_option
from control_room.views.status import gather, render


@click.command()
@room_option
@json_option
def status(as_json: bool) -> None:
    """The room on one screen: STOP, tasks and why queued ones wait, routes, spend, findings,
    latest events."""
    data = gather(current_room())
    if as_json:
        echo_json(data)
    else:
        echo(render(data))
