"""control-room merge-driver routes / view"""

from __future__ import annotations

from pathlib import Path

import click

from control_room.knowledge.routes_merge import merge_files as merge_routes
from control_room.views.merge import merge_files as merge_view

_FILE = click.Path(path_type=Path, dir_okay=False)


@click.group("merge-driver")
def merge_driver() -> None:
    """git's merge drivers for ROUTES.md and the views (LEDGER.md's is `ledger merge`).

    `init` registers them in the room's git repository; git runs them when a pull or a merge
    finds both sides changed the file. Each writes the result into OURS and exits 0: they never
    leave a conflict (docs/many-machines.md).
    """


@merge_driver.command()
@click.argument("base", type=_FILE)
@click.argument("ours", type=_FILE)
@click.argument("theirs", type=_FILE)
def routes(base: Path, ours: Path, theirs: Path) -> None:
    """ROUTES.md, row by row keyed by route: hand edits of either side kept (OURS's on a tie).

    Rows added on either side are kept, a row removed on one side and not edited on the other
    goes, the cycle's cells come from the side with more attempts (`route recount` redoes
    them from the ledger), the prose around the table is merged three-way. Registered as
    `control-room-routes` (docs/routes.md, "Merging ROUTES.md").

    \b
    Example (what git runs):
      control-room merge-driver routes %O %A %B
    """
    merge_routes(base, ours, theirs)


@merge_driver.command()
@click.argument("base", type=_FILE)
@click.argument("ours", type=_FILE)
@click.argument("theirs", type=_FILE)
@click.argument("path", required=False, default="")
def view(base: Path, ours: Path, theirs: Path, path: str) -> None:
    """CURRENT_CONTEXT.md and DIGEST.md: DIGEST.md and the auto block are OURS's, the part
    people write is merged three-way (all of OURS where both sides' edits collide).

    PATH (git's %P) names the file merged; without it, a file with no auto block is taken as
    generated. Registered as `control-room-view`.

    \b
    Example (what git runs):
      control-room merge-driver view %O %A %B %P
    """
    merge_view(base, ours, theirs, path)
