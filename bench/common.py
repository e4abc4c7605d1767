"""Helpers shared by the bench scripts: a big room, timing of whole commands, peak RSS.

Every figure is measured in the same run as its baseline (`python -c "import click"`), so
ratios hold on whatever machine runs the bench.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CLICK_FLOOR = [sys.executable, "-c", "import click"]


# Where ``scratch`` folders go until the end of the run (``removed_at_end``, for
# ``bench/run_all.py``); empty: each is removed as its bench ends.
KEEP_UNTIL_END: list[Path] = []


@contextlib.contextmanager
def scratch() -> Iterator[str]:
    """A temporary folder for one bench's rooms. Under run_all, it is removed at the end of the
    whole run, not when the bench ends: on a file system without a journal (ext4 here), files
    made in the minutes after many deletions cost the kernel up to 35 times the CPU (it passes
    over every recently freed inode), so each bench would pay for the rooms of the one before."""
    if not KEEP_UNTIL_END:
        with tempfile.TemporaryDirectory() as tmp:
            yield tmp
        return
    yield tempfile.mkdtemp(dir=KEEP_UNTIL_END[0])


@contextlib.contextmanager
def removed_at_end() -> Iterator[None]:
    """For run_all: every ``scratch`` folder kept until the block ends, then removed."""
    KEEP_UNTIL_END[:] = [Path(tempfile.mkdtemp(prefix="bench-run-"))]
    try:
        yield
    finally:
        shutil.rmtree(KEEP_UNTIL_END.pop(), ignore_errors=True)


def file_cost_ms(n: int = 500) -> float:
    """What a new file costs here now, in ms (``n`` made in a fresh folder of the temporary
    directory, kept as ``scratch`` keeps its folders). On this machine's file system (ext4 without
    a journal) 0.02 on a quiet disk and up to 0.7 in the minutes after many deletions: run_all
    prints it so that a slow disk is told from slow code."""
    with scratch() as tmp:
        start = time.perf_counter()
        for i in range(n):
            os.close(os.open(os.path.join(tmp, f"f{i}"), os.O_CREAT | os.O_WRONLY, 0o644))
        return (time.perf_counter() - start) / n * 1000


def bench_env(**extra: str) -> dict[str, str]:
    """The environment for timed commands: as a user's machine has it, bytecode caching on
    (some sandboxes set PYTHONDONTWRITEBYTECODE, which would recompile every module per run)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(extra)
    return env


def control_room_cmd() -> list[str]:
    exe = Path(sys.executable).parent / "control-room"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "control_room"]


def build_room(path: Path, ledger_lines: int, queued: int, *, days: int = 30) -> Path:
    """A room whose ledger holds ``ledger_lines`` chained lines over ``days`` days (the last
    of them today) and whose queue holds ``queued`` valid tasks."""
    from control_room.ledger.line import GENESIS, PREAMBLE, Entry, render
    from control_room.room import swarm
    from control_room.room.scaffold import init

    init(path)
    now = time.time()
    prev = GENESIS
    per_day = max(1, ledger_lines // days)
    events = ("claim", "result", "task-add", "result")
    with open(path / "control-room" / "LEDGER.md", "w", encoding="utf-8") as f:
        f.write(PREAMBLE)
        buf = []
        for i in range(ledger_lines):
            day = days - 1 - min(days - 1, i // per_day)
            t = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - day * 86400))
            e = Entry(
                time=t,
                id=f"{i:016x}",
                writer="bench",
                event=events[i % 4],
                task=f"t-{i % 5000}",
                route=f"route-{i % 7}",
                adapter=("probe", "claude", "codex")[i % 3],
                outcome=("pass", "fail", "queued", "running")[i % 4],
                cost_usd="0.01" if i % 4 == 1 else "0",
                detail=f"round 1; agent exit 0 in 1.2s; event number {i}",
                prev=prev,
            )
            line, prev = render(e)
            buf.append(line + "\n")
            if len(buf) >= 10000:
                f.write("".join(buf))
                buf.clear()
        f.write("".join(buf))
    queue = path / "swarm" / "queue"
    for i in range(queued):
        task = {
            "id": f"task-{i:05d}",
            "objective": f"bench task number {i}: try lever {i % 13}",
            "falsifier": "no gain",
            "validator": "true",
            "max_cost_usd": 0.01,
            "wall_clock_s": 60,
            "kill_condition": "two rounds without gain",
            "route": f"route-{i % 7}",
            "priority": i % 3,
            "adapter": "probe",
            "command": "true",
            "created": "2026-01-01T00:00:00Z",
        }
        (queue / f"task-{i:05d}.json").write_text(swarm.dumps(task))  # as `task add` writes it
    return path


def no_budget(room: Path) -> None:
    """Lift the room's daily budget: the bench's ledger spends more than the default $10 a day."""
    control = room / "control-room" / "CONTROL.md"
    control.write_text(control.read_text().replace("daily_budget_usd: 10.0", "daily_budget_usd: 1000000"))


