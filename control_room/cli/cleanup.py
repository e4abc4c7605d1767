"""control-room cleanup"""

from __future__ import annotations

import time

import click

from control_room.cli.common import current_room, echo, echo_json, json_option, person_only, room_option
from control_room.dispatch.merge import sweep
from control_room.room import retention
from control_room.room import settings as settings_file
from control_room.room.layout import Room
from control_room.room.retention import Item


def _line(room: Room, verb: str, item: Item) -> str:
    size = retention.size_text(item.size)
    return f"{verb} {item.where(room)} ({retention.NOUNS[item.kind]}, {size}): {item.why}"


def _json(room: Room, item: Item) -> dict[str, object]:
    return {
        "path": item.where(room),
        "kind": item.kind,
        "task": item.task,
        "state": item.state,
        "bytes": item.size,
        "changed": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(item.changed)),
        "why": item.why,
    }


@click.command()
@room_option
@click.option("--dry-run", is_flag=True, help="List what would go and why; change nothing.")
@json_option
@person_only
def cleanup(dry_run: bool, as_json: bool) -> None:
    """Remove finished tasks' results, and finished routes' worktrees, past CONTROL.md
    retention_days, or while the disk is low.

    Only results folders, run-K archives and outbox snapshots of done, cancelled or rejected
    tasks that are not pinned; never a task file, never a queued, running or parked task's.
    With repo: set, also worktrees no queued, running, passed, parked or to-test task needs;
    never one with uncommitted changes (listed as kept, with why).
    """
    room = current_room()
    settings_file.load(room)  # a broken CONTROL.md fails closed before anything is listed
    planned = sweep.plan(room)
    verb = "would remove" if dry_run else "removed"
    if dry_run:
        gone = planned.items
    else:
        said = None if as_json else (lambda i: echo(_line(room, verb, i)))
        gone = sweep.clean(room, planned.items, on_removed=said)
    if as_json:
        echo_json(
            {
                "dry_run": dry_run,
                "items": [_json(room, i) for i in gone],
                "kept": [_json(room, i) for i in planned.kept],
                "worktrees_note": planned.note,
                "bytes": sum(i.size for i in gone),
                "summary": retention.summary(gone, verb),
            }
        )
        return
    if dry_run:
        for item in gone:
            echo(_line(room, verb, item))
    for item in planned.kept:
        echo(_line(room, "kept", item))
    if planned.note is not None:
        echo(f"worktrees: {planned.note}")
    echo(retention.summary(gone, verb))
