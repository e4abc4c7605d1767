"""What the command modules share: finding the room, the --room and --json options, and the
edge of a command, where the views are refreshed."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

import click

from control_room.room.layout import Room, find_room

F = TypeVar("F", bound=Callable[..., Any])
ROOM_KEY = "control_room.room"
_EDGE = "control_room.edge"


def _remember_room(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value:
        ctx.meta[ROOM_KEY] = value


def room_option(f: F) -> F:
    """``--room DIR`` after the subcommand too (``control-room status --room DIR``)."""
    return click.option(
        "--room",
        metavar="DIR",
        expose_value=False,
        is_eager=True,
        callback=_remember_room,
        help="The room to use (default: $CONTROL_ROOM, else this folder or its nearest parent).",
    )(f)


def json_option(f: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")(f)


def current_room() -> Room:
    """The room this command works on; its views are refreshed when the command ends."""
    room = find_room(click.get_current_context().meta.get(ROOM_KEY))
    watch(room)
    return room


class _Edge:
    __slots__ = ("ledger_size", "room")

    def __init__(self, room: Room, ledger_size: int) -> None:
        self.room, self.ledger_size = room, ledger_size


def _size(room: Room) -> int:
    try:
        return os.stat(room.ledger).st_size
    except OSError:
        return -1


def watch(room: Room) -> None:
    """Refresh ``room``'s views at the end of this command if the command changed the room."""
    meta = click.get_current_context().meta
    if _EDGE not in meta:
        meta[_EDGE] = _Edge(room, _size(room))


def refresh_views(ctx: click.Context | None = None) -> None:
    """The edge of a command: every change to a room writes a ledger line, so a ledger that
    grew since the command started means DIGEST.md and CURRENT_CONTEXT.md are out of date."""
    meta = (ctx or click.get_current_context()).meta
    edge: _Edge | None = meta.get(_EDGE)
    if edge is None or _size(edge.room) == edge.ledger_size:
        return
    from control_room.views.refresh import refresh  # loads the engine: only once a room changed

    refresh(edge.room)
    edge.ledger_size = _size(edge.room)


def echo_json(data: Any) -> None:
    import json  # ~2 ms: only for --json

    click.echo(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False))
