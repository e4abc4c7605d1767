"""control-room integrate"""

from __future__ import annotations

import click

from control_room import errors
from control_room.cli.common import current_room, echo, person_only, room_option
from control_room.dispatch.merge import integrate as merge_queue
from control_room.room import settings as settings_file


@click.command()
@room_option
@click.argument("task_id", metavar="[ID]", required=False)
@person_only
def integrate(task_id: str | None) -> None:
    """Merge passed tasks into the base branch, one at a time, each checked again.

    For ID (else every task in swarm/passed/, oldest first): rebase its branch onto the base,
    refuse a diff outside its owns or a megafile, run its validator again after the rebase,
    fast-forward the base, move it to swarm/to-test/. A failure is a failed round. Exit 0 when
    all merged (or nothing waits), 11 when one did not, 15 when the main tree is not fit.
    """
    room = current_room()
    settings = settings_file.load(room)
    done = merge_queue.integrate(room, settings, task_id)
    if not done:
        echo("nothing to integrate: swarm/passed/ is empty")
    for result in done:
        echo(result.message)
    worst = max((r.code for r in done if r.code != errors.PASSED), default=errors.OK)
    raise SystemExit(worst)
