"""control-room init"""

from __future__ import annotations

from pathlib import Path

import click

from control_room.cli.common import echo, watch
from control_room.room.gitmerge import register
from control_room.room.layout import Room
from control_room.room.scaffold import init as do_init
from control_room.room.values import exists_already
from control_room.words import count


@click.command()
@click.argument("directory", default=".", type=click.Path(path_type=Path))
@click.option("--dry-run", is_flag=True, help="Print what would be created; write nothing.")
def init(directory: Path, dry_run: bool) -> None:
    """Lay out a room in DIRECTORY (default: here). Never overwrites a file.

    Running it again only adds what is missing, so it also repairs a room; a LEDGER.md that
    lost its table header gets it back, every line kept. Inside a git work tree it also
    registers the merge drivers of LEDGER.md, ROUTES.md and the views (`control-room-ledger`,
    `control-room-routes`, `control-room-view`) in that repository's config.

    \b
    Example:
      control-room init myroom && cd myroom && control-room status
    """
    root = directory.absolute()
    if not dry_run:
        watch(Room(root))
    created, kept, repaired = do_init(root, dry_run=dry_run)
    verb = "would create" if dry_run else "created"
    for rel in created:
        echo(f"{verb}  {rel}")
    for what in repaired:
        echo(f"{'would restore' if dry_run else 'restored'}  {what}")
    for line in register(root, dry_run=dry_run) if root.is_dir() else []:
        echo(line)
    if dry_run:
        for rel in kept:
            echo(f"{exists_already('file', rel, str(root))}: kept")
    if repaired and not created and not dry_run:
        echo(f"room repaired: {root}  (next: control-room status)")
    elif not created and not repaired:
        echo(f"nothing to do: {root} is a complete room ({count(len(kept), 'file')} kept)")
    elif not dry_run:
        echo(f"room ready: {root}  (next: cat {directory}/AGENTS.md)")
