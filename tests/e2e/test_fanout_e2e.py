"""Fan-out on a real git repository, through the installed command: a task split into three
slices gets three worktrees (one branch each), `run --parallel 3` runs them side by side, the
merge queue merges all three, and the parent, their gather step, then runs on a base that holds
all three and its validator passes there; merged in turn, the base stays linear."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import PY, events, git, make_repo, queue, set_gate, task_json, where

from control_room import errors
from control_room.room.layout import Room

# Every agent is the same probe command (a slice copies its parent's): it writes a file named
# after the task it runs for, so each slice adds its own file and the gather step its own.
AGENT = [PY, "-c", "import os, pathlib; t = os.environ['CONTROL_ROOM_TASK']; "
                   "pathlib.Path(t + '.txt').write_text(t)"]  # fmt: skip
FILES = ("ship-api.txt", "ship-ui.txt", "ship-docs.txt")


def listing(tree: Path) -> list[str]:
    """The files of a work tree or worktree, its .git aside."""
    return sorted(p.name for p in tree.iterdir() if p.name != ".git")


def present(*names: str) -> list[str]:
    return [PY, "-c", f"import os, sys; sys.exit(0 if all(map(os.path.exists, {list(names)!r})) else 1)"]


def present_cmd(name: str) -> str:
    """``present`` as one command string, for `--validator-of`."""
    return f"{PY} -c \"import os, sys; sys.exit(0 if os.path.exists('{name}') else 1)\""


@pytest.fixture
def repo(tmp_path: Path, room: Room) -> Path:
    """A repository beside the room, with one commit on `main`, named in CONTROL.md."""
    path = make_repo(tmp_path / "repo", {"README": "a repository\n"})
    set_gate(room, "repo", "../repo")
    set_gate(room, "max_parallel", "3")
    return path


def test_three_slices_run_side_by_side_merge_and_the_gather_step_checks_them(  # type: ignore[no-untyped-def]
    cr, room: Room, repo: Path
) -> None:
    queue(room, "ship", command=AGENT, validator=present(*FILES))
    split = cr("task", "fanout", "ship", "--slice", "api: write the API file",
               "--slice", "ui: write the UI file", "--slice", "docs: write the docs file",
               *[a for s in ("api", "ui", "docs") for a in
                 ("--validator-of", f"{s}={present_cmd(f'ship-{s}.txt')}")])  # fmt: skip
    assert split.returncode == errors.OK, split.stderr
    assert task_json(room, "queue", "ship")["deps"] == ["ship-api", "ship-ui", "ship-docs"]

    # the gather step waits; the three slices run at once, each in its own worktree and branch
    ran = cr("run", "--every", "0", "--parallel", "3", "--cycles", "1")
    assert ran.returncode == errors.OK, ran.stdout + ran.stderr
    assert sorted(ln.split("  ", 2)[2].split(" (")[0] for ln in ran.stdout.splitlines()) == [
        "passed: ship-api", "passed: ship-docs", "passed: ship-ui"]  # fmt: skip
    for child in ("ship-api", "ship-ui", "ship-docs"):
        assert where(room, child) == ["passed"]
        tree = room.cr / "worktrees" / f"task-{child}"
        assert listing(tree) == ["README", f"{child}.txt"]
    assert where(room, "ship") == ["queue"]
    assert set(git(repo, "branch", "--format=%(refname:short)").split()) == {
        "main", "task/ship-api", "task/ship-ui", "task/ship-docs"}  # fmt: skip
    waits = cr("cycle")
    assert (waits.returncode, waits.stdout) == (errors.OK, (
        "nothing to do: 1 queued task not ready: ship waits for deps ship-api (passed), ship-ui (passed), "
        "ship-docs (passed)\n"))  # fmt: skip

    # the merge queue takes all three onto main
    merged = cr("integrate")
    assert merged.returncode == errors.OK, merged.stdout + merged.stderr
    assert merged.stdout.count("merged: ") == 3
    assert listing(repo) == ["README", *sorted(FILES)]

    # the gather step runs in its own worktree, made from a base with every slice, and passes
    gathered = cr("cycle")
    assert gathered.returncode == errors.PASSED, gathered.stdout + gathered.stderr
    tree = room.cr / "worktrees" / "task-ship"
    assert listing(tree) == ["README", *sorted(FILES), "ship.txt"]
    assert where(room, "ship") == ["passed"]
    last = cr("integrate", "ship")
    assert last.returncode == errors.OK, last.stdout + last.stderr
    assert where(room, "ship") == ["to-test"]
    assert listing(repo) == ["README", *sorted(FILES), "ship.txt"]

    # linear: fast-forwards only, one commit per task
    assert git(repo, "rev-list", "--merges", "main") == ""
    subjects = git(repo, "log", "--format=%s").splitlines()
    assert len(subjects) == 5 and subjects[-1] == "first" and subjects[0].startswith("ship: ")
    assert sorted(s.split(":")[0] for s in subjects[1:4]) == ["ship-api", "ship-docs", "ship-ui"]
    assert events(room.ledger).count("fanout") == 1
    assert cr("ledger", "verify").returncode == 0
