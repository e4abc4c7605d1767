"""Registering ``control-room ledger merge`` as the git merge driver of LEDGER.md.

``init`` writes ``LEDGER.md merge=control-room-ledger`` into ``control-room/.gitattributes``
(versioned, so every clone has it); the driver itself lives in the repository's config, which
git never clones, so each clone registers it by running ``control-room init`` once. git run on
a repository whose config lacks the driver falls back to its text merge (conflict markers when
both sides appended), which is why ``init`` registers it whenever it can.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path

DRIVER = "control-room-ledger"
NAME = "control-room ledger: every line of both sides once, by event id"


def command() -> str:
    """The driver's command line: this control-room, by absolute path (git runs it from the
    repository's top, with any PATH)."""
    argv0 = Path(sys.argv[0])
    if argv0.name == "control-room" and argv0.is_file():
        exe = [str(argv0.absolute())]
    elif found := shutil.which("control-room"):
        exe = [str(Path(found).absolute())]
    else:
        exe = [sys.executable, "-m", "control_room"]
    return " ".join(shlex.quote(part) for part in exe) + " ledger merge %O %A %B"


def config_args() -> list[str]:
    """The drivers as ``git -c`` options, for a merge control-room runs itself (``sync``): it
    needs no registration in the clone's config."""
    return ["-c", f"merge.{DRIVER}.name={NAME}", "-c", f"merge.{DRIVER}.driver={command()}"]


def register(root: Path, *, dry_run: bool = False) -> str | None:
    """Register the driver in the config of the git work tree holding ``root``; what was done,
    in one line, or None when git is missing or ``root`` is in no work tree. Idempotent."""
    from control_room import proc  # subprocess is heavy: only init pays for it

    if proc.which("git") is None:
        return None

    def git(*args: str) -> tuple[int, str]:
        rc, out, _ = proc.call(["git", "-C", str(root), *args], cwd=root)
        return rc, out.strip()

    rc, inside = git("rev-parse", "--is-inside-work-tree")
    if rc != 0 or inside != "true":
        return None
    _, top = git("rev-parse", "--show-toplevel")
    want = {f"merge.{DRIVER}.name": NAME, f"merge.{DRIVER}.driver": command()}
    have = {key: git("config", "--local", "--get", key)[1] for key in want}
    if have == want:
        return f"kept  git merge driver {DRIVER} (registered already in {top})"
    if dry_run:
        return f"would register  git merge driver {DRIVER} in {top}"
    for key, value in want.items():
        rc, _ = git("config", "--local", key, value)
        if rc != 0:
            return f"could not register  git merge driver {DRIVER} in {top} (git config exit {rc})"
    return f"registered  git merge driver {DRIVER} in {top}: {want[f'merge.{DRIVER}.driver']}"


def registered(root: Path) -> bool | None:
    """Whether this clone's git config has the driver (any command line); None when git is
    missing or ``root`` is in no work tree (nothing to merge)."""
    from control_room import proc  # subprocess: only doctor asks

    if proc.which("git") is None:
        return None
    rc, inside, _ = proc.call(["git", "-C", str(root), "rev-parse", "--is-inside-work-tree"], cwd=root)
    if rc != 0 or inside.strip() != "true":
        return None
    rc, _, _ = proc.call(["git", "-C", str(root), "config", "--get", f"merge.{DRIVER}.driver"], cwd=root)
    return rc == 0
