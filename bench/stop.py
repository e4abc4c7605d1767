"""Bench: how fast STOP (and a time-out) kills a running agent's whole process group.

A probe task runs tests/fakes/sleeper.py, which starts a grandchild and sleeps. We create STOP
and measure until the grandchild is gone and until `control-room cycle` has exited (the task
back in the queue). Then the same for a 1 s wall clock, measured from the agent's own start
plus 1 s: the agent starts a few tens of ms after the dispatcher's clock does, so a figure
slightly below zero means "at once". Target: the group dead within 2 s.
Usage: python bench/stop.py [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import ROOT, bench_env, control_room_cmd, scratch

from control_room.room.scaffold import init

SLEEPER = ROOT / "tests" / "fakes" / "sleeper.py"


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # a zombie is dead for our purpose: its parent (the agent) is gone and it runs nothing
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except OSError:
        return True


def one(tmp: Path, n: int, *, timeout: bool) -> tuple[float, float]:
    tag = f"{n}{'t' if timeout else 's'}"
    room = tmp / f"room{tag}"
    init(room)
    pidfile, ready = tmp / f"pid{tag}", tmp / f"ready{tag}"
    task = {"id": "t", "objective": "o", "falsifier": "f", "validator": "true", "max_cost_usd": 0,
            "wall_clock_s": 1 if timeout else 600, "kill_condition": "k", "adapter": "probe",
            "command": [sys.executable, str(SLEEPER), "--pidfile", str(pidfile),
                        "--ready", str(ready)]}  # fmt: skip
    (room / "swarm" / "queue" / "t.json").write_text(json.dumps(task))
    proc = subprocess.Popen([*control_room_cmd(), "cycle"], env=bench_env(CONTROL_ROOM=str(room)),
                            stdout=subprocess.DEVNULL)  # fmt: skip
    while not ready.exists():
        time.sleep(0.01)
    pid, agent_started = pidfile.read_text().split()
    grandchild = int(pid)
    start = time.monotonic()
    if not timeout:
        (room / "STOP").write_text("bench\n")
    else:  # the wall clock ended 1 s after the agent started (a little later, for its start-up)
        start = float(agent_started) + 1.0 - time.time() + time.monotonic()
    while not _gone(grandchild):
        time.sleep(0.005)
    dead = time.monotonic() - start
    proc.wait()
    return dead, time.monotonic() - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    with scratch() as tmp:
        for label, timeout in (("STOP", False), ("time-out", True)):
            runs = [one(Path(tmp), n, timeout=timeout) for n in range(a.runs)]
            dead = [r[0] for r in runs]
            done = [r[1] for r in runs]
            print(
                f"{label:<9} group dead after median {statistics.median(dead):.2f}s, max {max(dead):.2f}s; "
                f"cycle exited after median {statistics.median(done):.2f}s "
                f"(target dead within 2 s: {'ok' if max(dead) <= 2 else 'MISSED'})"
            )


if __name__ == "__main__":
    main()
