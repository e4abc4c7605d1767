"""Races (#23): many cycles at once, through the installed command.

(a) Eight `run --every 0` loops, started together on one room, over tasks whose ``owns`` overlap
(a path and a path under it, the same path spelt ``a/`` or ``./a``, ``.`` for the whole tree)
and whose ``deps`` make chains and diamonds. Each agent appends ``start <task> <ns>`` and
``end <task> <ns>`` (``time.monotonic_ns``, one ``O_APPEND`` write each) to one file, and from
those lines: every task ran exactly once, no two tasks whose ``owns`` overlap ever ran at the
same time, and every task started only after each of its deps ended. No cycle died, so none may
say it recovered one. (b) Three clones of one shared room over a git remote, cycling together:
every task once, every clone's ledger verifies, and all converge after a final sync. (c) Two
clones each running `run --parallel 3`: every task once, no ledger line lost, no cycle offline.
The seed is printed; how long it took is printed, not asserted.
"""

from __future__ import annotations

import json
import os
import posixpath
import random
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from machines import Machine, probe_tasks, shared_room
from support import entries, set_gate, where

from control_room import errors
from control_room.room.layout import Room

LOOPS = 8
TASKS = int(os.environ.get("CR_RACES_TASKS", "2000"))  # the 2,000: ~70 s on 2 busy cores

# The agent: one line at its start, one at its end, a few ms of "work" between (so overlapping
# runs would be seen), then exit 0. -S -I: a bare interpreter starts in a few ms.
AGENT = (
    "import os, sys, time\n"
    "f = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)\n"
    "os.write(f, f'start {sys.argv[2]} {time.monotonic_ns()}\\n'.encode())\n"
    "time.sleep(float(sys.argv[3]))\n"
    "os.write(f, f'end {sys.argv[2]} {time.monotonic_ns()}\\n'.encode())\n"
)

# owns paths: a small tree, spelt several ways; `.` is the whole tree
PATHS = ["a", "a/x", "a/x/1.py", "a/y.py", "b", "b/z", "./b/z/2.py", "c/", "c/w.py", "d", "e/f", "."]


def norm(path: str) -> str:
    return posixpath.normpath(path.strip() or ".")


def overlap(mine: list[str], theirs: list[str]) -> bool:
    """One path of each is the other, or lies under it (``.`` is under nothing and holds all)."""
    for p in map(norm, mine):
        for q in map(norm, theirs):
            if p == "." or q == "." or p == q or p.startswith(q + "/") or q.startswith(p + "/"):
                return True
    return False


def race_tasks(rng: random.Random, n: int, events: Path) -> list[dict[str, Any]]:
    """``n`` probe tasks: about one in three owns one or two paths (``.`` rarely), about one in
    three waits for one or two of the 40 tasks before it (chains, and diamonds where two
    tasks wait for one and a third for both)."""
    out = []
    for k in range(n):
        fields: dict[str, Any] = {}
        if rng.random() < 0.35:
            pool = PATHS if rng.random() < 0.05 else PATHS[:-1]
            fields["owns"] = rng.sample(pool, rng.choice((1, 1, 2)))
        if k and rng.random() < 0.35:
            back = [f"r{j:04d}" for j in range(max(0, k - 40), k)]
            fields["deps"] = rng.sample(back, min(len(back), rng.choice((1, 1, 2))))
        nap = f"{rng.choice((0, 0, 0.002, 0.005)):g}"
        command = [sys.executable, "-S", "-I", "-c", AGENT, str(events), f"r{k:04d}", nap]
        out.append({**probe_tasks(1, command=command, validator=["true"])[0], "id": f"r{k:04d}", **fields})
    return out


def intervals(events: Path) -> dict[str, list[tuple[str, int]]]:
    seen: dict[str, list[tuple[str, int]]] = {}
    for line in events.read_text().splitlines():
        what, tid, ns = line.split()
        seen.setdefault(tid, []).append((what, int(ns)))
    return seen


