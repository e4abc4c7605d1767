"""control-room graveyard list / show"""

from __future__ import annotations

import click

from control_room.cli.common import current_room, echo, echo_json, json_option, room_option
from control_room.errors import NotFoundError
from control_room.knowledge import graveyard as g
from control_room.store.files import read_text


@click.group(invoke_without_command=True)
@room_option
@click.pass_context
def graveyard(ctx: click.Context) -> None:
    """The tombstones of killed routes (default: list)."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_graves)


@graveyard.command("list")
@room_option
@json_option
def list_graves(as_json: bool) -> None:
    """Every tombstone: route, state, when it was killed, the verdict."""
    stones = g.tombstones(current_room())
    if as_json:
        echo_json(stones)
        return
    if not stones:
        echo("the graveyard is empty")
    for t in stones:
        echo(
            f"{t['candidate']:<24} {t.get('state', '?')!s:<9} {str(t.get('killed_at', ''))[:10]}  "
            f"{t.get('verdict', t.get('problem', ''))}"
        )


@graveyard.command("show")
@room_option
@click.argument("route_id", metavar="ID")
def show_grave(route_id: str) -> None:
    """Print a tombstone."""
    p = g.path(current_room(), route_id)
    if not p.exists():
        raise NotFoundError(f"route {route_id} has no tombstone (graveyard/{route_id}.md)")
    echo(read_text(p), nl=False)
