"""Crash injection (#23) where git is involved: the merge queue killed in the middle of a
fast-forward (``integrate``, a room with a repo), and a shared room's cycle killed between its
sync's commit and its push, and after the push. After each crash a person recovers as they
would (``integrate`` or ``cycle`` again, ``doctor``, ``sync``), and nothing is lost, doubled or
run twice: no branch with unmerged work deleted, every merged task naming a commit on main
(``tests/crashes.py`` ``check``)."""

from __future__ import annotations

import os
import random
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from crashes import SEED_VAR, check, kill_dispatcher, queue_slow, seed, slow_task
from machines import Machine, shared_room
from support import git, set_gate

from control_room import crashpoint, errors
from control_room.room.layout import Room


# ledger.written: its `integrate merged` line written, the task not moved (merged twice, before)
@pytest.mark.parametrize("point", ["integrate.merged", "integrate.moved", "ledger.written"])
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


# claim.pushed: a claim on the remote made, nothing after it (this clone's record of it was
# written after the push: killed there, the clone took its own claim for another clone's)
@pytest.mark.parametrize("point", ["sync.committed", "sync.committed:2", "sync.pushed", "claim.pushed"])
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


GIT_KILLS = 15


def test_a_room_with_a_repo_killed_at_random_moments(cr: Any, room: Room, repo: Path, tmp_path: Path) -> None:
    """As the fifty random kills of test_crash_injection.py, fewer, with a repo and
    ``auto_integrate``: each cycle also makes a worktree, commits, and merges."""
    chosen = seed()
    print(f"\ncrash injection with a repo: {SEED_VAR}={chosen} replays this run")
    rng = random.Random(chosen)
    set_gate(room, "max_parallel", "2")
    set_gate(room, "max_dispatcher_deaths", "1000")
    set_gate(room, "auto_integrate", "true")
    runs, ids = tmp_path / "runs.log", [f"t{k:02d}" for k in range(12)]
    for tid in ids:
        queue_slow(room, runs, tid, rng.uniform(0.05, 0.3), change=True)
    argv = [cr.exe, "run", "--every", "0", "--cycles", "1000", "--parallel", "2"]
    for kill in range(GIT_KILLS):
        run = subprocess.Popen(argv, cwd=room.root, env=cr.env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)  # fmt: skip
        time.sleep(rng.uniform(0, 1.5))
        out = kill_dispatcher(run)
        assert "Traceback" not in out, f"kill {kill} (seed {chosen}):\n{out}"
        check(room, ids, runs, repo=repo)
    doctor = cr("doctor")
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    for _ in range(3):  # then cycles until nothing is left, and the merge queue for what waits
        left = sum(1 for s in ("queue", "running") for _ in room.state_dir(s).glob("*.json"))
        if left:
            cr("run", "--every", "0", "--cycles", str(left // 2 + 1), "--parallel", "2")
    merged = cr("integrate")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    check(room, ids, runs, repo=repo, settled=True)
    assert sorted(p.stem for p in room.state_dir("to-test").glob("*.json")) == ids
    assert git(repo, "rev-list", "--merges", "main") == ""
    assert cr("ledger", "verify").returncode == 0
