"""SPEC §15 end to end, through the installed command on real processes: no fault of the
operator (Ctrl-C, SIGTERM, SIGHUP) or of the dispatcher (SIGKILL) uses one of a task's rounds.

After each: the task in exactly one state, its rounds unchanged, the ledger verifies, and no
process of the agent's group is left (read from /proc)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from pathlib import Path

import pytest
from support import FAKES, PY, TIME, dead, events, group, queue, task_json, verify_ok, wait_for, where

from control_room import errors
from control_room.room.layout import Room

CODES = {signal.SIGINT: errors.INTERRUPTED, signal.SIGTERM: errors.TERMINATED, signal.SIGHUP: errors.HANGUP}


def sleeper(room: Room, tmp_path: Path, task_id: str, *extra: str) -> tuple[Path, Path]:
    """Queue a task whose agent starts a grandchild, says it is ready, and sleeps."""
    pidfile, ready = tmp_path / "grandchild.pid", tmp_path / "ready"
    queue(room, task_id, command=[PY, str(FAKES / "sleeper.py"), "--pidfile", str(pidfile),
                                  "--ready", str(ready), *extra])  # fmt: skip
    return pidfile, ready


def start(cr, *args: str) -> subprocess.Popen[str]:  # type: ignore[no-untyped-def]
    return subprocess.Popen([cr.exe, *args], env=cr.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)  # fmt: skip


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_signal_during_a_cycle_ends_the_agent_group_and_requeues_without_a_round(
    cr, room: Room, tmp_path: Path, sig: signal.Signals
) -> None:
    pidfile, ready = sleeper(room, tmp_path, "t-sig", "--ignore-term")  # only SIGKILL ends this agent
    proc = start(cr, "cycle")
    wait_for(ready)
    grandchild = int(pidfile.read_text().split()[0])
    pgid = os.getpgid(grandchild)
    assert pgid != os.getpgid(proc.pid)  # the agent leads a group of its own
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == CODES[sig]
    assert (out, err) == ("", f"interrupted by {sig.name}: t-sig is back in the queue, no round used\n")
    assert dead(grandchild) and group(pgid) == []
    assert where(room, "t-sig") == ["queue"]
    assert "rounds" not in task_json(room, "queue", "t-sig")
    assert events(room.ledger)[-2:] == ["claim", "interrupted"]
    line = room.ledger.read_text().splitlines()[-1]
    assert f"| {sig.name} while it ran; its process group was ended; no round used |" in line
    assert not list(room.state_dir("running").iterdir())
    verify_ok(cr)


def test_ctrl_c_during_run_every_requeues_and_the_next_run_uses_round_one(
    cr, room: Room, tmp_path: Path
) -> None:
    pidfile, ready = sleeper(room, tmp_path, "t-run", "--skip-if", str(tmp_path / "quick"))
    proc = start(cr, "run", "--every", "1s")
    wait_for(ready)
    pgid = os.getpgid(int(pidfile.read_text().split()[0]))
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, out) == (errors.INTERRUPTED, "")
    assert re.fullmatch(f"{TIME}  interrupted by SIGINT: t-run is back in the queue, no round used\n", err)
    assert group(pgid) == []
    (tmp_path / "quick").touch()
    again = cr("run", "--every", "0", "--cycles", "1")
    assert again.returncode == 0, again.stderr
    assert "cycle 1  passed: t-run (round 1; " in again.stdout  # the interrupted run used no round
    verify_ok(cr)


def test_ctrl_c_between_cycles_exits_at_once_and_changes_nothing(cr, room: Room) -> None:
    proc = start(cr, "run", "--every", "1h")
    assert proc.stdout is not None
    first = proc.stdout.readline()  # the first cycle is over: the run waits an hour for the next
    assert re.fullmatch(f"{TIME}  cycle 1  nothing to do: the queue is empty\n", first)
    before = room.ledger.read_bytes()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, out) == (errors.INTERRUPTED, "")
    assert re.fullmatch(f"{TIME}  interrupted by SIGINT\n", err)
    assert room.ledger.read_bytes() == before


def test_a_task_that_kills_its_dispatcher_again_and_again_is_parked_as_poison(
    cr, room: Room, tmp_path: Path
) -> None:
    pidfile, ready = sleeper(room, tmp_path, "t-poison")
    deaths = []
    for n in range(1, 4):
        proc = start(cr, "cycle")
        wait_for(ready)
        ready.unlink()
        grandchild = int(pidfile.read_text().split()[0])
        proc.send_signal(signal.SIGKILL)  # as the OOM killer would
        out, _ = proc.communicate(timeout=60)
        deaths.append(out)  # what the cycle printed before it was killed: its recovery
        assert where(room, "t-poison") == ["running"]
        task = task_json(room, "running", "t-poison")
        assert ("rounds" in task, task.get("dispatcher_deaths", 0)) == (False, n - 1)
    # The first kill left nothing to recover; the second and third cycles each recovered the last.
    assert deaths[0] == ""
    for n, out in enumerate(deaths[1:], start=1):
        assert out == ("recovered t-poison: its slot 0 is ours now, so the cycle that held it is gone; "
                       f"back in the queue, no round used (dispatcher death {n} of 3)\n")  # fmt: skip
    last = cr("cycle")
    assert dead(grandchild)
    assert (last.returncode, last.stdout) == (errors.OK, (
        "recovered t-poison: its slot 0 is ours now, so the cycle that held it is gone; "
        "parked as a poison task (the cycle running it died 3 times)\n"
        "nothing to do: the queue is empty\n"))  # fmt: skip
    assert where(room, "t-poison") == ["parked"]
    parked = task_json(room, "parked", "t-poison")
    assert ("rounds" in parked, parked["dispatcher_deaths"]) == (False, 3)
    reason = (room.state_dir("parked") / "t-poison.reason").read_text()
    assert (
        "as a poison task: the cycle running it died 3 times (CONTROL.md max_dispatcher_deaths 3)" in reason
    )
    assert "These deaths are not failed rounds (rounds used: 0)" in reason
    assert events(room.ledger)[-2:] == ["recover", "park"]
    assert events(room.ledger).count("recover") == 3
    verify_ok(cr)


def test_run_parallel_runs_cycles_side_by_side_and_ctrl_c_reaches_each(
    cr, room: Room, tmp_path: Path
) -> None:
    from support import set_gate

    set_gate(room, "max_parallel", "2")
    groups = []
    for name in ("pa", "pb"):
        folder = tmp_path / name
        folder.mkdir()
        queue(room, name, command=[PY, str(FAKES / "sleeper.py"), "--pidfile", str(folder / "pid"),
                                   "--ready", str(folder / "ready")])  # fmt: skip
    proc = start(cr, "run", "--parallel", "2", "--every", "1h")
    for name in ("pa", "pb"):  # both agents run at once, each under its own cycle
        wait_for(tmp_path / name / "ready")
        groups.append(os.getpgid(int((tmp_path / name / "pid").read_text().split()[0])))
    proc.send_signal(signal.SIGINT)  # as Ctrl-C: to the run only; it passes it on
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, out) == (errors.INTERRUPTED, "")
    lines = err.splitlines()
    assert sorted(ln.split("  ", 2)[2] for ln in lines[:2]) == [
        "interrupted by SIGINT: pa is back in the queue, no round used",
        "interrupted by SIGINT: pb is back in the queue, no round used",
    ]
    assert re.fullmatch(f"{TIME}  interrupted by SIGINT", lines[2])
    assert all(group(g) == [] for g in groups)
    assert sorted(os.listdir(room.state_dir("queue"))) == ["pa.json", "pb.json"]
    assert events(room.ledger).count("interrupted") == 2
    verify_ok(cr)


def test_run_parallel_passes_two_tasks_in_one_round(cr, room: Room) -> None:
    from support import set_gate

    set_gate(room, "max_parallel", "3")
    queue(room, "qa")
    queue(room, "qb")
    done = cr("run", "--parallel", "2", "--cycles", "1", "--every", "0")
    assert done.returncode == 0, done.stderr
    lines = sorted(ln.split("  ", 2)[1:] for ln in done.stdout.splitlines())
    assert [ln[0] for ln in lines] == ["cycle 1.1", "cycle 1.2"]
    assert sorted(ln[1].split(" (")[0] for ln in lines) == ["passed: qa", "passed: qb"]
    assert where(room, "qa") == ["done"] and where(room, "qb") == ["done"]