def run_once(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, int, int]:
    """(wall seconds, peak RSS in KiB, exit code) of one run of ``cmd``."""
    start = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env or bench_env())
    _, status, usage = os.wait4(p.pid, 0)
    elapsed = time.perf_counter() - start
    p.returncode = os.waitstatus_to_exitcode(status)
    return elapsed, usage.ru_maxrss, p.returncode


def median_time(cmd: list[str], runs: int, env: dict[str, str] | None = None) -> tuple[float, int]:
    """(median seconds, max peak RSS KiB) over ``runs`` runs."""
    times, peaks = [], []
    for _ in range(runs):
        t, rss, _ = run_once(cmd, env)
        times.append(t)
        peaks.append(rss)
    return statistics.median(times), max(peaks)


def paired_times(
    floor: list[str], cmd: list[str], runs: int, env: dict[str, str] | None = None
) -> tuple[float, float, int]:
    """(median seconds of ``floor``, of ``cmd``, max peak RSS KiB of ``cmd``): ``runs`` runs of
    each, taken in turns, so a machine that slows down or speeds up meanwhile (a shared VM's
    neighbours) moves both alike and the ratio stays honest."""
    base, times, peaks = [], [], []
    for _ in range(runs):
        base.append(run_once(floor, bench_env())[0])
        t, rss, _ = run_once(cmd, env)
        times.append(t)
        peaks.append(rss)
    return statistics.median(base), statistics.median(times), max(peaks)


def verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def append_results(ledger: Path, n: int, routes: int = 40) -> None:
    """``n`` result lines (pass or fail, with decisions and failures) written fast, unchained:
    for benches of readers that do not verify (digest, prompt)."""
    with open(ledger, "a", encoding="utf-8") as f:
        chunk = []
        for i in range(n):
            outcome = "pass" if i % 3 == 0 else "fail"
            failed = "" if outcome == "pass" else f"; failed: validator exited 1: case {i % 50} wrong"
            chunk.append(
                f"| 2026-01-{1 + i % 28:02d}T00:00:00Z | {i:016x} | bench | result | t-{i % 1000} | "
                f"route-{i % routes} | probe | {outcome} | 0.001 | round 1; decision: try variant "
                f"{i} of lever {i % 17}{failed} | - | 000000000000 |\n"
            )
            if len(chunk) == 50_000:
                f.write("".join(chunk))
                chunk.clear()
        f.write("".join(chunk))


@dataclass
class Row:
    """One figure of a bench: what, the figure (seconds, or a rate with ``unit``), the baseline
    measured in the same run, the target and whether it is met (None: no target)."""

    what: str
    value: float
    base: float | None
    target: str
    ok: bool | None
    unit: str = "s"

    def figure(self) -> str:
        if self.unit == "s":
            return f"{self.value * 1000:,.1f} ms" if self.value < 10 else f"{self.value:,.1f} s"
        return f"{self.value:,.1f} {self.unit}" if self.value < 100 else f"{self.value:,.0f} {self.unit}"

    def ratio(self) -> str:
        if self.base is None or self.unit != "s":
            return ""
        return f"{self.value / self.base:.2f}x"

    def verdict(self) -> str:
        return "" if self.ok is None else verdict(self.ok)


def print_rows(rows: list[Row]) -> None:
    width = max(len(r.what) for r in rows)
    for r in rows:
        base = f"floor {r.base * 1000:.1f} ms" if r.base is not None and r.unit == "s" else ""
        print(f"{r.what:<{width}}  {r.figure():>12}  {r.ratio():>7}  {base:>18}  {r.target} {r.verdict()}")


def folds_running(room: Path) -> bool:
    """Whether a background `ledger fold` of ``room`` runs (a first command on a big ledger starts one)."""
    pattern = f"--room {room} ledger fold"
    return subprocess.run(["pgrep", "-f", "--", pattern], capture_output=True).returncode == 0


def settle(room: Path, *, stop: bool = False) -> None:
    """Wait for (``stop``: end) the background fold of ``room``, so that it takes no CPU from what
    is timed next; without ``stop``, every view is whole afterwards."""
    if stop:
        subprocess.run(["pkill", "-f", "--", f"--room {room} ledger fold"], check=False)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and folds_running(room):
        time.sleep(0.05)
    if not stop:
        subprocess.run(
            [*control_room_cmd(), "--room", str(room), "ledger", "fold"], capture_output=True, check=True
        )


def big_room_main(measure: Callable[[int, int, int], list[Row]], runs: int) -> None:
    """The command line of a bench on the big room: ``--lines``, ``--tasks``, ``--runs``; its rows printed."""
    import argparse  # only when a bench runs as a script

    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--tasks", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=runs)
    a = ap.parse_args()
    print_rows(measure(a.lines, a.tasks, a.runs))
