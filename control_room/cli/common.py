"""What the command modules share: finding the room, the --room and --json options."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from control_room.room.layout import Room, find_room

F = TypeVar("F", bound=Callable[..., Any])
_KEY = "control_room.room.layout"


def _remember_room(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value:
        ctx.meta[_KEY] = value


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
    ctx = click.get_current_context()
    return find_room(ctx.meta.get(_KEY))


def echo_json(data: Any) -> None:
    import json

    click.echo(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False))
