"""Registering control-room's git merge drivers: LEDGER.md, ROUTES.md and the views.

``init`` writes one line per file into ``control-room/.gitattributes`` (versioned, so every
clone has them):

    LEDGER.md merge=control-room-ledger
    ROUTES.md merge=control-room-routes
    CURRENT_CONTEXT.md merge=control-room-view
    DIGEST.md merge=control-room-view

The drivers themselves live in the repository's config, which git never clones, so each clone
registers them by running ``control-room init`` once. git run on a repository whose config lacks
a driver falls back to its text merge (conflict markers where both sides changed the file),
which is why ``init`` registers them whenever it can.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

Git = Callable[..., tuple[int, str]]  # git's arguments -> (exit code, stdout stripped)


class Driver(NamedTuple):
    name: str  # the driver's name in .gitattributes and in the git config
    files: tuple[str, ...]  # the files of control-room/ it merges
    title: str  # merge.<name>.name: what git shows
    args: str  # after the control-room executable: the sub-command and git's placeholders


DRIVERS = (
    Driver(
        "control-room-ledger",
        ("LEDGER.md",),
        "control-room ledger: every line of both sides once, by event id",
        "ledger merge %O %A %B",  # the spelling rooms registered first: kept
    ),
    Driver(
        "control-room-routes",
        ("ROUTES.md",),
        "control-room routes: row by row, keyed by route",
        "merge-driver routes %O %A %B",
    ),
    Driver(
        "control-room-view",
        ("CURRENT_CONTEXT.md", "DIGEST.md"),
        "control-room views: the auto block and DIGEST.md ours, the people's part three-way",
        "merge-driver view %O %A %B %P",
    ),
)
DRIVER = DRIVERS[0].name  # the ledger's


def attributes() -> str:
    """The lines of ``control-room/.gitattributes`` that name the drivers."""
    return "".join(f"{f} merge={d.name}\n" for d in DRIVERS for f in d.files)


def command(driver: Driver) -> str:
    """The driver's command line: this control-room, by absolute path (git runs it from the
    repository's top, with any PATH)."""
    argv0 = Path(sys.argv[0])
    if argv0.name == "control-room" and argv0.is_file():
        exe = [str(argv0.absolute())]
    elif found := shutil.which("control-room"):
        exe = [str(Path(found).absolute())]
    else:
        exe = [sys.executable, "-m", "control_room"]
    return " ".join(shlex.quote(part) for part in exe) + " " + driver.args


def config_args() -> list[str]:
    """Every driver as ``git -c`` options, for a merge control-room runs itself (``sync``): it
    needs no registration in the clone's config."""
    out = []
    for d in DRIVERS:
        out += ["-c", f"merge.{d.name}.name={d.title}", "-c", f"merge.{d.name}.driver={command(d)}"]
    return out


def _git(root: Path) -> tuple[Git, str] | None:
    """(a git runner for ``root``, the work tree's top); None when git is missing or ``root``
    is in no work tree."""
    from control_room import git as runner  # subprocess is heavy: only init and doctor pay for it
    from control_room import proc  # with git, just above

    if proc.which("git") is None:
        return None

    def git(*args: str) -> tuple[int, str]:
        rc, out, _ = runner.run(root, *args)
        return rc, out.strip()

    rc, inside = git("rev-parse", "--is-inside-work-tree")
    if rc != 0 or inside != "true":
        return None
    return git, git("rev-parse", "--show-toplevel")[1]


def register(root: Path, *, dry_run: bool = False) -> list[str]:
    """Register every driver in the config of the git work tree holding ``root``; what was
    done, one line per driver; none when git is missing or ``root`` is in no work tree.
    Idempotent."""
    found = _git(root)
    if found is None:
        return []
    git, top = found
    out = []
    for driver in DRIVERS:
        name = driver.name
        want = {f"merge.{name}.name": driver.title, f"merge.{name}.driver": command(driver)}
        have = {key: git("config", "--local", "--get", key)[1] for key in want}
        if have == want:
            out.append(f"kept  git merge driver {name} (registered already in {top})")
            continue
        if dry_run:
            out.append(f"would register  git merge driver {name} in {top}")
            continue
        codes = [git("config", "--local", key, value)[0] for key, value in want.items()]
        bad = next((rc for rc in codes if rc != 0), 0)
        if bad:
            out.append(f"could not register  git merge driver {name} in {top} (git config exit {bad})")
        else:
            out.append(f"registered  git merge driver {name} in {top}: {want[f'merge.{name}.driver']}")
    return out


def missing(root: Path) -> list[str] | None:
    """The drivers this clone's git config lacks (any command line counts as there); None when
    git is missing or ``root`` is in no work tree (nothing to merge)."""
    found = _git(root)
    if found is None:
        return None
    git = found[0]
    return [d.name for d in DRIVERS if git("config", "--get", f"merge.{d.name}.driver")[0] != 0]


def registered(root: Path) -> bool | None:
    """Whether this clone's git config has every driver; None when git is missing or ``root``
    is in no work tree."""
    lacking = missing(root)
    return None if lacking is None else not lacking
