"""A room shared by several machines through a git remote (SPEC §14), for real: a bare
repository as the remote, one clone per machine, each driven by the installed command with its
own host id, concurrently."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from itertools import pairwise
from pathlib import Path

import pytest
from machines import Machine, probe_tasks, shared_room
from support import git, make_repo, probe_task, where

from control_room.dispatch.shared.claimrefs import PREFIX
from control_room.errors import OFFLINE, OK, PASSED, STOPPED


def finish(machines: list[Machine]) -> None:
    """Two rounds of `sync` everywhere: every machine then holds everything every other did."""
    for _ in range(2):
        for m in machines:
            done = m.cr("sync")
            assert done.returncode == 0, done.stdout + done.stderr


def converged(machines: list[Machine]) -> None:
    """Every clone holds the same ledger lines and task files, verifies, and has no conflict."""
    ids = [sorted(e.id for e in m.ledger()) for m in machines]
    assert all(i == ids[0] for i in ids), "a ledger line is missing from a clone"
    assert len(ids[0]) == len(set(ids[0])), "a ledger line is doubled"
    for m in machines:
        verify = m.cr("ledger", "verify")
        assert verify.returncode == 0, verify.stdout + verify.stderr
        assert git(m.path, "diff", "--name-only", "--diff-filter=U") == ""
        assert "<<<<<<<" not in m.room.ledger.read_text()
    # the task files are the same everywhere (the views differ: each refreshes its own)
    files = [git(m.path, "ls-files", "-s", "swarm") for m in machines]
    assert all(f == files[0] for f in files)


@pytest.mark.slow
def test_three_machines_run_100_tasks_each_exactly_once(exe: str, tmp_path: Path) -> None:
    tasks = probe_tasks(100)
    _, machines = shared_room(tmp_path, exe, ["m1", "m2", "m3"], tasks)
    runs = [m.start("run", "--cycles", "60", "--every", "0") for m in machines]
    outs = [p.communicate(timeout=1200)[0] for p in runs]
    for p, out in zip(runs, outs, strict=True):
        assert p.returncode == 0, out
        assert "Traceback" not in out
    finish(machines)
    converged(machines)
    ledger = machines[0].ledger()
    claims = Counter(e.task for e in ledger if e.event == "claim")
    results = Counter(e.task for e in ledger if e.event == "result")
    ids = [t["id"] for t in tasks]
    assert claims == dict.fromkeys(ids, 1)  # each claimed once, by one machine
    assert results == dict.fromkeys(ids, 1)
    assert all(e.outcome == "pass" for e in ledger if e.event == "result")
    for m in machines:
        assert all(where(m.room, tid) == ["done"] for tid in ids)
        assert sorted(os.listdir(m.room.swarm / "results")) == ids
    # the work was shared: every machine ran some, and each claim line names its machine
    by_host = Counter(e.writer for e in ledger if e.event == "claim")
    assert set(by_host) == {"m1", "m2", "m3"} and sum(by_host.values()) == 100
    assert all(e.detail.endswith(f" on {e.writer}") for e in ledger if e.event == "claim")
    assert not [e for e in ledger if e.event in ("claim-lost", "sync-conflict", "recover")]


def test_an_unreachable_remote_means_no_claim(exe: str, tmp_path: Path) -> None:
    _, (m1,) = shared_room(tmp_path, exe, ["m1"], probe_tasks(1))
    git(m1.path, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    before = m1.room.ledger.read_text()
    done = m1.cr("cycle")
    assert done.returncode == OFFLINE
    assert done.stdout.startswith("offline: cannot fetch from remote 'origin': ")
    assert done.stdout.rstrip().endswith("; nothing was claimed (fail closed)")
    assert where(m1.room, "t001") == ["queue"]
    assert m1.room.ledger.read_text() == before  # not a line: nothing changed
    again = m1.cr("sync")
    assert again.returncode == OFFLINE
    assert again.stderr.startswith("Error: cannot fetch from remote 'origin': ")


def test_stop_halts_here_at_once_and_everywhere_at_the_next_sync(exe: str, tmp_path: Path) -> None:
    _, (m1, m2) = shared_room(tmp_path, exe, ["m1", "m2"], probe_tasks(2))
    # a local STOP needs no network: with the remote gone, the cycle still says STOP
    git(m2.path, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    assert m2.cr("stop", "--reason", "local").returncode == 0
    assert m2.cr("cycle").returncode == STOPPED
    assert m2.cr("resume").returncode == 0
    git(m2.path, "remote", "set-url", "origin", str(tmp_path / "remote.git"))
    # a local STOP stays local: m1's sync does not carry it
    assert m1.cr("stop").returncode == 0
    assert m1.cr("sync").returncode == 0
    assert m2.cr("sync").returncode == 0 and not m2.room.stop.exists()
    assert m1.cr("resume").returncode == 0
    # --everywhere commits it: m2 halts at its next fetch, before any claim
    done = m1.cr("stop", "--everywhere", "--reason", "freeze")
    assert done.returncode == 0, done.stderr
    assert "pushed to origin/main: every machine halts at its next sync" in done.stdout
    halted = m2.cr("cycle")
    assert halted.returncode == STOPPED
    assert "came with the sync; nothing ran" in halted.stdout
    assert "freeze" in m2.room.stop.read_text()
    assert where(m2.room, "t001") == ["queue"] and where(m2.room, "t002") == ["queue"]
    assert m1.cr("resume", "--everywhere").returncode == 0
    assert m2.cr("cycle").returncode == PASSED
    finish([m1, m2])
    converged([m1, m2])


def _wait_for(check, what: str, limit_s: float = 60) -> None:  # type: ignore[no-untyped-def]
    end = time.monotonic() + limit_s
    while not check():
        assert time.monotonic() < end, f"gave up waiting for {what}"
        time.sleep(0.1)


def test_a_killed_machines_task_is_taken_over_after_its_lease(exe: str, tmp_path: Path) -> None:
    # the task's agent hangs on m1 and finishes at once on m2
    hang = [
        sys.executable,
        "-c",
        "import os, time; os.environ['CONTROL_ROOM_WRITER'] == 'm2' or time.sleep(60)",
    ]
    task = probe_tasks(1, command=hang, wall_clock_s=4)
    remote, (m1, m2) = shared_room(tmp_path, exe, ["m1", "m2"], task, grace_s="1", validator_timeout_s="1")
    cycle = m1.start("cycle")
    ref = f"{PREFIX}t001"
    _wait_for(lambda: git(remote, "for-each-ref", ref) != "", "m1's claim on the remote")
    _wait_for(lambda: (m1.room.state_dir("running") / "t001.claim").exists(), "m1's local claim")
    # its claim line comes just after the claim: killed between the two, m1's ledger never says it
    _wait_for(lambda: any(e.event == "claim" for e in m1.ledger()), "m1's claim line")
    os.killpg(cycle.pid, signal.SIGKILL)  # the machine dies, its agent with it
    cycle.wait()
    claim = git(remote, "log", "-1", "--format=%s", ref)
    assert claim.startswith("control-room claim: t001 by m1 until ")
    early = m2.cr("cycle")
    assert early.returncode == OK
    assert "t001 claimed by m1 (lease until " in early.stdout
    lease_end = float(claim.rsplit(" ", 1)[1]) + 1
    time.sleep(max(0.0, lease_end - time.time()) + 0.5)  # the lease (wall clock + grace) passes
    late = m2.cr("cycle")
    assert late.returncode == PASSED, late.stdout + late.stderr
    taken = [e for e in m2.ledger() if e.event == "recover"]
    assert len(taken) == 1 and taken[0].writer == "m2" and taken[0].task == "t001"
    assert taken[0].detail.startswith("the claim of m1 passed its lease ")
    assert taken[0].detail.endswith("taken over by m2, no round used")
    # m1 comes back: its dead claim is let go, the task is not run again
    back = m1.cr("cycle")
    assert back.returncode == OK, back.stdout + back.stderr
    assert "let go of t001" in back.stdout
    finish([m1, m2])
    converged([m1, m2])
    ledger = m1.ledger()
    assert [(e.writer, e.event) for e in ledger if e.task == "t001" and e.event in ("claim", "result")] == [
        ("m1", "claim"), ("m2", "claim"), ("m2", "result")]  # fmt: skip
    assert [e.writer for e in ledger if e.event == "claim-lost"] == ["m1"]
    assert where(m1.room, "t001") == where(m2.room, "t001") == ["done"]


def test_a_late_result_is_set_aside_and_never_published(exe: str, tmp_path: Path) -> None:
    # m1's agent cuts m1 off its remote (the link m1 pushes through) and then passes: m1's
    # result cannot be published; m2 takes the task over after the lease and publishes its own
    cut = [
        sys.executable,
        "-c",
        "import os, sys; os.environ['CONTROL_ROOM_WRITER'] == 'm2' or os.unlink(sys.argv[1])",
    ]
    remote, (m1, m2) = shared_room(tmp_path, exe, ["m1", "m2"], [], grace_s="1", validator_timeout_s="1")
    link = tmp_path / "m1-remote.git"
    link.symlink_to(remote)
    git(m1.path, "remote", "set-url", "origin", str(link))
    task = probe_tasks(1, command=[*cut, str(link)], wall_clock_s=2)[0]
    (m2.room.state_dir("queue") / "t001.json").write_text(json.dumps(task))
    assert m2.cr("sync").returncode == 0
    first = m1.cr("cycle")
    assert first.returncode == PASSED, first.stdout + first.stderr
    assert "not pushed: cannot push to remote 'origin'" in first.stdout
    assert where(m1.room, "t001") == ["done"]  # here, not on the remote
    claim = git(remote, "log", "-1", "--format=%s", f"{PREFIX}t001")
    time.sleep(max(0.0, float(claim.rsplit(" ", 1)[1]) + 1 - time.time()) + 0.5)
    assert m2.cr("cycle").returncode == PASSED
    link.symlink_to(remote)  # m1 is back online
    back = m1.cr("sync")
    assert back.returncode == 0, back.stdout + back.stderr
    assert "claim on t001 lost to m2; this machine's result set aside" in back.stdout
    finish([m1, m2])
    converged([m1, m2])
    lost = [e for e in m1.ledger() if e.event == "claim-lost"]
    assert [(e.writer, e.task) for e in lost] == [("m1", "t001")]
    # both runs are in the ledger; the branch's task is m2's: one done file, m2's pass
    results = [(e.writer, e.outcome) for e in m1.ledger() if e.event == "result"]
    assert results == [("m1", "pass"), ("m2", "pass")]
    assert where(m1.room, "t001") == ["done"]
    assert subprocess.run(["git", "-C", str(m1.path), "status", "--porcelain", "swarm"],
                          capture_output=True, text=True).stdout == ""  # fmt: skip


def test_status_says_which_machine_runs_what(exe: str, tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    wait = [
        sys.executable,
        "-c",
        f"import pathlib, time; pathlib.Path({str(ready)!r}).touch(); time.sleep(60)",
    ]
    _, (m1, m2) = shared_room(tmp_path, exe, ["m1", "m2"], probe_tasks(1, command=wait))
    cycle = m1.start("cycle")
    try:
        _wait_for(ready.exists, "m1's agent")
        here = m1.cr("status").stdout.splitlines()
        assert [ln for ln in here if ln.startswith("running")] == [
            "running   t001  on m1, since "
            f"{json.loads((m1.room.state_dir('running') / 't001.claim').read_text())['started']}"
        ]
        assert m2.cr("sync").returncode == 0
        there = m2.cr("status", "--json")
        claim = json.loads(there.stdout)["running"]
        assert [(c["id"], c["host"], c["here"]) for c in claim] == [("t001", "m1", False)]
        shown = m2.cr("status").stdout.splitlines()
        assert [ln for ln in shown if ln.startswith("running")] == [
            f"running   t001  on m1, another machine; lease until {claim[0]['until']}"
        ]
    finally:
        os.killpg(cycle.pid, signal.SIGTERM)  # Ctrl-C's twin: the task goes back, no round used
        cycle.wait(timeout=60)


def test_a_persons_edit_of_the_board_survives_another_machines_cycles(exe: str, tmp_path: Path) -> None:
    tasks = [probe_task(f"r{k}", route="r1") for k in (1, 2, 3)]
    _, (m1, m2) = shared_room(tmp_path, exe, ["m1", "m2"], [])
    assert m1.cr("route", "add", "r1", "--title", "the first route").returncode == 0
    for task in tasks:
        (m1.room.state_dir("queue") / f"{task['id']}.json").write_text(json.dumps(task))
    assert m1.cr("sync").returncode == 0
    assert m2.cr("sync").returncode == 0
    runs = m1.start("run", "--cycles", "3", "--every", "0")
    # meanwhile, a person on m2 edits the board by hand and writes in CURRENT_CONTEXT.md
    board = m2.room.routes.read_text()
    m2.room.routes.write_text(
        board.replace("| r1 | untested | the first route |", "| r1 | promising | first! |")
    )
    m2.room.context.write_text(m2.room.context.read_text() + "\nNote from a person: look at r1 first.\n")
    assert m2.cr("sync").returncode == 0
    out = runs.communicate(timeout=300)[0]
    assert runs.returncode == 0, out
    finish([m1, m2])
    converged([m1, m2])
    for m in (m1, m2):
        row = [ln for ln in m.room.routes.read_text().splitlines() if ln.startswith("| r1 |")]
        assert len(row) == 1
        cells = [c.strip() for c in row[0].strip("|").split("|")]
        assert cells[:5] == ["r1", "promising", "first!", "3", "0"]  # the person's cells, the cycles' count
        assert cells[5].startswith("pass r3 ")
        assert "Note from a person: look at r1 first." in m.room.context.read_text()
        assert m.cr("route", "recount").stdout == "ROUTES.md already agrees with the ledger\n"
    assert not [e for e in m1.ledger() if e.event == "sync-conflict"]


def test_two_machines_merge_two_routes_into_one_base_fast_forward_only(exe: str, tmp_path: Path) -> None:
    seed = make_repo(tmp_path / "seed", {"README": "hello\n"})
    project = tmp_path / "project.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(seed), str(project)], check=True)
    py = sys.executable
    validator = [py, "-c", "import os, sys; print('validated on', os.environ['CONTROL_ROOM_WRITER'])"]
    tasks = [
        probe_task(name, route=route, owns=[f"{name}.txt"], validator=validator,
                   command=[py, "-c", f"open('{name}.txt', 'w').write('{name}\\n')"])
        for name, route in (("a", "r1"), ("b", "r2"))
    ]  # fmt: skip
    settings = {
        "repo": "../project",
        "repo_remote": "origin",
        "auto_integrate": "true",
        "base_branch": "main",
    }
    _, machines = shared_room(tmp_path, exe, ["m1", "m2"], [], nested=True, **settings)
    m1, m2 = machines
    for m in machines:
        subprocess.run(["git", "clone", "-q", str(project), str(m.path.parent / "project")], check=True)
    for route in ("r1", "r2"):
        assert m1.cr("route", "add", route, "--title", route).returncode == 0
    for task in tasks:
        (m1.room.state_dir("queue") / f"{task['id']}.json").write_text(json.dumps(task))
    assert m1.cr("sync").returncode == 0 and m2.cr("sync").returncode == 0
    bases = [git(project, "rev-parse", "main")]
    # both machines run at once: each takes one task, passes it and tries to merge it
    cycles = [m.start("cycle") for m in machines]
    for c in cycles:
        out = c.communicate(timeout=300)[0]
        assert c.returncode == PASSED, out
    bases.append(git(project, "rev-parse", "main"))
    # a task the other machine's merge queue lock kept waiting is merged by its own machine now
    for m in machines:
        assert m.cr("sync").returncode == 0
        for tid in [t for t in ("a", "b") if where(m.room, t) == ["passed"]]:
            done = m.cr("integrate", tid)
            assert done.returncode == OK and done.stdout.startswith(f"merged: {tid} "), (
                done.stdout + done.stderr
            )
            bases.append(git(project, "rev-parse", "main"))
    finish(machines)
    converged(machines)
    # the base only ever fast-forwarded, and holds both routes' work, one commit each, no merge commit
    for older, newer in pairwise(bases):
        assert (
            subprocess.run(
                ["git", "-C", str(project), "merge-base", "--is-ancestor", older, newer]
            ).returncode
            == 0
        )
    assert git(project, "log", "--merges", "--format=%H", "main") == ""
    assert sorted(git(project, "ls-tree", "--name-only", "main").split()) == ["README", "a.txt", "b.txt"]
    assert len(git(project, "log", "--format=%H", "main").split()) == 3
    ledger = m1.ledger()
    ran = {e.task: e.writer for e in ledger if e.event == "result"}
    merged = {e.task: e.writer for e in ledger if e.event == "integrate" and e.outcome == "merged"}
    assert sorted(ran) == sorted(merged) == ["a", "b"]
    assert set(ran.values()) == {"m1", "m2"}  # one task each
    for tid, host in merged.items():  # the post-rebase validator ran on the machine that merged
        m = m1 if host == "m1" else m2
        said = (m.room.swarm / "results" / tid / "post-rebase.stdout.txt").read_text()
        assert said == f"validated on {host}\n"
        assert where(m1.room, tid) == where(m2.room, tid) == ["to-test"]
    # the route branches were pushed
    assert set(git(project, "for-each-ref", "--format=%(refname:short)", "refs/heads").split()) == {
        "main", "route/r1", "route/r2"}  # fmt: skip


def test_a_fresh_clone_runs_a_cycle_straight_away(exe: str, tmp_path: Path) -> None:
    remote, (m1,) = shared_room(tmp_path, exe, ["m1"], probe_tasks(1))
    m2 = Machine(tmp_path / "m2", "m2", exe)
    subprocess.run(["git", "clone", "-q", "-b", "main", str(remote), str(m2.path)], check=True)
    assert not (m2.room.swarm / "running").exists()  # git keeps no empty folder
    done = m2.cr("cycle")
    assert done.returncode == PASSED, done.stdout + done.stderr
    assert m1.cr("sync").returncode == 0
    assert where(m1.room, "t001") == ["done"]
    assert [e.writer for e in m1.ledger() if e.event == "result"] == ["m2"]


def test_three_clones_on_one_machine_run_each_task_once_without_being_named(exe: str, tmp_path: Path) -> None:
    """As a new user tries it: three clones of one shared room, each `run --every 0`, no `sync
    --host`. Each clone picks an id of its own at first use (kept in control-room/.host)."""
    _, named = shared_room(tmp_path, exe, ["a", "b", "c"], probe_tasks(12))
    machines = [Machine(m.path, m.host, exe, named=False) for m in named]
    runs = [m.start("run", "--cycles", "6", "--every", "0") for m in machines]
    for r in runs:
        out, _ = r.communicate(timeout=300)
        assert "Traceback" not in out, out
    for _ in range(3):  # the tasks left, then everything everywhere
        for m in machines:
            m.cr("cycle")
    finish(machines)
    converged(machines)
    results = [e.task for e in machines[0].ledger() if e.event == "result"]
    assert sorted(results) == [f"t{k:03d}" for k in range(1, 13)]  # every task once: none twice
    ids = [(m.room.cr / ".host").read_text().strip() for m in machines]
    assert len(set(ids)) == 3 and all(i.startswith(os.uname().nodename[:20]) for i in ids), ids
