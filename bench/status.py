"""Bench: `control-room status` and `task list` on a room with 1,000,000 ledger lines and
10,000 queued tasks, against `python -c "import click"` measured in the same run.

Targets: status median <= 1.5x the floor; status peak RSS <= 64 MB; task list <= 10x the floor.
Usage: python bench/status.py [--lines N] [--tasks N] [--runs N]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from common import CLICK_FLOOR, bench_env, build_room, control_room_cmd, median_time, run_once, verdict


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
        size = (room / "control-room" / "LEDGER.md").stat().st_size
        print(
            f"room: {a.lines:,} ledger lines ({size / 1e6:.0f} MB), {a.tasks:,} queued tasks "
            f"(built in {time.perf_counter() - t0:.1f}s)"
        )
        env = bench_env(CONTROL_ROOM=str(room))
        cr = control_room_cmd()
        cold, cold_rss, code = run_once([*cr, "status"], env)
        assert code == 0, f"status exited {code}"
        floor, _ = median_time(CLICK_FLOOR, a.runs)
        warm, rss = median_time([*cr, "status"], a.runs, env)
        print(f"floor  python -c 'import click'   median {floor * 1000:7.1f} ms")
        print(
            f"status first run (builds the ledger summary checkpoint) {cold * 1000:7.1f} ms, "
            f"peak RSS {cold_rss / 1024:.1f} MB"
        )
        print(
            f"status median of {a.runs}               {warm * 1000:7.1f} ms   ratio {warm / floor:4.2f} "
            f"(target <= 1.5: {verdict(warm / floor <= 1.5)})"
        )
        peak = max(rss, cold_rss) / 1024
        print(f"status peak RSS                 {peak:7.1f} MB   (target <= 64 MB: {verdict(peak <= 64)})")
        # What a status pays after a working day: 1,000 new lines, each read once by the summary,
        # the chain check and the history; the whole ledger is hashed only by `ledger verify`.
        from control_room.ledger import append
        from control_room.ledger.events import WARNING

        ledger = room / "control-room" / "LEDGER.md"
        for i in range(1000):
            append(ledger, WARNING, detail=f"bench line {i}")
        after, _, code = run_once([*cr, "status"], env)
        assert code == 0, f"status exited {code}"
        print(f"status after 1,000 new lines      {after * 1000:7.1f} ms   ratio {after / floor:4.2f}")
        again, _ = median_time([*cr, "status"], a.runs, env)
        print(f"status median, nothing new again  {again * 1000:7.1f} ms   ratio {again / floor:4.2f}")
        full, _, code = run_once([*cr, "ledger", "verify"], env)
        assert code == 0, f"ledger verify exited {code}"
        print(f"ledger verify (hashes every line) {full * 1000:7.1f} ms")
        lcold, _, code = run_once([*cr, "task", "list"], env)
        assert code == 0, f"task list exited {code}"
        lwarm, lrss = median_time([*cr, "task", "list"], max(3, a.runs // 3), env)
        print(
            f"task list first run (reads all {a.tasks:,} files)  {lcold * 1000:7.1f} ms   "
            f"ratio {lcold / floor:5.2f}"
        )
        print(
            f"task list median                {lwarm * 1000:7.1f} ms   ratio {lwarm / floor:5.2f} "
            f"(target <= 10: {verdict(lwarm / floor <= 10)}); peak RSS {lrss / 1024:.1f} MB"
        )


if __name__ == "__main__":
    main()
