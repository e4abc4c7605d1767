"""Bench: the walk of one cycle through the house, in layers.

Runs `control-room cycle` in this process, under ``sys.setprofile``, on a room with a target
repository (``repo:``) and one probe task that changes a file and passes: the cycle claims it,
makes the route's worktree, runs the agent and the validator, commits, writes the results, the
ledger line and ROUTES.md, moves the task to ``swarm/passed/``, and the command's edge refreshes
the views. A first cycle on another such room runs before, so that importing modules is not
counted.

Every call of a function of the package is a step: not a comprehension, a generator expression
or a lambda (they run inside the function that holds them), nor the resumption of a generator
already entered. Consecutive steps in one module are one *stay*; a stay in a higher layer than
the one before it is a *climb back up*. Two walks:

- ``every call``: the steps in the order they run;
- ``a reader's``: each function once, where it is first called (what a person reading the
  cycle from its command down opens, in that order).

And two rankings, so that trees with different layer tables compare:

- ``package``: the top-level packages (store, ledger, room, knowledge, adapters, dispatch,
  views, cli), the same for every tree since 0.2.0;
- ``layers``: the tree's own table (``tests/house/imports.py`` ``LAYERS``), finer where the
  tree has wings inside a package.

Usage: python bench/walk.py [--tree DIR] [--no-repo] (DIR: a checkout to measure; default this one)
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import io
import itertools
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

_GENERATOR = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
PACKAGES = ("base", "store", "ledger", "room", "knowledge", "adapters", "dispatch", "views", "cli")
Step = tuple[str, str]  # (module, function)


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def build(tmp: Path, *, repo: bool = True) -> Path:
    """A room (beside a one-commit repository unless ``repo`` is false), one probe task that
    adds a file and passes."""
    from control_room.cli import cli as cli_main

    room = tmp / "room"
    for args in (
        ["init", str(room)],
        ["--room", str(room), "route", "add", "walk", "--title", "the walk's route"],
        [
            "--room", str(room), "task", "add", "--id", "walk-1", "--route", "walk",
            "--adapter", "probe", "--objective", "add a file", "--falsifier", "the file is not there",
            "--validator", "test -f walked.txt", "--max-cost", "0", "--wall-clock", "60",
            "--kill-condition", "never", "--command", "touch walked.txt",
        ],
    ):  # fmt: skip
        with contextlib.redirect_stdout(io.StringIO()):
            code = _cli(cli_main, args)
        if code != 0:
            raise SystemExit(f"control-room {' '.join(args)} failed")
    if repo:
        target = tmp / "repo"
        target.mkdir()
        _git(target, "init", "-q", "-b", "main")
        _git(target, "config", "user.email", "walk@example.com")
        _git(target, "config", "user.name", "walk")
        (target / "README").write_text("hello\n")
        _git(target, "add", "-A")
        _git(target, "commit", "-q", "-m", "first")
        control = room / "control-room" / "CONTROL.md"
        text = re.sub(r"^repo:( *)#", r"repo: ../repo\1#", control.read_text(), count=1, flags=re.M)
        if "repo: ../repo" not in text:
            raise SystemExit(f"could not set repo: in {control}")
        control.write_text(text)
    return room


def _cli(cli_main: Any, args: list[str]) -> int:
    try:
        cli_main(args, prog_name="control-room")
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def walk(room: Path) -> list[Step]:
    """(module, function) of every call of a package function during one `control-room cycle`."""
    from control_room.cli import cli as cli_main

    steps: list[Step] = []
    entered: set[int] = set()  # generator frames already entered: a resumption is no new call

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event != "call":
            return
        name = frame.f_globals.get("__name__", "")
        if not (name == "control_room" or name.startswith("control_room.")):
            return
        code = frame.f_code
        if code.co_name.startswith("<"):  # a comprehension, a generator expression, a lambda
            return
        if code.co_flags & _GENERATOR:
            if id(frame) in entered:
                return
            entered.add(id(frame))
        steps.append((name, code.co_name))

    sys.setprofile(profile)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            code = _cli(cli_main, ["--room", str(room), "cycle"])
    finally:
        sys.setprofile(None)
    if code != 10:
        raise SystemExit(f"the cycle exited {code}, not 10 (passed)")
    return steps


def package_of(module: str) -> int:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else ""
    return PACKAGES.index(top) if top in PACKAGES else 0


def first_calls(steps: list[Step]) -> list[Step]:
    """Each function once, where it is first called: a reader's walk."""
    return list(dict.fromkeys(steps))


def climbs(steps: list[Step], rank: Callable[[str], int]) -> tuple[int, int]:
    """(stays, climbs back up) of a walk, layers given by ``rank(module)``."""
    modules = [m for m, _ in steps]
    stays = [m for i, m in enumerate(modules) if i == 0 or modules[i - 1] != m]
    ranks = [rank(m) for m in stays]
    return len(stays), sum(1 for a, b in itertools.pairwise(ranks) if b > a)


def top_climbs(steps: list[Step], rank: Callable[[str], int], n: int = 8) -> list[tuple[int, str]]:
    """The module pairs (lower -> higher) that climb back up most often."""
    modules = [m for m, _ in steps]
    stays = [m for i, m in enumerate(modules) if i == 0 or modules[i - 1] != m]
    pairs = Counter(f"{a} -> {b}" for a, b in itertools.pairwise(stays) if rank(b) > rank(a))
    return [(k, p.replace("control_room.", "")) for p, k in pairs.most_common(n)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", type=Path, default=Path(__file__).resolve().parent.parent)
    ap.add_argument("--no-repo", action="store_true", help="a room without a target repository")
    a = ap.parse_args()
    tree = a.tree.resolve()
    sys.path[:0] = [str(tree), str(tree / "tests" / "house")]
    os.environ.setdefault("CONTROL_ROOM_WRITER", "walk")
    import imports  # the tree's own layer table

    import control_room

    assert Path(control_room.__file__).resolve().is_relative_to(tree), control_room.__file__
    with tempfile.TemporaryDirectory() as tmp:
        first, second = Path(tmp) / "warm", Path(tmp) / "walked"
        first.mkdir()
        second.mkdir()
        walk(build(first, repo=not a.no_repo))  # imports what a cycle needs: not counted below
        steps = walk(build(second, repo=not a.no_repo))
    reader = first_calls(steps)
    print(f"tree {tree}: one cycle, {len(steps):,} calls of {len(reader)} functions")
    for label, seq in (("every call", steps), ("a reader's", reader)):
        stays, up = climbs(seq, package_of)
        fine_stays, fine_up = climbs(seq, imports.layer)
        print(
            f"{label:11s} package layers: {stays} stays, {up} climbs back up; "
            f"the tree's {len(imports.LAYERS)} layers: {fine_stays} stays, {fine_up} climbs back up"
        )
    print("most frequent climbs (every call, the tree's layers):")
    for k, pair in top_climbs(steps, imports.layer):
        print(f"  {k:4d}  {pair}")


if __name__ == "__main__":
    main()
