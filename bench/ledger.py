"""Bench: ledger appends from 8 concurrent processes, beside the physical floor (raw
`fcntl.flock` + `os.write` of a line of the same size), and verification of the result.

Target: >= 5,000 appends/s with 0 lines lost, and the chain verifies.
Usage: python bench/ledger.py [--procs 8] [--each 2000]
"""

from __future__ import annotations

import argparse
import fcntl
import multiprocessing as mp
import os
import tempfile
import time
from pathlib import Path

import common  # noqa: F401  (puts the repository on sys.path)


def _ours(path: str, n: int, go: mp.Event) -> None:
    from control_room.ledger import append
    from control_room.ledger.events import Event

    event = Event("bench", (), ("task", "cost_usd", "detail"), "a bench line")

    go.wait()
    for i in range(n):
        append(
            Path(path),
            event,
            task=f"t-{i}",
            outcome="ok",
            cost_usd=0.01,
            detail=f"round 1; agent exit 0 in 1.2s; event number {i}",
        )


def _raw(path: str, n: int, line: bytes, go: mp.Event) -> None:
    go.wait()
    for _ in range(n):
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, line)
        os.close(fd)


def _race(target, args: tuple, procs: int) -> float:  # type: ignore[no-untyped-def]
    """Start ``procs`` processes, release them at once, return the seconds until all end."""
    go = mp.Event()
    ps = [mp.Process(target=target, args=(*args, go)) for _ in range(procs)]
    for p in ps:
        p.start()
    time.sleep(0.5)
    t = time.perf_counter()
    go.set()
    for p in ps:
        p.join()
        assert p.exitcode == 0
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--procs", type=int, default=8)
    ap.add_argument("--each", type=int, default=2000)
    a = ap.parse_args()
    total = a.procs * a.each
    from control_room.ledger.line import PREAMBLE
    from control_room.ledger.verify import verify

    with tempfile.TemporaryDirectory() as tmp:
        ours = Path(tmp) / "LEDGER.md"
        ours.write_text(PREAMBLE)
        os.environ["CONTROL_ROOM_WRITER"] = "bench"
        t_ours = _race(_ours, (str(ours), a.each), a.procs)
        report = verify(ours)
        sample = ours.read_text().splitlines()[-1].encode() + b"\n"
        raw = Path(tmp) / "raw.md"
        raw.write_bytes(b"")
        t_raw = _race(_raw, (str(raw), a.each, sample), a.procs)
        raw_lines = raw.read_bytes().count(b"\n")
    rate, floor = total / t_ours, total / t_raw
    lost = total - report.lines
    print(f"{a.procs} processes x {a.each:,} appends = {total:,} lines")
    print(
        f"control-room append   {rate:9,.0f} appends/s   lost {lost}, bad lines {len(report.problems)} "
        f"(target >= 5,000/s, 0 lost: {'ok' if rate >= 5000 and lost == 0 and report.ok else 'MISSED'})"
    )
    print(f"raw flock + os.write  {floor:9,.0f} appends/s   lines {raw_lines:,} (the physical floor)")
    print(f"ratio floor/ours      {floor / rate:9.2f}")


if __name__ == "__main__":
    main()
