"""control-room cycle / run, in-process on real files and real processes (the probe adapter)."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from support import TIME, events, queue, snapshot, where

from control_room import errors, reaper
from control_room.ledger.events import approval_needed
from control_room.room.layout import Room

Run = Callable[..., Result]
PY = sys.executable


# cycle ----------------------------------------------------------------------------------


def test_cycle_on_an_empty_queue_has_nothing_to_do(run: Run, inside: Room) -> None:
    result = run("cycle")
    assert (result.exit_code, result.stdout, result.stderr) == (
        errors.OK, "nothing to do: the queue is empty\n", "",
    )  # fmt: skip
    assert events(inside.ledger) == ["init"]


def test_cycle_with_nothing_ready_says_why_each_task_waits(run: Run, inside: Room) -> None:
    queue(inside, "t0", gate=["gpu"], priority=1)
    queue(inside, "t1", deps=["t0"])
    result = run("cycle")
    assert (result.exit_code, result.stdout, result.stderr) == (
        errors.OK,
        "nothing to do: 2 queued tasks not ready: t0 waits for gate gpu: `control-room approve t0`; "
        "t1 waits for dep t0 (queue)\n",
        "",
    )
    assert events(inside.ledger) == ["init", approval_needed("gpu").name]  # the hold, once a day


def test_cycle_passes_a_task(run: Run, inside: Room) -> None:
    queue(inside, "t-pass")
    result = run("cycle")
    assert result.exit_code == errors.PASSED
    assert result.stderr == ""
    assert result.stdout.startswith("passed: t-pass (round 1; agent exit 0 in ")
    assert result.stdout.endswith(" of context))\n") and result.stdout.count("\n") == 1
    assert where(inside, "t-pass") == ["done"]
    assert events(inside.ledger)[-2:] == ["claim", "result"]


def test_the_probe_report_names_the_task_s_own_captures(run: Run, inside: Room) -> None:
    queue(inside, "t-probe")
    assert run("cycle").exit_code == errors.PASSED
    report = (inside.swarm / "results" / "t-probe" / "report.md").read_text()
    found = re.search(r"^- CONFIRMED: `.*` exited 0 after [\d.]+s \(its output: (.*)\)$", report, re.M)
    assert found is not None, report
    assert found.group(1) == "swarm/results/t-probe/stdout.txt, swarm/results/t-probe/stderr.txt"
    assert "<task>" not in report


def test_the_prompt_carries_the_field_guide_s_lessons_only(run: Run, inside: Room) -> None:
    guide = inside.root / "intelligence" / "FIELD_GUIDE.md"
    queue(inside, "t-new")
    assert run("cycle").exit_code == errors.PASSED
    brief = (inside.swarm / "outbox" / "t-new.md").read_text()
    assert "## Field guide\n\n(empty)\n\n## Your task\n" in brief  # a new room: no lesson yet
    assert "PYTHONHASHSEED" not in brief and "This notebook belongs" not in brief
    guide.write_text(guide.read_text() + "\n- the bench needs a warm cache (task t-new)\n")
    queue(inside, "t-next")
    assert run("cycle").exit_code == errors.PASSED
    brief = (inside.swarm / "outbox" / "t-next.md").read_text()
    assert "## Field guide\n\n- the bench needs a warm cache (task t-new)\n\n## Your task\n" in brief


def test_cycle_with_room_option_from_outside(run: Run, room: Room, tmp_path: Path) -> None:
    queue(room, "t-out")
    result = run("cycle", "--room", str(room.root))  # cwd is tmp_path, not the room
    assert result.exit_code == errors.PASSED
    assert where(room, "t-out") == ["done"]


def test_cycle_with_stop_present_changes_nothing(run: Run, inside: Room) -> None:
    queue(inside, "t-wait")
    inside.stop.write_text("")
    before = snapshot(inside.root)
    result = run("cycle")
    assert (result.exit_code, result.stdout, result.stderr) == (
        errors.STOPPED, f"stopped: {inside.root / 'STOP'} exists; nothing ran\n", "",
    )  # fmt: skip
    assert snapshot(inside.root) == before
    assert where(inside, "t-wait") == ["queue"]


# run ------------------------------------------------------------------------------------


def test_run_runs_exactly_the_cycles_asked_for(run: Run, inside: Room) -> None:
    queue(inside, "first", priority=2)
    queue(inside, "second", priority=1)
    result = run("run", "--every", "1s", "--cycles", "3")
    assert (result.exit_code, result.stderr) == (0, "")
    lines = result.stdout.split("\n")
    assert lines[-1] == "" and len(lines) == 4, result.stdout
    assert re.fullmatch(rf"{TIME}  cycle 1  passed: first \(round 1; agent exit 0 in .*\)", lines[0])
    assert re.fullmatch(rf"{TIME}  cycle 2  passed: second \(round 1; agent exit 0 in .*\)", lines[1])
    assert re.fullmatch(rf"{TIME}  cycle 3  nothing to do: the queue is empty", lines[2])
    assert (where(inside, "first"), where(inside, "second")) == (["done"], ["done"])
    assert events(inside.ledger) == ["init", "claim", "result", "claim", "result"]


def test_a_run_loop_lets_its_watchdog_go_when_it_ends(
    run: Run, inside: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    queue(inside, "first")
    kept: list[bool] = []
    real = reaper.keep_watch
    monkeypatch.setattr(reaper, "keep_watch", lambda: kept.append(real()) or kept[-1])
    assert run("run", "--every", "0", "--cycles", "2").exit_code == 0
    assert kept == ([True] if sys.platform.startswith("linux") else [False])
    assert reaper._WATCHDOG == []  # this process's next run goes under `timeout` again
    assert os.path.basename(reaper.watched(["agent"], 60)[0]) == "timeout"
    reaper.started(None)


def test_one_cycle_of_run_starts_no_watchdog(run: Run, inside: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    """`run --cycles 1` (cron's way) runs its agent under `timeout`, like `cycle`: a watchdog
    is a Python process, worth it for a loop's thousands of runs, not for two."""
    queue(inside, "first")
    kept: list[bool] = []
    monkeypatch.setattr(reaper, "keep_watch", lambda: kept.append(True) or True)
    assert run("run", "--every", "0", "--cycles", "1").exit_code == 0
    assert kept == []
    assert where(inside, "first") == ["done"]


def test_run_stops_at_once_when_stop_exists(run: Run, inside: Room) -> None:
    queue(inside, "t-wait")
    inside.stop.write_text("")
    before = snapshot(inside.root)
    result = run("run", "--every", "1s", "--cycles", "3")
    assert (result.exit_code, result.stderr) == (errors.STOPPED, "")
    assert re.fullmatch(rf"{TIME}  cycle 1  stopped: {re.escape(str(inside.stop))} exists; nothing ran\n",
                        result.stdout)  # fmt: skip
    assert snapshot(inside.root) == before


def test_run_refuses_a_bad_duration(run: Run, inside: Room) -> None:
    result = run("run", "--every", "nonsense")
    assert (result.exit_code, result.stdout) == (errors.USAGE, "")
    assert result.stderr.endswith(
        "Error: Invalid value for --every: not a duration: 'nonsense' (try 90, 90s, 30m, 1h)\n"
    )
    assert events(inside.ledger) == ["init"]


def test_log_appends_each_line_with_its_time(cr, room: Room, tmp_path: Path) -> None:
    log = tmp_path / "cycle.log"
    queue(room, "t1")
    assert cr("cycle", "--log", str(log)).returncode == errors.PASSED
    assert cr("cycle", "--log", str(log)).returncode == errors.OK
    lines = log.read_text().splitlines()
    assert [ln[:20] for ln in lines] and all(re.fullmatch(TIME, ln[:20]) for ln in lines)
    assert lines[0][22:].startswith("passed: t1 (") and lines[1][22:] == "nothing to do: the queue is empty"
    (room.cr / "CONTROL.md").write_text("---\nmax_parallel: nope\n---\n")
    broken = cr("cycle", "--log", str(log))
    assert broken.returncode == errors.ROOM_INVALID
    assert log.read_text().splitlines()[-1][22:] == broken.stderr.strip()  # the error is logged too


def test_on_a_terminal_a_running_cycle_shows_one_live_line(cr, room: Room) -> None:
    import os
    import pty

    slow = "import time; print('x' * 2000, flush=True); time.sleep(1.2)"  # flushed: a pipe buffers
    queue(room, "slow", command=[sys.executable, "-c", slow])
    pid, fd = pty.fork()
    if pid == 0:  # the child: the installed command, its stdout a terminal
        os.chdir(room.root)
        os.execve(cr.exe, [cr.exe, "cycle"], cr.env)
    seen = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    _, status = os.waitpid(pid, 0)
    text = seen.decode()
    assert os.waitstatus_to_exitcode(status) == errors.PASSED
    # (cut at the terminal's width; the seconds go up as it runs)
    assert re.search(r"\r\x1b\[2Kslow  probe  \ds / 60s  output 2\.0 KiB  \(Ctrl-C to interrupt", text)
    assert text.endswith("\r\x1b[2Kpassed: slow (" + text.split("passed: slow (", 1)[1])  # cleared first
