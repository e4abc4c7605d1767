"""The command line, the edge of the house: thin click commands that parse, call the library
and print.

Commands are loaded lazily (``control-room status`` imports only what status needs). Library
errors (``ControlRoomError``) become one line on stderr and the error's exit code; see
``control_room.errors`` for the codes. When a command that changed a room ends, however it
ends, the room's views are refreshed (``common.refresh_views``).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from typing import Any, ClassVar

import click

from control_room import __version__
from control_room.cli.common import ROOM_KEY, fold_behind, notify_people, refresh_views
from control_room.errors import BROKEN_PIPE, IO_ERROR, ControlRoomError

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

# name -> "module:attribute"; one line per top-level command.
COMMANDS = {
    "init": "control_room.cli.init:init",
    "status": "control_room.cli.status:status",
    "stop": "control_room.cli.stop:stop",
    "resume": "control_room.cli.stop:resume",
    "task": "control_room.cli.task:task",
    "ledger": "control_room.cli.ledger:ledger",
    "cycle": "control_room.cli.cycle:cycle",
    "run": "control_room.cli.cycle:run",
    "done": "control_room.cli.decide:done",
    "approve": "control_room.cli.decide:approve",
    "schedule": "control_room.cli.schedule:schedule",
    "adapters": "control_room.cli.adapters:adapters",
    "demo": "control_room.cli.demo:demo",
    "route": "control_room.cli.route:route",
    "graveyard": "control_room.cli.graveyard:graveyard",
    "digest": "control_room.cli.findings:digest",
    "findings": "control_room.cli.findings:findings",
    "validate": "control_room.cli.validate:validate",
    "scorecard": "control_room.cli.scorecard:scorecard",
    "cleanup": "control_room.cli.cleanup:cleanup",
    "doctor": "control_room.cli.doctor:doctor",
    "integrate": "control_room.cli.integrate:integrate",
    "lever": "control_room.cli.intel:lever",
    "branch": "control_room.cli.intel:branch",
    "dashboard": "control_room.cli.dashboard:dashboard",
    "plan": "control_room.cli.plan:plan",
    "mcp": "control_room.cli.mcp:mcp",
    "sync": "control_room.cli.sync:sync",
    "merge-driver": "control_room.cli.merge_driver:merge_driver",
}


class UserError(click.ClickException):
    """A ControlRoomError on its way out: one line, its own exit code."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code  # type: ignore[misc]  # click declares it on the class


def translated(work: Callable[[], Any]) -> Any:
    """Run ``work``; a ControlRoomError or OSError leaves as one line and its exit code."""
    try:
        return work()
    except ControlRoomError as exc:
        raise UserError(str(exc), exc.exit_code) from None
    except BrokenPipeError:  # `control-room ... | head`: the reader left; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise click.exceptions.Exit(BROKEN_PIPE) from None
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        raise UserError(f"{where}{exc.strerror or exc}", IO_ERROR) from None


class Group(click.Group):
    """A click group whose commands are imported on first use."""

    lazy: ClassVar[dict[str, str]] = {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.commands or name not in self.lazy:
            return super().get_command(ctx, name)
        module, attr = self.lazy[name].split(":")
        cmd: click.Command = getattr(importlib.import_module(module), attr)
        return cmd

    def invoke(self, ctx: click.Context) -> Any:
        return translated(lambda: super(Group, self).invoke(ctx))


class Root(Group):
    """The ``control-room`` group: after the command, however it ended, the edge."""

    lazy = COMMANDS

    def invoke(self, ctx: click.Context) -> Any:
        try:
            out = super().invoke(ctx)
        except (click.exceptions.Exit, SystemExit):  # the command's own exit code
            translated(lambda: _edge(ctx))
            raise
        except BaseException:
            try:  # the command's error is what the person must see
                _edge(ctx)
            except (ControlRoomError, OSError):
                pass
            raise
        translated(lambda: _edge(ctx))
        return out


def _edge(ctx: click.Context) -> None:
    """When a command ends: the views, then the notifications (of what the views now show),
    then the background fold of a big ledger's older history, if the command left some."""
    refresh_views(ctx)
    notify_people(ctx)
    fold_behind()


@click.group(cls=Root, context_settings=CONTEXT_SETTINGS)
@click.option(
    "--room",
    metavar="DIR",
    help="The room to use (default: $CONTROL_ROOM, else this folder or its nearest parent room).",
)
@click.version_option(__version__, "-V", "--version", prog_name="control-room")
@click.pass_context
def cli(ctx: click.Context, room: str | None) -> None:
    """Markdown is the database: steer a swarm of coding agents, one bounded task per cycle.

    \b
    Start here:
      control-room init myroom      lay out a room
      control-room status           the room on one screen
      control-room task add ...     queue a task
    """
    ctx.meta[ROOM_KEY] = room


def main() -> None:
    cli(prog_name="control-room")
