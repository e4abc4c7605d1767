"""What a crash must never break (#23, tests/reliability/test_crash_injection*.py): slow probe
tasks that write down each run, and the checks made after every crash and its recovery."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from support import data_lines, git, probe_task

from control_room.ledger.line import HEADER, parse
from control_room.room.layout import STATES, Room

SEED_VAR = "CONTROL_ROOM_CRASH_SEED"  # replay one run of the random kills: its seed, as printed

# The agent: says when it starts and ends (one line each, appended to RUNS), sleeps (its first
# run; again, 50 ms at most), and may write a file into its work dir (a change to merge, in a room
# with a repo); and says so when an earlier run of its task is alive as it starts.
AGENT = """
import os, sys, time
runs, tid, nap, change = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
def say(what, pid=None):
    with open(runs, "a") as f:
        f.write(f"{what} {tid} {pid or os.getpid()} {time.time():.6f}\\n")
def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
earlier = {}  # an earlier run of this task that is still alive now is a run twice at once
if os.path.exists(runs):
    for line in open(runs).read().splitlines():
        what, who, pid, _ = line.split()
        if who == tid:
            if what in ("start", "end"):
                earlier[int(pid)] = what == "start"
say("start")
for pid, started in earlier.items():
    if started and alive(pid):
        say("overlap", pid)
time.sleep(nap if not earlier else min(nap, 0.05))  # a run again: short
if change:
    with open(change, "w") as f:
        f.write(tid + "\\n")
say("end")
print("did the work")
"""


def seed() -> int:
    """The seed of the random kills: ``CONTROL_ROOM_CRASH_SEED`` to replay one, else a fresh one."""
    raw = os.environ.get(SEED_VAR)
    return int(raw) if raw else random.SystemRandom().randrange(1 << 32)


def slow_task(runs: Path, tid: str, nap: float, *, change: bool = False, **fields: Any) -> dict[str, Any]:
    """A probe task whose command sleeps ``nap`` seconds and writes its start and end to ``runs``;
    ``change``: it also writes ``<id>.txt`` in its work dir (the repo's worktree)."""
    argv = [sys.executable, "-c", AGENT, str(runs), tid, f"{nap:.3f}", f"{tid}.txt" if change else ""]
    return probe_task(tid, command=argv, **fields)


def queue_slow(room: Room, runs: Path, tid: str, nap: float, **fields: Any) -> None:
    path = room.state_dir("queue") / f"{tid}.json"
    path.write_text(json.dumps(slow_task(runs, tid, nap, **fields)))


def dispatchers(root: int) -> list[int]:
    """``root`` and every control-room process below it (``run --parallel`` starts each cycle in
    a session of its own), from /proc; not the agents and validators they run."""
    parent: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    parent[int(name)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    found, todo = [root], [root]
    while todo:
        pid = todo.pop()
        for child, ppid in parent.items():
            if ppid == pid:
                todo.append(child)
                try:
                    with open(f"/proc/{child}/cmdline", "rb") as f:
                        ours = b"control_room" in f.read()
                except OSError:
                    ours = False
                if ours:
                    found.append(child)
    return found


def kill_dispatcher(p: subprocess.Popen[str]) -> str:
    """SIGKILL the dispatcher: ``run`` and its cycles, frozen first so none goes on while the
    others die (the agents run in sessions of their own, and outlive it as in a real crash);
    what it printed."""
    pids = dispatchers(p.pid)
    for sig in (signal.SIGSTOP, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
    out, _ = p.communicate(timeout=60)
    return out or ""


def runs_of(runs: Path) -> dict[str, list[tuple[str, int, float]]]:
    """Per task, its agent's lines: (start or end, pid, time), in the order written."""
    found: dict[str, list[tuple[str, int, float]]] = {}
    if not runs.exists():
        return found
    for line in runs.read_text().splitlines():
        what, tid, pid, at = line.split()
        found.setdefault(tid, []).append((what, int(pid), float(at)))
    return found


def check(room: Room, ids: list[str], runs: Path, *, settled: bool = False, repo: Path | None = None) -> None:
    """Every invariant a crash must keep. ``settled``: no dispatcher is at work now and every
    task has had its run since (so each is out of queue/ and running/)."""
    # every task in exactly one state folder: none lost, none doubled
    places = {tid: [s for s in STATES if (room.state_dir(s) / f"{tid}.json").exists()] for tid in ids}
    assert {t: p for t, p in places.items() if len(p) != 1} == {}, "a task lost or in two folders"
    # no half line: the ledger ends with a newline and every line below the header parses
    data = room.ledger.read_bytes()
    assert data.endswith(b"\n"), data[-300:]
    text = data.decode("utf-8")
    assert HEADER in text
    bad = [ln for ln in data_lines(room.ledger) if parse(ln) is None]
    assert bad == [], bad
    lines = [e for e in (parse(ln) for ln in data_lines(room.ledger)) if e is not None]
    claims = Counter(e.task for e in lines if e.event == "claim")
    passes = Counter(e.task for e in lines if e.event == "result" and e.outcome == "pass")
    results = Counter(e.task for e in lines if e.event == "result")
    merges = Counter(e.task for e in lines if e.event == "integrate" and e.outcome == "merged")
    assert {t: n for t, n in merges.items() if n > 1} == {}, "a task merged twice"
    # none run twice: one pass at most per task, and an agent started only under a claim line
    assert {t: n for t, n in passes.items() if n > 1} == {}, "a task passed twice"
    assert {t: n for t, n in results.items() if n > 1} == {}, "a task's run was written down twice"
    started = {t: sum(1 for w, _, _ in r if w == "start") for t, r in runs_of(runs).items()}
    assert {t: n for t, n in started.items() if n > claims[t]} == {}, "an agent ran without a claim"
    # and two runs of one task never at once (a run killed with its dispatcher ends before the next)
    both = {t: [pid for w, pid, _ in r if w == "overlap"] for t, r in runs_of(runs).items()}
    assert {t: p for t, p in both.items() if p} == {}, "a task's agent ran twice at once"
    for tid in ids:
        t = json.loads((room.state_dir(places[tid][0]) / f"{tid}.json").read_text())
        assert int(t.get("rounds", 0)) == 0, f"{tid}: a crash cost it a round"
        if settled:
            assert places[tid][0] not in ("queue", "running"), (tid, places[tid])
            assert passes[tid] == 1, (tid, passes[tid])
        if repo is not None:
            work(repo, tid, t, places[tid][0])
    if settled:
        running = room.state_dir("running")  # (a fresh clone has none: git keeps no empty folder)
        left = [n for n in (os.listdir(running) if running.exists() else []) if not n.startswith(".tmp-")]
        assert left == [], "swarm/running/ is not empty"  # (a killed write's temp file is no state)


def work(repo: Path, tid: str, t: dict[str, Any], state: str) -> None:
    """A task's work in the repo: merged (its commit reachable from main, its file there) once in
    to-test/ or done/; still on its branch, not lost, while it waits in passed/."""
    from control_room.dispatch.worktrees import place  # the branch name, as the dispatcher makes it

    if state in ("to-test", "done"):
        merged = str(t.get("merged_commit", ""))
        assert merged, f"{tid} is in {state}/ without a merged commit"
        git(repo, "merge-base", "--is-ancestor", merged, "main")  # (raises if it is not)
        assert git(repo, "show", f"main:{tid}.txt") == tid, f"{tid}'s work is not on main"
    elif state == "passed":
        branch = place.branch_of(t)
        assert git(repo, "show", f"{branch}:{tid}.txt") == tid, f"{tid}'s branch {branch} lost its work"
