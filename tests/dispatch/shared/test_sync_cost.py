"""What one shared cycle asks of git, counted through the git runner (bench/many_machines.py
times it): a regression in the number of git processes shows here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from machines import probe_tasks, shared_room

from control_room import git

# One `control-room cycle` of a fresh process in a clone the remote holds nothing new for:
# the start (the branch's name, fetch, one scan of the refs, this clone's info/exclude, a look
# for changes, the claim: its commit, its compare-and-swap push, our copy of the ref) and the
# end (add, commit, a scan, the push of the branch with the finished claim, our copies).
FIRST_CYCLE = [
    "symbolic-ref", "fetch", "for-each-ref", "rev-parse", "status", "commit-tree", "push", "update-ref",
    "add", "commit", "for-each-ref", "push", "update-ref",
]  # fmt: skip
# A later cycle of the same process (`run --cycles N`) knows the branch and info/exclude already.
LATER_CYCLE = [name for name in FIRST_CYCLE if name not in ("symbolic-ref", "rev-parse")]


def subcommand(args: tuple[str, ...]) -> str:
    """The git sub-command of ``git.run``'s arguments (its own ``-c`` pairs skipped)."""
    i = 0
    while i < len(args) and args[i] == "-c":
        i += 2
    return args[i]


def test_a_shared_cycle_runs_eleven_git_processes_and_two_more_in_a_fresh_process(
    exe: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run: Any
) -> None:
    remote, (m1,) = shared_room(tmp_path, exe, ["m1"], probe_tasks(2))
    asked: list[str] = []
    real = git.run

    def counted(repo: Path, *args: str, **kw: Any) -> tuple[int, str, str]:
        asked.append(subcommand(args))
        return real(repo, *args, **kw)

    monkeypatch.setattr(git, "run", counted)
    monkeypatch.chdir(m1.path)
    monkeypatch.delenv("CONTROL_ROOM", raising=False)
    monkeypatch.setenv("CONTROL_ROOM_WRITER", "m1")
    cycles = []
    for k in (1, 2):
        asked.clear()
        done = run("cycle")
        assert f"passed: t00{k} (round 1;" in done.stdout, done.stdout + done.stderr
        cycles.append(list(asked))
    assert cycles == [FIRST_CYCLE, LATER_CYCLE]
    # both results, and the end of both claims, are on the remote
    assert git.run(remote, "ls-tree", "--name-only", "main", "swarm/done/")[1].split() == [
        "swarm/done/t001.json", "swarm/done/t002.json"]  # fmt: skip
    for tid in ("t001", "t002"):
        finished = git.run(remote, "log", "-1", "--format=%s", f"refs/control-room/claims/{tid}")[1]
        assert not finished.startswith("control-room claim:")