def test_eight_loops_run_each_task_once_never_overlapping_after_its_deps(
    cr: Any, room: Room, tmp_path: Path
) -> None:
    seed = int(os.environ.get("CR_SEED", time.time_ns() % 10**6))
    print(f"\nseed {seed} (CR_SEED={seed} repeats it); {TASKS} tasks, {LOOPS} loops")
    rng = random.Random(seed)
    events = tmp_path / "events"
    tasks = race_tasks(rng, TASKS, events)
    for t in tasks:
        (room.state_dir("queue") / f"{t['id']}.json").write_text(json.dumps(t))
    set_gate(room, "max_parallel", str(LOOPS))
    argv = [cr.exe, "run", "--every", "0", "--cycles", str(10 * TASKS)]
    started = time.monotonic()
    logs = [open(tmp_path / f"loop{k}.out", "w+") for k in range(LOOPS)]  # noqa: SIM115 (closed below)
    loops = [subprocess.Popen(argv, cwd=room.root, env=cr.env, stdout=log, stderr=subprocess.STDOUT,
                              start_new_session=True) for log in logs]  # fmt: skip
    try:  # the loops run until the queue is empty; then a person stops them
        done = room.state_dir("done")
        while len(os.listdir(done)) < TASKS and all(p.poll() is None for p in loops):
            assert time.monotonic() - started < 900, "gave up waiting for the queue to empty"
            time.sleep(0.2)
        took = time.monotonic() - started
        assert cr("stop", "--reason", "the queue is empty").returncode == 0
        codes = [p.wait(timeout=120) for p in loops]
    finally:
        for p in loops:
            if p.poll() is None:
                p.kill()
    print(f"{TASKS} tasks in {took:.1f} s: {TASKS / took:.1f} claims/s")
    for code, log in zip(codes, logs, strict=True):
        log.seek(0)
        out = log.read()
        log.close()
        assert "Traceback" not in out, out
        assert code == errors.STOPPED, out[-3000:]
        assert "recovered" not in out, [ln for ln in out.splitlines() if "recovered" in ln]
    ids = [t["id"] for t in tasks]
    assert [tid for tid in ids if where(room, tid) != ["done"]] == []
    # each ran exactly once: one claim, one result, one start and one end each
    assert Counter(e.task for e in entries(room, "claim")) == dict.fromkeys(ids, 1)
    assert Counter(e.task for e in entries(room, "result")) == dict.fromkeys(ids, 1)
    seen = intervals(events)
    assert {tid: [w for w, _ in s] for tid, s in seen.items()} == {tid: ["start", "end"] for tid in ids}
    span = {tid: (s[0][1], s[1][1]) for tid, s in seen.items()}
    # deps: each started after every one of its deps ended
    late = [(t["id"], d) for t in tasks for d in t.get("deps", []) if span[t["id"]][0] <= span[d][1]]
    assert late == []
    # owns: no two tasks that overlap ran at the same time (a sweep in start order)
    owns = {t["id"]: t["owns"] for t in tasks if t.get("owns")}
    clashes, active = [], []
    for tid in sorted(owns, key=lambda i: span[i][0]):
        begin = span[tid][0]
        active = [o for o in active if span[o][1] > begin]
        clashes += [(o, tid) for o in active if overlap(owns[o], owns[tid])]
        active.append(tid)
    assert clashes == [], [(a, owns[a], b, owns[b]) for a, b in clashes[:5]]
    assert cr("ledger", "verify").returncode == 0


def _done_on(remote: Path) -> int:
    """How many task files the remote's branch holds in swarm/done/."""
    out = subprocess.run(["git", "-C", str(remote), "ls-tree", "--name-only", "main", "swarm/done/"],
                         capture_output=True, text=True).stdout  # fmt: skip
    return sum(1 for line in out.splitlines() if line.endswith(".json"))


