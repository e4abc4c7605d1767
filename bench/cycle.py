"""Bench: one `control-room cycle` whose agent and validator are `true`, on a room with
1,000,000 ledger lines and 10,000 queued tasks, against `python -c "import click"`.

Target: the median cycle <= 3x the floor. Usage: python bench/cycle.py [--lines N] [--tasks N] [--runs N]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from common import CLICK_FLOOR, bench_env, build_room, control_room_cmd, median_time, run_once, verdict

from control_room.dispatch.queue.index import RECHECK_S


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--tasks", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=15)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        room = Path(tmp) / "room"
        t0 = time.perf_counter()
        build_room(room, a.lines, a.tasks)
        control = room / "control-room" / "CONTROL.md"  # the bench's ledger spends more than $10 a day
        control.write_text(control.read_text().replace("daily_budget_usd: 10.0", "daily_budget_usd: 1000000"))
        print(
            f"room: {a.lines:,} ledger lines, {a.tasks:,} queued tasks "
            f"(built in {time.perf_counter() - t0:.1f}s)"
        )
        env = bench_env(CONTROL_ROOM=str(room))
        cmd = [*control_room_cmd(), "cycle"]
        cold, _, code = run_once(cmd, env)
        assert code == 10, f"the first cycle exited {code}, not 10 (passed)"
        floor, _ = median_time(CLICK_FLOOR, a.runs, bench_env())
        warm, rss = median_time(cmd, a.runs, env)
        full = []
        for _ in range(3):  # a cycle that fires more than RECHECK_S after the last full check
            time.sleep(RECHECK_S + 1)
            t, _, code = run_once(cmd, env)
            assert code == 10, f"cycle exited {code}"
            full.append(t)
        done = len(list((room / "swarm" / "done").glob("*.json")))
        assert done == a.runs + 4, f"{done} tasks done after {a.runs + 4} cycles"
        print(f"floor  python -c 'import click'  median {floor * 1000:7.1f} ms")
        print(f"cycle  first run (indexes the queue, summarises the ledger) {cold * 1000:7.1f} ms")
        print(
            f"cycle  median of {a.runs} (agent and validator `true`) {warm * 1000:7.1f} ms   "
            f"ratio {warm / floor:4.2f} (target <= 3: {verdict(warm / floor <= 3)}); "
            f"peak RSS {rss / 1024:.1f} MB"
        )
        full_med = sorted(full)[1]
        print(
            f"cycle  median of 3 fired > {RECHECK_S:g}s apart (every queued file stat()ed) "
            f"{full_med * 1000:7.1f} ms   "
            f"ratio {full_med / floor:4.2f}"
        )


if __name__ == "__main__":
    main()
