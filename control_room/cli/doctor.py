"""control-room doctor"""

from __future__ import annotations

import sys

import click

from control_room import errors
from control_room.cli.common import current_room, echo, echo_json, json_option, room_option
from control_room.dispatch.doctor import checks as doctor_lib
from control_room.timeutil import parse_duration


@click.command()
@room_option
@json_option
@click.option("--fix", is_flag=True, help="Repair what is safe (each repair logged), then check again.")
@click.option("--check", "hello", is_flag=True, help="Also say hello through each adapter (one short turn).")
@click.option(
    "--timeout", default="60s", show_default=True, help="Time limit of each hello (with --check): 30s, 2m."
)
def doctor(as_json: bool, fix: bool, hello: bool, timeout: str) -> None:
    """Check the room: its folders, CONTROL.md, the ledger, dead claims, rejected files, each
    adapter it names, git, the target repo and its worktrees, the free disk.

    One line per finding, OK, WARN or FAIL, with the fix. --fix repairs only what is safe:
    missing folders, the ledger's header, dead claims (as a cycle recovers them), dead worktrees
    (git worktree prune); one ledger line each, then the repaired checks run again. Exit 15 if
    any check says FAIL.
    """
    try:
        limit = parse_duration(timeout)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--timeout") from None
    room = current_room()
    say = None if as_json else (lambda line: echo(f"fixed {line}"))
    found = doctor_lib.diagnose(room, fix=fix, hello=hello, timeout_s=limit, say=say)
    if as_json:
        echo_json([f.as_json() for f in found.findings])
    else:
        for f in found.findings:
            echo(f.line())
    if found.failed:
        sys.exit(errors.ROOM_INVALID)
