"""Crash injection (#23) where git is involved: the merge queue killed in the middle of a
fast-forward (``integrate``, a room with a repo), and a shared room's cycle killed between its
sync's commit and its push, and after the push. After each crash a person recovers as they
would (``integrate`` or ``cycle`` again, ``doctor``, ``sync``), and nothing is lost, doubled or
run twice: no branch with unmerged work deleted, every merged task naming a commit on main
(``tests/crashes.py`` ``check``)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from crashes import check, queue_slow, slow_task
from machines import Machine, shared_room
from support import git

from control_room import crashpoint, errors
from control_room.room.layout import Room


@pytest.mark.parametrize("point", ["integrate.merged", "integrate.moved", "write.t1.json", "ledger.written"])
def test_the_merge_queue_killed_in_the_middle(
    cr: Any, room: Room, repo: Path, tmp_path: Path, point: str
) -> None:
    runs, ids = tmp_path / "runs.log", ["t1", "t2"]
    for tid in ids:
        queue_slow(room, runs, tid, 0.05, change=True)
    ran = cr("run", "--every", "0", "--cycles", "2")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert sorted(os.listdir(room.state_dir("passed"))) == ["t1.json", "t2.json"]
    crashed = cr("integrate", extra_env={crashpoint.VAR: point})
    assert crashed.returncode == -9, f"{point} was never hit: {crashed.stdout}{crashed.stderr}"
    check(room, ids, runs, repo=repo)
    doctor = cr("doctor")
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    again = cr("integrate")  # as a person would: the merge queue again
    assert again.returncode == 0, again.stdout + again.stderr
    check(room, ids, runs, repo=repo, settled=True)
    assert sorted(os.listdir(room.state_dir("to-test"))) == ["t1.json", "t2.json"]
    assert git(repo, "rev-list", "--merges", "main") == ""  # fast-forwards only, even so
    assert cr("ledger", "verify").returncode == 0


def armed(m: Machine, point: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([m.exe, *args], cwd=m.path, env={**m.env(), crashpoint.VAR: point},
                          capture_output=True, text=True, timeout=120)  # fmt: skip


@pytest.mark.parametrize("point", ["sync.committed", "sync.committed:2", "sync.pushed"])
def test_a_shared_rooms_cycle_killed_around_its_push(exe: str, tmp_path: Path, point: str) -> None:
    runs, ids = tmp_path / "runs.log", ["t1", "t2"]
    tasks = [slow_task(runs, tid, 0.05) for tid in ids]
    remote, (m1,) = shared_room(tmp_path, exe, ["m1"], tasks)
    crashed = armed(m1, point, "cycle")
    assert crashed.returncode == -9, f"{point} was never hit: {crashed.stdout}{crashed.stderr}"
    check(m1.room, ids, runs)
    for _ in range(len(ids) + 1):  # the next cycles recover and run the rest; then a sync
        again = m1.cr("cycle")
        assert again.returncode in (errors.OK, errors.PASSED), again.stdout + again.stderr
    synced = m1.cr("sync")
    assert synced.returncode == 0, synced.stdout + synced.stderr
    check(m1.room, ids, runs, settled=True)
    # what another machine sees: a fresh clone of the remote agrees
    seen = tmp_path / "seen"
    subprocess.run(["git", "clone", "-q", str(remote), str(seen)], check=True)
    check(Room(seen), ids, runs, settled=True)
    assert m1.cr("ledger", "verify").returncode == 0
