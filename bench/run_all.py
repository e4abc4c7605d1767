"""Every bench target in one table: runs each bench's ``measure`` (each measures its own
baseline in the same run), prints the table and writes it into docs/performance.md between
the ``run_all`` markers. Medians of at least 5 runs throughout. The benches' rooms are removed
at the end of the run, not between benches (``common.scratch``).

Usage: python bench/run_all.py [--only NAME ...] [--no-write]   (about 10 minutes)
"""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import sys
import time
from pathlib import Path

from common import ROOT, Row, file_cost_ms, print_rows, removed_at_end

# The racing loops last: each of their claims makes and frees files by the thousand, which would
# slow the file creation (git's objects, rooms) of any bench after them (common.scratch).
BENCHES = ("first_run", "status", "cycle", "ledger", "many_machines", "prompt", "races")
DOC = ROOT / "docs" / "performance.md"
BEGIN, END = "<!-- run_all: begin -->", "<!-- run_all: end -->"


def table(rows: list[Row]) -> str:
    out = ["| what | figure | floor in the same run | ratio | target | |", "|---|---:|---:|---:|---|---|"]
    for r in rows:
        floor = f"{r.base * 1000:.1f} ms" if r.base is not None and r.unit == "s" else ""
        out.append(f"| {r.what} | {r.figure()} | {floor} | {r.ratio()} | {r.target} | {r.verdict()} |")
    return "\n".join(out)


def disk(files: tuple[float, float]) -> str:
    return f"a new file cost {files[0]:.2f} ms at the start and {files[1]:.2f} ms at the end"


def write(rows: list[Row], took: float, files: tuple[float, float]) -> None:
    when = time.strftime("%Y-%m-%d", time.gmtime())
    head = (f"`python bench/run_all.py`, {when}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"{platform.system()}; {took / 60:.0f} min; {disk(files)} (0.02 on a quiet disk). The floor "
            "is `python -c \"import click\"`, measured in the same run.")  # fmt: skip
    block = f"{BEGIN}\n{head}\n\n{table(rows)}\n{END}"
    text = DOC.read_text(encoding="utf-8")
    if BEGIN in text and END in text:
        text = text[: text.index(BEGIN)] + block + text[text.index(END) + len(END) :]
    else:
        text = text.rstrip("\n") + f"\n\n## All targets\n\n{block}\n"
    DOC.write_text(text, encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", nargs="*", default=list(BENCHES), choices=BENCHES)
    ap.add_argument("--no-write", action="store_true", help="print the table only")
    a = ap.parse_args()
    t0 = time.perf_counter()
    rows: list[Row] = []
    with removed_at_end():  # no bench's clean-up slows the next one down (common.scratch)
        before = file_cost_ms()
        for name in a.only:
            print(f"-- {name}", file=sys.stderr, flush=True)
            found = importlib.import_module(name).measure()
            print_rows(found)
            rows += found
        files = (before, file_cost_ms())
    took = time.perf_counter() - t0
    print()
    print(table(rows))
    print(f"\n{disk(files)} (0.02 on a quiet disk)")
    missed = [r.what for r in rows if r.ok is False]
    print(f"\n{len(rows)} figures, {len(missed)} targets missed{': ' + '; '.join(missed) if missed else ''}")
    if not a.no_write and a.only == list(BENCHES):
        write(rows, took, files)
        print(f"written into {DOC.relative_to(Path.cwd()) if DOC.is_relative_to(Path.cwd()) else DOC}")


if __name__ == "__main__":
    main()
