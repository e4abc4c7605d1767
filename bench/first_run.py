"""Bench: the *first* run of `status`, `cycle`, `task list`, `digest` and `dashboard` on a room with
1,000,000 ledger lines and 10,000 queued tasks and no caches (a fresh clone, a deleted
.cache, an upgrade), each on a fresh copy of the room, against `python -c "import click"`.

Target: each <= 1 s. The older history is folded by the background `ledger fold` the first
command starts (docs/ledger.md); it is stopped before the next copy is timed, and timed alone.
Usage: python bench/first_run.py [--lines N] [--tasks N] [--runs N]
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

from common import (
    CLICK_FLOOR,
    Row,
    bench_env,
    big_room_main,
    build_room,
    control_room_cmd,
    median_time,
    no_budget,
    run_once,
    scratch,
    settle,
)

COMMANDS = (("status",), ("cycle",), ("task", "list"), ("digest",), ("dashboard",))


def measure(lines: int = 1_000_000, tasks: int = 10_000, runs: int = 5) -> list[Row]:
    rows = []
    with scratch() as tmp:
        pristine = Path(tmp) / "pristine"
        build_room(pristine, lines, tasks)
        no_budget(pristine)
        floor, _ = median_time(CLICK_FLOOR, max(runs, 5))
        room = Path(tmp) / "room"
        cr = control_room_cmd()
        for cmd in COMMANDS:
            times = []
            for _ in range(runs):
                shutil.rmtree(room, ignore_errors=True)
                shutil.copytree(pristine, room, symlinks=True)
                t, _, code = run_once([*cr, *cmd], bench_env(CONTROL_ROOM=str(room)))
                assert code in (0, 10), f"{' '.join(cmd)} exited {code}"
                times.append(t)
                settle(room, stop=True)
            med = sorted(times)[len(times) // 2]
            rows.append(Row(f"first `{' '.join(cmd)}`, median of {runs}", med, floor, "<= 1 s", med <= 1.0))
        # the background fold alone: what a first `status` and `cycle` leave recent, made whole
        shutil.rmtree(room, ignore_errors=True)
        shutil.copytree(pristine, room, symlinks=True)
        for cmd in (("status",), ("cycle",)):
            run_once([*cr, *cmd], bench_env(CONTROL_ROOM=str(room)))
            settle(room, stop=True)
        t0 = time.perf_counter()
        done = subprocess.run([*cr, "--room", str(room), "ledger", "fold"], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        rows.append(Row(f"... then the whole history ({done.stdout.strip()}), once, in the background",
                        time.perf_counter() - t0, floor, "", None))  # fmt: skip
    return rows


def main() -> None:
    big_room_main(measure, runs=5)


if __name__ == "__main__":
    main()