def _until_done(
    remote: Path, machines: list[Machine], n: int, *argv: str
) -> tuple[list[tuple[int, str]], float]:
    """``control-room <argv>`` started in every clone, until ``n`` tasks are done on the remote
    (or the loops end); then each clone is stopped, and resumed once its loop ended: each loop's
    (exit code, output), and the seconds until the tasks were done."""
    started = time.monotonic()
    runs = [m.start(*argv) for m in machines]
    try:
        while _done_on(remote) < n and any(p.poll() is None for p in runs):
            assert time.monotonic() - started < 600, "gave up waiting for the tasks to be done"
            time.sleep(0.2)
        took = time.monotonic() - started
        for m in machines:
            assert m.cr("stop", "--reason", "all done").returncode == 0
        outs = [p.communicate(timeout=120)[0] for p in runs]
    finally:
        for p in runs:
            if p.poll() is None:
                p.kill()
    for m in machines:
        assert m.cr("resume").returncode == 0
    return [(p.returncode, out) for p, out in zip(runs, outs, strict=True)], took


def _synced(machines: list[Machine]) -> None:
    for _ in range(2):
        for m in machines:
            done = m.cr("sync")
            assert done.returncode == 0, done.stdout + done.stderr


def test_three_clones_of_a_shared_room_run_each_task_once_and_converge(exe: str, tmp_path: Path) -> None:
    tasks = probe_tasks(60, validator=["true"], command=["true"])
    remote, machines = shared_room(tmp_path, exe, ["m1", "m2", "m3"], tasks)
    outs, took = _until_done(remote, machines, len(tasks), "run", "--cycles", "200", "--every", "0")
    print(f"\n60 tasks over 3 clones in {took:.1f} s: {60 / took:.1f} claims/s")
    for code, out in outs:
        assert code in (errors.OK, errors.STOPPED), out[-3000:]
        assert "Traceback" not in out, out
    _synced(machines)
    ledgers = [sorted(e.id for e in m.ledger()) for m in machines]
    assert all(ids == ledgers[0] for ids in ledgers), "a ledger line is missing from a clone"
    lines = machines[0].ledger()
    ids = [t["id"] for t in tasks]
    assert Counter(e.task for e in lines if e.event == "claim") == dict.fromkeys(ids, 1)
    assert Counter(e.task for e in lines if e.event == "result") == dict.fromkeys(ids, 1)
    assert not [e for e in lines if e.event in ("claim-lost", "sync-conflict", "recover")]
    files = []
    for m in machines:
        verify = m.cr("ledger", "verify")
        assert verify.returncode == 0, verify.stdout + verify.stderr
        assert [tid for tid in ids if where(m.room, tid) != ["done"]] == []
        files.append(subprocess.run(["git", "-C", str(m.path), "ls-files", "-s", "swarm"],
                                    capture_output=True, text=True, check=True).stdout)  # fmt: skip
        assert subprocess.run(["git", "-C", str(m.path), "status", "--porcelain", "swarm"],
                              capture_output=True, text=True, check=True).stdout == ""  # fmt: skip
    assert all(f == files[0] for f in files), "the clones' task files differ"


def test_two_clones_each_running_parallel_cycles_run_each_task_once(exe: str, tmp_path: Path) -> None:
    # Found trying `run --parallel` in a shared room: a cycle picked a task from the queue while
    # another cycle of its clone merged that task's finished run from the other machine, and ran it
    # again; cycles of one clone fetching at once broke each other's fetch ("offline").
    nap = [sys.executable, "-c", "import time; time.sleep(0.3)"]
    tasks = probe_tasks(30, validator=["true"], command=nap)
    remote, machines = shared_room(tmp_path, exe, ["m1", "m2"], tasks, max_parallel="3")
    outs, _ = _until_done(
        remote, machines, len(tasks), "run", "--cycles", "300", "--every", "0", "--parallel", "3"
    )
    for code, out in outs:
        assert code in (errors.OK, errors.STOPPED), out[-3000:]
        assert "Traceback" not in out, out
        assert "offline" not in out, out
    _synced(machines)
    lines = machines[0].ledger()
    ids = [t["id"] for t in tasks]
    assert Counter(e.task for e in lines if e.event == "result") == dict.fromkeys(ids, 1)
    assert Counter(e.task for e in lines if e.event == "claim") == dict.fromkeys(ids, 1)
    for m in machines:
        assert [tid for tid in ids if where(m.room, tid) != ["done"]] == []
