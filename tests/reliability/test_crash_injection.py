"""Crash injection (#23): the dispatcher SIGKILLed at 50 random moments while it works a queue of
slow probe tasks, and at named points (``control_room/crashpoint.py``) in the middle of a claim,
a ledger append, a ROUTES.md rewrite and the writing down of a run. After each crash a person
recovers as they would (the next cycle, ``doctor``), and nothing is lost, doubled or run twice:
``tests/crashes.py`` ``check``. The seed of the random moments is printed;
``CONTROL_ROOM_CRASH_SEED=<seed>`` replays one run. The merge queue and a shared room's sync:
test_crash_injection_git.py."""

from __future__ import annotations

import random
import subprocess
import time
from pathlib import Path
from typing import Any

from crashes import SEED_VAR, check, kill_dispatcher, queue_slow, seed
from support import set_gate

from control_room.room.layout import Room

KILLS = 50
BATCH = 10  # tasks queued at a time, whenever fewer than this wait


def settle(cr: Any, room: Room, ids: list[str], runs: Path) -> None:
    """After the crashes, as a person would: `doctor`, then cycles until nothing is left to run;
    then every check, and `ledger verify`."""
    done = cr("doctor")
    assert done.returncode == 0, done.stdout + done.stderr
    for _ in range(3):  # (a crash may have left a task that a first recovery puts back)
        left = sum(1 for s in ("queue", "running") for _ in room.state_dir(s).glob("*.json"))
        if not left:
            break
        more = cr("run", "--every", "0", "--cycles", str(left // 2 + 1), "--parallel", "2")
        assert more.returncode == 0, more.stdout + more.stderr
    check(room, ids, runs, settled=True)
    verified = cr("ledger", "verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_the_dispatcher_killed_at_fifty_random_moments(cr: Any, room: Room, tmp_path: Path) -> None:
    chosen = seed()
    print(f"\ncrash injection: {SEED_VAR}={chosen} replays this run")
    rng = random.Random(chosen)
    set_gate(room, "max_parallel", "2")
    set_gate(room, "max_dispatcher_deaths", "1000")  # a task killed under many times still runs
    assert cr("route", "add", "r1", "--title", "the route").returncode == 0
    runs, ids = tmp_path / "runs.log", []
    argv = [cr.exe, "run", "--every", "0", "--cycles", "1000", "--parallel", "2"]
    started = time.monotonic()
    for kill in range(KILLS):
        if sum(1 for _ in room.state_dir("queue").glob("*.json")) < BATCH:
            for _ in range(BATCH):
                tid = f"t{len(ids):03d}"
                queue_slow(room, runs, tid, rng.uniform(0.05, 0.3), route="r1" if len(ids) % 2 else None)
                ids.append(tid)
        run = subprocess.Popen(argv, cwd=room.root, env=cr.env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)  # fmt: skip
        time.sleep(rng.uniform(0, 1.2) if kill % 5 else rng.uniform(0, 0.3))  # some kills come early
        out = kill_dispatcher(run)
        assert "Traceback" not in out, f"kill {kill} (seed {chosen}):\n{out}"
        check(room, ids, runs)
    print(f"{KILLS} kills over {len(ids)} tasks in {time.monotonic() - started:.1f} s")
    settle(cr, room, ids, runs)


# The named points: (CONTROL_ROOM_CRASH_AT, what the crash leaves), each hit by a cycle with two
# route tasks queued and nothing left to recover, so ``:n`` counts from that cycle's start. They
# run one after the other in one room (``{id}``: the first task of the point's two).
POINTS = [
    ("claim.moved", "the task in running/ without its claim file"),
    ("claim.written", "the claim file written, no claim line"),
    ("ledger.written", "the first ledger line whole, the lock not let go"),
    ("ledger.written:2", "the result line written, the task not moved"),
    ("agent.started", "the agent started, its process group not in the claim file yet"),
    ("result.logged", "the run written down, the task still in running/"),
    ("passed.moved", "a pass moved out of running/, what follows it not done, its claim file left"),
    ("write.ROUTES.md", "ROUTES.md's new text in its temp file, not renamed"),
    ("write.meta.json", "the run's meta.json not renamed into place"),
    ("write.{id}.json", "the task file rewritten for its move, not renamed"),
]


def test_the_dispatcher_killed_at_each_named_point(cr: Any, room: Room, tmp_path: Path) -> None:
    runs, ids = tmp_path / "runs.log", []
    set_gate(room, "max_parallel", "2")
    assert cr("route", "add", "r1", "--title", "the route").returncode == 0
    for k, (point, leaves) in enumerate(POINTS):
        pair = [f"p{k}a", f"p{k}b"]
        ids += pair
        point = point.format(id=pair[0])
        for tid in pair:  # (the agent.started point's first run naps long: it outlives its dispatcher)
            queue_slow(
                room, runs, tid, 5.0 if tid == pair[0] and point == "agent.started" else 0.05, route="r1"
            )
        crashed = cr("cycle", extra_env={"CONTROL_ROOM_CRASH_AT": point})
        assert crashed.returncode == -9, f"{point} was never hit ({leaves}): {crashed.stdout}{crashed.stderr}"
        try:
            check(room, ids, runs)
            # the next cycles recover, and run the rest: `run --parallel`, as a person's loop would
            again = cr("run", "--every", "0", "--cycles", "2", "--parallel", "2")
            assert again.returncode == 0, again.stdout + again.stderr
            check(room, ids, runs, settled=True)
        except AssertionError as exc:
            raise AssertionError(f"after a crash at {point} ({leaves}): {exc}") from exc
    settle(cr, room, ids, runs)  # doctor, and ledger verify
    # a run's row a crash kept out of ROUTES.md was recounted at recovery: nothing for a person
    recount = cr("route", "recount")
    assert recount.stdout == "ROUTES.md already agrees with the ledger\n", recount.stdout + recount.stderr
