"""Bench: one `control-room cycle` whose agent and validator are `true`, on a room with
1,000,000 ledger lines and 10,000 queued tasks, against `python -c "import click"`.

Target: the median cycle, once its caches are built, <= 3x the floor (the first: bench/first_run.py).
Usage: python bench/cycle.py [--lines N] [--tasks N] [--runs N]
"""

from __future__ import annotations

import time
from pathlib import Path

from common import (
    CLICK_FLOOR,
    Row,
    bench_env,
    big_room_main,
    build_room,
    control_room_cmd,
    no_budget,
    paired_times,
    run_once,
    scratch,
    settle,
)

from control_room.dispatch.queue.listing import RECHECK_S


def measure(lines: int = 1_000_000, tasks: int = 10_000, runs: int = 15) -> list[Row]:
    with scratch() as tmp:
        room = Path(tmp) / "room"
        build_room(room, lines, tasks)
        no_budget(room)
        env = bench_env(CONTROL_ROOM=str(room))
        cmd = [*control_room_cmd(), "cycle"]
        _, _, code = run_once(cmd, env)
        assert code == 10, f"the first cycle exited {code}, not 10 (passed)"
        settle(room)  # the background fold of the older history: done before anything is timed
        floor, warm, rss = paired_times(CLICK_FLOOR, cmd, runs, env)
        full = []
        for _ in range(3):  # a cycle that fires more than RECHECK_S after the last full check
            time.sleep(RECHECK_S + 1)
            t, _, code = run_once(cmd, env)
            assert code == 10, f"cycle exited {code}"
            full.append(t)
        done = len(list((room / "swarm" / "done").glob("*.json")))
        assert done == runs + 4, f"{done} tasks done after {runs + 4} cycles"
        return [
            Row(f"`cycle` (agent and validator `true`), median of {runs}", warm, floor, "<= 3x the floor",
                warm / floor <= 3),
            Row(f"`cycle` fired > {RECHECK_S:g} s after the last (every queued file stat()ed), median of 3",
                sorted(full)[1], floor, "", None),
            Row("`cycle` peak RSS", rss / 1024, None, "", None, unit="MB"),
        ]  # fmt: skip


def main() -> None:
    big_room_main(measure, runs=15)


if __name__ == "__main__":
    main()
