"""Bench: ledger appends from 8 concurrent processes, beside the physical floor (raw
`fcntl.flock` + `os.write` of a line of the same size, measured in the same run), and
verification of the result: every line there, the chain verifies.

Target: >= 100,000 appends/s with 0 lines lost and `ledger verify` clean. The floor depends on
the machine (about 158,000/s where the target was set), so the ratio ours/floor is printed too:
where the floor is lower, that ratio is the figure to compare. Also measured in the same run:
the leanest hash-chained append Python can make (``_lean``: the lock, a stat, a read of the
tail, a hash, a write, nothing else), the ceiling of any append written in Python here; and the
same written in C (bench/lean_append.c, built here where a C compiler and OpenSSL are), what a
compiled critical section could make of it.
Usage: python bench/ledger.py [--procs 8] [--each 2000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import fcntl
import multiprocessing as mp
import os
import statistics
import subprocess
import time
from pathlib import Path

from common import Row, print_rows, scratch

TARGET = 100_000  # appends/s, 8 processes


def _ours(path: str, n: int, go: mp.Event) -> None:
    from control_room.ledger import append
    from control_room.ledger.events import Event

    event = Event("bench", (), ("task", "cost_usd", "detail"), "a bench line")
    ledger = Path(path)  # as a dispatcher holds its room's

    go.wait()
    for i in range(n):
        append(
            ledger,
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


def _lean(path: str, n: int, go: mp.Event) -> None:
    """The least a Python process can do for one hash-chained line under the lock: ``flock``,
    ``stat`` (the path still names the file, and its size), ``pread`` of the tail for the
    previous hash, SHA-256, one ``write``. No parsing, escaping, redaction or checks: a ceiling
    for ours, not an alternative to it."""
    import hashlib

    fd = os.open(path, os.O_RDWR | os.O_APPEND)
    name, sha = os.fsencode(path), hashlib.sha256
    go.wait()
    for i in range(n):
        body = f"| 2026-12-07T10:00:00Z | 0123456789abcdef | bench | bench | t-{i} | | | ok | 0.01 | round 1; agent exit 0 in 1.2s; event number {i} | ".encode()  # noqa: E501
        fcntl.flock(fd, fcntl.LOCK_EX)
        end = os.stat(name).st_size
        prev = os.pread(fd, 16, end - 15)[:12] if end > 15 else b"genesis"
        line = body + prev + b" |"
        os.write(fd, line + b" " + sha(line).hexdigest()[:12].encode() + b" |\n")
        fcntl.flock(fd, fcntl.LOCK_UN)
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


def compiled(where: Path) -> Path | None:
    """bench/lean_append.c built in ``where``; None where it cannot be (no compiler, no OpenSSL)."""
    exe = where / "lean_append"
    source = Path(__file__).with_name("lean_append.c")
    try:
        done = subprocess.run(["cc", "-O2", "-o", str(exe), str(source), "-lcrypto"], capture_output=True)
    except OSError:
        return None
    return exe if done.returncode == 0 else None


def one_run(procs: int, each: int, c: Path | None = None) -> tuple[float, float, int, int, int, float, float]:
    """(ours appends/s, floor appends/s, lines lost, bad lines, raw lines lost, the leanest
    Python append's lines/s, the same in C (``c``; 0 without)) of one run."""
    from control_room.ledger.line import PREAMBLE
    from control_room.ledger.verify import verify

    total = procs * each
    with scratch() as tmp:
        ours = Path(tmp) / "LEDGER.md"
        ours.write_text(PREAMBLE)
        t_ours = _race(_ours, (str(ours), each), procs)
        report = verify(ours)
        sample = ours.read_text().splitlines()[-1].encode() + b"\n"
        raw = Path(tmp) / "raw.md"
        raw.write_bytes(b"")
        t_raw = _race(_raw, (str(raw), each, sample), procs)
        raw_lost = total - raw.read_bytes().count(b"\n")
        lean = Path(tmp) / "lean.md"
        lean.write_bytes(sample)
        t_lean = _race(_lean, (str(lean), each), procs)
        in_c = 0.0
        if c is not None:
            out = Path(tmp) / "c.md"
            out.write_bytes(sample)
            done = subprocess.run([str(c), str(out), str(procs), str(each)], capture_output=True)
            assert done.returncode == 0 and out.read_bytes().count(b"\n") == total + 1
            in_c = total / float(done.stdout)
    bad = len(report.problems) if report.problems or report.ok else 1  # not ok with no line named: 1
    return total / t_ours, total / t_raw, total - report.lines, bad, raw_lost, total / t_lean, in_c


def measure(procs: int = 8, each: int = 2000, repeat: int = 5) -> list[Row]:
    os.environ["CONTROL_ROOM_WRITER"] = "bench"  # every process one writer: the chains interleave
    with scratch() as tmp:
        c = compiled(Path(tmp))
        runs = [one_run(procs, each, c) for _ in range(repeat)]
    rate = statistics.median(r[0] for r in runs)
    floor = statistics.median(r[1] for r in runs)
    lean = statistics.median(r[5] for r in runs)
    in_c = statistics.median(r[6] for r in runs)
    lost, bad, _ = (sum(r[i] for r in runs) for i in (2, 3, 4))
    said_c = f"the same in C {in_c:,.0f}/s" if c is not None else "no C compiler or OpenSSL for it in C"
    what = (f"ledger appends, {procs} processes x {each:,}, median of {repeat} ({lost} lost, {bad} bad "
            f"lines; raw flock + write {floor:,.0f}/s, {rate / floor:.2f} of it; the leanest Python "
            f"chained append {lean:,.0f}/s, {lean / floor:.2f} of it; {said_c})")  # fmt: skip
    return [Row(what, rate, None, f">= {TARGET:,}/s, 0 lost", rate >= TARGET and lost == 0 and bad == 0,
                unit="appends/s")]  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--procs", type=int, default=8)
    ap.add_argument("--each", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3, help="runs; the medians are printed")
    a = ap.parse_args()
    print_rows(measure(a.procs, a.each, a.repeat))


if __name__ == "__main__":
    main()
