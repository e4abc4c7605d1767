"""control-room done / approve"""

from __future__ import annotations

import getpass

import click

from control_room.cli.common import current_room, echo, person_only, room_option
from control_room.dispatch.person.decisions import approve as do_approve
from control_room.dispatch.person.decisions import mark_done
from control_room.ledger import writer_name
from control_room.room.layout import Room


def who(by: str | None, room: Room) -> str:
    """The person deciding: ``--by``, else user@host (as the ledger names this clone)."""
    if by:
        return by
    try:
        return f"{getpass.getuser()}@{writer_name(room.cr)}"
    except Exception:
        return writer_name(room.cr)


@click.command()
@room_option
@click.argument("task_id", metavar="ID")
@click.option("--by", help="Who marks it Done (default: user@host).")
@person_only
def done(task_id: str, by: str | None) -> None:
    """Mark a passed task Done. Only a person does this: passing is not Done."""
    room = current_room()
    mark_done(room, task_id, who(by, room))
    echo(f"{task_id} marked Done")


@click.command()
@room_option
@click.argument("task_id", metavar="ID")
@click.option(
    "--gate", "gates", multiple=True, help="Approve only this gate (default: all the task's gates)."
)
@click.option("--by", help="Who approves (default: user@host).")
@person_only
def approve(task_id: str, gates: tuple[str, ...], by: str | None) -> None:
    """Approve a gated task (gpu, submit, merge, ...): writes CONTROL.md and the ledger."""
    room = current_room()
    added = do_approve(room, task_id, list(gates), who(by, room))
    if added:
        echo(f"approved {task_id}: {', '.join(added)}")
    else:
        echo(f"nothing to approve: {task_id}'s gates are approved already")
