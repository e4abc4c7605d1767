"""control-room sync"""

from __future__ import annotations

import click

from control_room.cli.common import current_room, echo, person_only, room_option
from control_room.errors import InvalidError
from control_room.store.files import atomic_write


@click.command()
@room_option
@click.option(
    "--host",
    metavar="NAME",
    help="Set this clone's host id first (kept in control-room/.host, never shared); "
    "every clone of a shared room needs its own.",
)
@person_only
def sync(host: str | None) -> None:
    """Share the room through CONTROL.md `remote:`: commit, fetch, merge, push.

    \b
    What this machine changed is committed; the remote's branch is merged (LEDGER.md by
    event id, the views by their own drivers, any other file both sides changed keeps the
    remote's version, with a sync-conflict ledger line); the branch is pushed, and the
    claims of tasks that finished here end with it. A cycle does the same when it starts
    and ends. Exit 17 when the remote cannot be reached. See docs/many-machines.md.
    """
    from control_room.dispatch.shared import sharing  # git and the dispatcher: only here
    from control_room.ledger.write import HOST_FILE, cell_safe, writer_name  # the engine: only when run
    from control_room.room import gitmerge  # likewise
    from control_room.room import settings as settings_file  # likewise

    room = current_room()
    if host is not None:
        if cell_safe(host) != host:
            raise click.BadParameter(
                f"{host!r}: a host id is letters, digits, '.', '_' and '-' (64 at most)", param_hint="--host"
            )
        atomic_write(room.cr / HOST_FILE, host + "\n")
        echo(f"host id: {host} (control-room/{HOST_FILE})")
        if (writer := writer_name(room.cr)) != host:  # CONTROL_ROOM_WRITER comes first
            echo(f"  but CONTROL_ROOM_WRITER is set here: while it is, this shell writes as {writer}")
    settings = settings_file.load(room)
    share = sharing.shared(room, settings)
    if share is None:
        raise InvalidError(
            f"{room.control} sets no remote: add `remote: origin` (or a URL) to share this room "
            "(docs/many-machines.md)"
        )
    gitmerge.register(room.root)  # so a person's own `git pull` merges the ledger too
    done = share.sync(why="control-room sync", views_alone=True)
    for line in done.said:
        echo(line)
    what = ["merged new work" if done.merged else "nothing new to merge"]
    what.append("pushed" if done.pushed else "nothing to push")
    echo(f"synced {share.branch} with {share.remote} as {share.host}: {', '.join(what)}")
