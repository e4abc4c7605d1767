"""Bench: cycles racing for one queue (issue #23, reliability item 3 and its targets).

1. Eight `control-room run --every 0` loops started together on one room over 10,000 probe
   tasks (agent and validator `true`, max_parallel 8): wall time until every task is in
   swarm/done/, claims/s = tasks / that time, and doubles (a task claimed or run more than
   once, from the ledger). Target: >= 200 claims/s, 0 doubles.
2. Three clones of one shared room (a bare git remote, tests/machines.py's recipe), each
   running `run --every 0` over 60 tasks: claims/s the same way. Target: >= 3 claims/s.

Figures are printed; nothing is asserted about time. Usage:
python bench/races.py [--tasks 10000] [--loops 8] [--shared-tasks 60] [--clones 3] [--profile FILE]
(--profile: one of the loops runs under cProfile, its stats written to FILE.)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from common import Row, bench_env, control_room_cmd, scratch
from many_machines import done_on_remote, set_key, shared_room, task

from control_room.ledger.read import entries

CR = control_room_cmd()


def doubles(ledger: Path) -> tuple[int, int, int]:
    """(claims, results, tasks claimed or run more than once)."""
    lines = list(entries(ledger))
    claims = Counter(e.task for e in lines if e.event == "claim")
    results = Counter(e.task for e in lines if e.event == "result")
    twice = {t for t, n in claims.items() if n > 1} | {t for t, n in results.items() if n > 1}
    return sum(claims.values()), sum(results.values()), len(twice)


def racing(tmp: Path, n: int, loops: int, profile: str | None, budget: float = 0) -> tuple[int, float, int]:
    """8 (``loops``) racing loops over ``n`` tasks, stopped after ``budget`` s if given:
    (tasks done, seconds, tasks claimed or run twice)."""
    room = tmp / "room"
    room.mkdir()
    env = bench_env(CONTROL_ROOM_WRITER="bench")
    env.pop("CONTROL_ROOM", None)
    subprocess.run([*CR, "init", "."], cwd=room, env=env, check=True, capture_output=True)
    set_key(room, "max_parallel", str(loops))
    for k in range(n):
        (room / "swarm" / "queue" / f"t{k:05d}.json").write_text(json.dumps(task(f"t{k:05d}")))
    argv = [*CR, "run", "--every", "0", "--cycles", str(10 * n)]
    profiled = [sys.executable, "-m", "cProfile", "-o", profile, *argv] if profile else argv
    done = room / "swarm" / "done"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    quiet = {"cwd": room, "env": env, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    procs = [subprocess.Popen(profiled if k == 0 else argv, **quiet) for k in range(loops)]  # type: ignore[call-overload]
    while len(os.listdir(done)) < n and any(p.poll() is None for p in procs):
        if budget and time.monotonic() - t0 > budget:
            break
        time.sleep(0.2)
    took = time.monotonic() - t0
    finished = len(os.listdir(done))
    subprocess.run([*CR, "stop", "--reason", "bench done"], cwd=room, env=env, capture_output=True)
    for p in procs:
        p.wait(timeout=300)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the loops and all they ran (and `stop`)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    claims, results, twice = doubles(room / "control-room" / "LEDGER.md")
    print(f"{loops} racing loops, {n:,} tasks: {finished:,} done in {took:.1f} s")
    print(f"  CPU {cpu:.1f} s: {cpu / max(1, finished) * 1000:.1f} ms a claim (target <= 10 on 2 cores)")
    print(f"  claims/s {finished / took:.1f} (target >= 200); claims {claims:,}, results {results:,}, "
          f"doubles {twice}")  # fmt: skip
    return finished, took, twice


def shared(tmp: Path, n: int, clones: int) -> tuple[float, int]:
    """``clones`` clones of a shared room over ``n`` tasks: (claims/s, tasks claimed or run twice)."""
    hosts = [f"m{k}" for k in range(1, clones + 1)]
    remote, paths = shared_room(tmp / "shared", hosts, n)
    t0 = time.monotonic()
    procs = []
    for host, path in zip(hosts, paths, strict=True):
        env = bench_env(CONTROL_ROOM_WRITER=host)
        env.pop("CONTROL_ROOM", None)
        cmd = [*CR, "run", "--every", "0", "--cycles", str(10 * n)]
        procs.append(subprocess.Popen(cmd, cwd=path, env=env, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL))  # fmt: skip
    while done_on_remote(remote) < n and any(p.poll() is None for p in procs):
        time.sleep(0.2)
    took = time.monotonic() - t0
    for host, path in zip(hosts, paths, strict=True):  # then stop each; what each ran reaches the others
        env = bench_env(CONTROL_ROOM_WRITER=host)
        env.pop("CONTROL_ROOM", None)
        subprocess.run([*CR, "stop", "--reason", "bench done"], cwd=path, env=env, capture_output=True)
    for p in procs:
        p.wait(timeout=300)
    for host, path in zip(hosts, paths, strict=True):
        env = bench_env(CONTROL_ROOM_WRITER=host)
        env.pop("CONTROL_ROOM", None)
        subprocess.run([*CR, "resume"], cwd=path, env=env, capture_output=True)
        subprocess.run([*CR, "sync"], cwd=path, env=env, capture_output=True)
    claims, results, twice = doubles(paths[-1] / "control-room" / "LEDGER.md")
    print(f"{clones} clones of a shared room, {n} tasks: all done on the remote in {took:.1f} s")
    print(f"  claims/s {n / took:.2f} (target >= 3); claims {claims}, results {results}, doubles {twice}")
    return n / took, twice


def measure(tasks: int = 10_000, loops: int = 8, budget: float = 90, shared_tasks: int = 60) -> list[Row]:
    """The racing loops for at most ``budget`` s (claims/s over what they finished), then the
    shared room to the end."""
    with scratch() as tmp:
        done, took, twice = racing(Path(tmp), tasks, loops, None, budget)
        rate = done / took
        what = f"{loops} racing `run --every 0` loops, {tasks:,} tasks ({done:,} claimed in {took:.0f} s, "
        what += f"{twice} doubles)"
        rows = [
            Row(what, rate, None, ">= 200 claims/s, 0 doubles", rate >= 200 and twice == 0, unit="claims/s")
        ]
        srate, stwice = shared(Path(tmp), shared_tasks, 3)
        rows.append(Row(f"3 clones of a shared room over {shared_tasks} tasks, {stwice} doubles", srate, None,
                        ">= 3 claims/s, 0 doubles", srate >= 3 and stwice == 0, unit="claims/s"))  # fmt: skip
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=10_000)
    ap.add_argument("--loops", type=int, default=8)
    ap.add_argument("--shared-tasks", type=int, default=60)
    ap.add_argument("--clones", type=int, default=3)
    ap.add_argument("--profile", default=None)
    ap.add_argument("--only", choices=("racing", "shared"), default=None)
    ap.add_argument("--budget", type=float, default=0, help="stop the racing loops after this many s")
    a = ap.parse_args()
    with scratch() as tmp:
        if a.only != "shared":
            racing(Path(tmp), a.tasks, a.loops, a.profile, a.budget)
        if a.only != "racing":
            shared(Path(tmp), a.shared_tasks, a.clones)


if __name__ == "__main__":
    main()
