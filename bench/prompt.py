"""Bench: the prompt an agent gets must stay the same size whether the ledger holds 100 lines
or a million (the digest is bounded; history is per route and bounded). Prints, per ledger
length, the prompt's size, its estimated tokens, the time to refresh the digest incrementally
and to assemble the prompt. Target: size flat within +-10%.
Usage: python bench/prompt.py
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from common import Row, append_results, scratch

from control_room.dispatch.round import prompt
from control_room.knowledge import digest, history
from control_room.room import settings as control
from control_room.room.layout import Room
from control_room.room.scaffold import init

TASK = {"id": "bench-task", "objective": "make the hot loop faster", "falsifier": "no gain",
        "validator": "python bench.py", "max_cost_usd": 1, "wall_clock_s": 600,
        "kill_condition": "two rounds without gain", "route": "route-7"}  # fmt: skip


def sizes(lines: tuple[int, ...] = (100, 10_000, 1_000_000)) -> list[tuple[int, int, int, float, float]]:
    """Per ledger length: (lines, prompt bytes, estimated tokens, first digest s, median refresh
    and assemble s)."""
    rows = []
    for n in lines:
        with scratch() as tmp:
            room = Room(Path(tmp) / "room")
            init(room.root)
            append_results(room.ledger, n)
            gate = control.load(room)
            t = time.perf_counter()
            digest.refresh(room, gate)  # a first refresh: on a big ledger, its recent lines
            first = time.perf_counter() - t
            history.state(room, whole=True)  # the background fold's work, done here: the whole history
            append_results(room.ledger, 10)
            times = []
            for _ in range(5):
                t = time.perf_counter()
                digest.refresh(room, gate)
                p = prompt.assemble(
                    room, TASK, "engineer", gate, history=digest.route_history(room, "route-7")
                )
                times.append(time.perf_counter() - t)
            rows.append((n, len(p.text.encode()), p.pressure(200_000)["prompt_tokens_est"], first,
                         statistics.median(times)))  # fmt: skip
    return rows


def measure() -> list[Row]:
    rows = sizes()
    base = rows[0][1]
    spread = max(abs(r[1] - base) / base for r in rows)
    what = f"prompt size, {rows[0][0]:,} -> {rows[-1][0]:,} ledger lines ({base:,} -> {rows[-1][1]:,} bytes)"
    return [Row(what, 100 * spread, None, "flat within 10%", spread <= 0.10, unit="% spread")]


def main() -> None:
    rows = sizes()
    base = rows[0][1]
    print(
        f"{'ledger lines':>12} {'prompt bytes':>12} {'~tokens':>8} {'vs 10^2':>8} "
        f"{'first digest':>13} {'refresh+assemble':>17}"
    )
    for n, size, tokens, first, med in rows:
        print(
            f"{n:>12,} {size:>12,} {tokens:>8,} {100 * (size - base) / base:>+7.1f}% "
            f"{first * 1000:>10.1f} ms {med * 1000:>14.1f} ms"
        )
    spread = max(abs(r[1] - base) / base for r in rows)
    print(f"size spread {100 * spread:.1f}% (target within 10%: {'ok' if spread <= 0.10 else 'MISSED'})")


if __name__ == "__main__":
    main()
