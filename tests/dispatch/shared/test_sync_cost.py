"""What one shared cycle asks of git, counted through the git runner (bench/many_machines.py
times it): a regression in the number of git processes shows here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from machines import probe_tasks, shared_room

from control_room import git
from control_room.dispatch.shared import sharing
from control_room.room import settings as settings_file

# One `control-room cycle` of a fresh process in a clone the remote holds nothing new for:
# the start (the branch's name, fetch, one scan of the refs, this clone's info/exclude, a look
# for changes, the claim: its commit, its compare-and-swap push) and the end (add, commit, our
# copy of the remote's branch written from ours, the push of that copy with the finished claim).
# 0.3.0 ran 19; #23 asked for half of those in a later cycle: 9.
FIRST_CYCLE = [
    "symbolic-ref", "fetch", "for-each-ref", "rev-parse", "status", "commit-tree", "push",
    "add", "commit", "update-ref", "push",
]  # fmt: skip
# A later cycle of the same process (`run --cycles N`) knows the branch and info/exclude already.
LATER_CYCLE = [name for name in FIRST_CYCLE if name not in ("symbolic-ref", "rev-parse")]


def subcommand(args: tuple[str, ...]) -> str:
    """The git sub-command of ``git.run``'s arguments (its own ``-c`` pairs skipped)."""
    i = 0
    while i < len(args) and args[i] == "-c":
        i += 2
    return args[i]


def test_a_shared_cycle_runs_nine_git_processes_and_two_more_in_a_fresh_process(
    exe: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run: Any
) -> None:
    remote, (m1,) = shared_room(tmp_path, exe, ["m1"], probe_tasks(2))
    asked = counting(monkeypatch)
    monkeypatch.chdir(m1.path)
    monkeypatch.delenv("CONTROL_ROOM", raising=False)
    monkeypatch.setenv("CONTROL_ROOM_WRITER", "m1")
    cycles = []
    digest = m1.room.cr / "DIGEST.md"
    for k in (1, 2):
        asked.clear()
        done = run("cycle")
        assert f"passed: t00{k} (round 1;" in done.stdout, done.stdout + done.stderr
        cycles.append(list(asked))
        # the views refreshed after the push (as `run` does at its end): the next start commits
        # nothing for them (no add, commit, merge, diff), they go with its end's commit
        digest.write_text(digest.read_text() + f"refreshed after cycle {k}\n")
    assert cycles == [FIRST_CYCLE, LATER_CYCLE]
    assert "a cycle starts" not in git.run(m1.path, "log", "--format=%s", "main")[1]  # no commit of its own
    # both results, and the end of both claims, are on the remote
    assert git.run(remote, "ls-tree", "--name-only", "main", "swarm/done/")[1].split() == [
        "swarm/done/t001.json", "swarm/done/t002.json"]  # fmt: skip
    for tid in ("t001", "t002"):
        finished = git.run(remote, "log", "-1", "--format=%s", f"refs/control-room/claims/{tid}")[1]
        assert not finished.startswith("control-room claim:")


def counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    asked: list[str] = []
    real = git.run

    def counted(repo: Path, *args: str, **kw: Any) -> tuple[int, str, str]:
        asked.append(subcommand(args))
        return real(repo, *args, **kw)

    monkeypatch.setattr(git, "run", counted)
    return asked


def test_a_commit_looks_with_one_status_and_a_likely_one_asks_diff_only_when_nothing_was_new(
    exe: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, (m1,) = shared_room(tmp_path, exe, ["m1"], probe_tasks(1))
    monkeypatch.setenv("CONTROL_ROOM_WRITER", "m1")
    share = sharing.shared(m1.room, settings_file.load(m1.room))
    assert share is not None
    asked = counting(monkeypatch)
    cases: list[tuple[str | None, bool, bool, list[str]]] = [
        (None, False, False, ["status"]),  # nothing new: one process
        (None, True, False, ["add", "commit", "diff"]),  # likely, but nothing: git's commit refuses
        ("a.md", True, True, ["add", "commit"]),
        ("b.md", False, True, ["status", "add", "commit"]),
        ("STOP", False, False, ["status"]),  # STOP never goes with a sync's commit
    ]
    for k, (name, likely, made, calls) in enumerate(cases):
        if name is not None:
            (m1.path / name).write_text(f"change {k}\n")
        asked.clear()
        assert share.commit(f"commit {k}", likely=likely) is made, k
        assert asked == calls, k
    log = git.run(m1.path, "log", "--format=%s", "-3")[1].split("\n")
    assert log[:2] == ["commit 3", "commit 2"]
    assert git.run(m1.path, "ls-files", "STOP")[1] == ""
    # our branch moved with the commits: the scan says so; pushed, the remote's branch is ours,
    # and once fetched again there is nothing to merge (git is not asked)
    assert share.head() == git.run(m1.path, "rev-parse", "HEAD")[1].strip()
    assert share.push({}) is True
    share.fetch()
    asked.clear()
    assert share.merge() == (False, [])
    assert asked == ["for-each-ref"]
