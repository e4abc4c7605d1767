"""Bench: `control-room dashboard` on a room with 1,000,000 ledger lines (plus 5,000 result lines
carrying a metric), against `control-room ledger verify` on the same ledger, measured in the
same run (both read every line once; verify hashes each, the dashboard folds each and writes
it into a page).

Target: a build after 1,000 new lines within 1x `ledger verify` (it reads only those lines and
rewrites only the newest ledger page). Also shown, with no target: the first build with nothing
cached anywhere (every fold from the first line, every page written), a build with nothing new,
one into a new folder once `status` has warmed the room's caches, and `--serve`'s pages
rendered in-process (the first request folds what the room's caches have not; later ones read
only what was appended).
Usage: python bench/dashboard.py [--lines N]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from common import bench_env, build_room, control_room_cmd, run_once, scratch, verdict


def metric_lines(ledger: Path, n: int) -> None:
    """``n`` result lines whose JSON detail carries `metrics` (unchained: verify is not run after)."""
    with open(ledger, "a", encoding="utf-8") as f:
        for i in range(n):
            detail = json.dumps(
                {
                    "round": 1,
                    "exit": 0,
                    "seconds": 1.0,
                    "report": "ok",
                    "validator": "passed",
                    "metrics": {"speedup": 1 + i / n},
                    "decision": "d",
                }
            )
            f.write(
                f"| 2026-01-{1 + i % 28:02d}T00:00:00Z | {i:016x} | bench | result | m-{i} | route-0 | probe "
                f"| pass | 0.001 | {detail} | - | 000000000000 |\n"
            )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=1_000_000)
    a = ap.parse_args()
    with scratch() as tmp:
        room = Path(tmp) / "room"
        t0 = time.perf_counter()
        build_room(room, a.lines, 100)
        ledger = room / "control-room" / "LEDGER.md"
        env = bench_env(CONTROL_ROOM=str(room))
        cr = control_room_cmd()
        verify, _, code = run_once([*cr, "ledger", "verify"], env)
        assert code == 0, f"ledger verify exited {code}"
        metric_lines(ledger, 5000)
        size = ledger.stat().st_size
        print(
            f"room: {a.lines + 5000:,} ledger lines ({size / 1e6:.0f} MB), 100 queued tasks "
            f"(built in {time.perf_counter() - t0:.1f}s)"
        )
        t = time.perf_counter()
        with open(ledger, "rb") as f:
            lines = sum(block.count(b"\n") for block in iter(lambda: f.read(1 << 20), b""))
        count = time.perf_counter() - t
        print(f"baseline  plain line count ({lines:,} lines)      {count:7.2f} s")
        print(f"baseline  ledger verify (hashes every line)     {verify:7.2f} s")
        out = Path(tmp) / "site"
        first, rss, code = run_once([*cr, "dashboard", "--out", str(out)], env)
        assert code == 0, f"dashboard exited {code}"
        pages = len(list(out.glob("ledger-*.html")))
        mb = sum(p.stat().st_size for p in out.iterdir()) / 1e6
        print(
            f"dashboard first build ({pages:,} ledger pages, {mb:.0f} MB)  {first:7.2f} s   "
            f"ratio to verify {first / verify:4.2f}; "
            f"peak RSS {rss / 1024:.0f} MB"
        )
        again, _, code = run_once([*cr, "dashboard", "--out", str(out)], env)
        assert code == 0
        print(f"dashboard again, nothing new                    {again:7.2f} s   ratio {again / verify:4.2f}")
        from control_room.ledger import append
        from control_room.ledger.events import WARNING

        for i in range(1000):
            append(ledger, WARNING, detail=f"bench line {i}")
        after, _, code = run_once([*cr, "dashboard", "--out", str(out)], env)
        assert code == 0
        print(
            f"dashboard after 1,000 new lines                 {after:7.2f} s   ratio {after / verify:4.2f} "
            f"(target <= 1: {verdict(after / verify <= 1)})"
        )
        warm = Path(tmp) / "site-warm"
        code = run_once([*cr, "status"], env)[2]
        assert code == 0
        fresh, _, code = run_once([*cr, "dashboard", "--out", str(warm)], env)
        assert code == 0
        print(
            f"dashboard into a new folder after `status` (its caches warm)  {fresh:7.2f} s   "
            f"ratio {fresh / verify:4.2f}"
        )
        from control_room.room.layout import Room
        from control_room.store import cache
        from control_room.views.dashboard import fold, site

        memory: dict[str, bytes] = {}
        r = Room(room)
        for label in ("first request", "second request"):
            t = time.perf_counter()
            with cache.held(memory):
                text = site.render(r, "index.html", fold.state(r))
            assert text is not None
            print(f"--serve index.html, {label:<29}{time.perf_counter() - t:7.2f} s")
        t = time.perf_counter()
        with cache.held(memory):
            assert site.render(r, "ledger.html", fold.state(r)) is not None
        print(f"--serve ledger.html (newest page)               {time.perf_counter() - t:7.2f} s")


if __name__ == "__main__":
    main()
