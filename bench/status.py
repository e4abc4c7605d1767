"""Bench: `control-room status` and `task list` on a room with 1,000,000 ledger lines and
10,000 queued tasks, once its caches are built, against `python -c "import click"` measured in
the same run; and `ledger verify`, which hashes every line. (The first run of each, without
caches: bench/first_run.py.)

Targets: status median <= 1.5x the floor; status peak RSS <= 64 MB; task list <= 10x the floor.
Usage: python bench/status.py [--lines N] [--tasks N] [--runs N]
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
    paired_times,
    run_once,
    scratch,
    settle,
)


def measure(lines: int = 1_000_000, tasks: int = 10_000, runs: int = 15) -> list[Row]:
    with scratch() as tmp:
        room = Path(tmp) / "room"
        build_room(room, lines, tasks)
        env = bench_env(CONTROL_ROOM=str(room))
        cr = control_room_cmd()
        for cmd in (["status"], ["task", "list"]):
            assert run_once([*cr, *cmd], env)[2] == 0, f"{cmd} failed"
        settle(room)  # the background fold of the older history: done before anything is timed
        floor, warm, rss = paired_times(CLICK_FLOOR, [*cr, "status"], runs, env)
        rows = [
            Row(
                f"`status`, caches built, median of {runs}",
                warm,
                floor,
                "<= 1.5x the floor",
                warm / floor <= 1.5,
            ),
            Row("`status` peak RSS", rss / 1024, None, "<= 64 MB", rss / 1024 <= 64, unit="MB"),
        ]
        # What a status pays after a working day: 1,000 new lines, each read once by the summary,
        # the chain check and the history; the whole ledger is hashed only by `ledger verify`.
        from control_room.ledger import append
        from control_room.ledger.events import WARNING

        ledger = room / "control-room" / "LEDGER.md"
        for i in range(1000):
            append(ledger, WARNING, detail=f"bench line {i}")
        after, _, code = run_once([*cr, "status"], env)
        assert code == 0, f"status exited {code}"
        rows.append(Row("`status` after 1,000 new lines", after, floor, "", None))
        lfloor, lwarm, _ = paired_times(CLICK_FLOOR, [*cr, "task", "list"], max(5, runs // 3), env)
        rows.append(Row(f"`task list` of {tasks:,}, median of {max(5, runs // 3)}", lwarm, lfloor,
                        "<= 10x the floor", lwarm / lfloor <= 10))  # fmt: skip
        t0 = time.perf_counter()
        _, _, code = run_once([*cr, "ledger", "verify"], env)
        assert code == 0, f"ledger verify exited {code}"
        rate = (lines + 1000) / (time.perf_counter() - t0)
        rows.append(Row("`ledger verify` (hashes every line)", rate, None, "", None, unit="lines/s"))
        return rows


def main() -> None:
    big_room_main(measure, runs=15)


if __name__ == "__main__":
    main()
