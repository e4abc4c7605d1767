"""control-room demo, through the installed command: a whole room run to the end with the
probe adapter and real benchmarks, then the files it leaves."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from support import assert_views_agree, events

from control_room import errors
from control_room.room.layout import Room

CYCLE_LINES = [
    (
        r"cycle 1: passed: sieve-1 \(round 1; agent exit 0 in [\d.]+s; report ok; validator passed; "
        r"prompt \d+ B [^;]*\)"
    ),
    (
        r"cycle 2: passed: confirm-after-sieve \(round 1; agent exit 0 in [\d.]+s; report ok; "
        r"validator passed; prompt \d+ B [^;]*\)"
    ),
    (
        r"cycle 3: failed: memo-1 \(validator exited 1: count_primes\(10000\) = 1229 in [\d.]+ ms "
        r"\(budget 50 ms\)\); back in the queue for round 2 of 2"
    ),
    (
        r"cycle 4: failed: memo-1 \(validator exited 1: count_primes\(10000\) = 1229 in [\d.]+ ms "
        r"\(budget 50 ms\)\); parked for a person \(swarm/parked/\)"
    ),
    r"cycle 5: nothing to do: 1 rejected \(see swarm/rejected/\)",  # c-ext-1, on the killed route
]


def cr(exe: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CONTROL_ROOM"}
    done = subprocess.run(
        [exe, *args], check=False, cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done


@pytest.fixture(scope="module")
def demo(exe: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """One demo run shared by the tests that only read what it left."""
    base = tmp_path_factory.mktemp("demo")
    root = base / "d"
    return root, cr(exe, "demo", str(root), cwd=base)


def test_the_demo_runs_to_the_end(demo: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    root, done = demo
    assert (done.returncode, done.stderr) == (errors.OK, ""), done.stdout
    lines = done.stdout.split("\n")
    assert lines[0] == f"demo room: {root}"
    cycles = [ln for ln in lines if ln.startswith("cycle ")]
    assert len(cycles) == len(CYCLE_LINES), cycles
    for line, pattern in zip(cycles, CYCLE_LINES, strict=True):
        assert re.fullmatch(pattern, line), line
    assert lines[1:6] == cycles  # the cycle lines come right after the first line, in order


def test_the_demo_leaves_every_task_where_it_belongs(
    demo: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    root, _ = demo
    swarm = root / "swarm"
    listing = {
        s: sorted(os.listdir(swarm / s))
        for s in ("queue", "running", "done", "parked", "rejected", "cancelled")
    }
    assert listing == {
        "queue": [],
        "running": [],
        "done": ["confirm-after-sieve.json", "sieve-1.json"],
        "parked": ["memo-1.json", "memo-1.reason"],
        "rejected": ["c-ext-1.json", "c-ext-1.json.reason", "vibe.json", "vibe.json.reason"],
        "cancelled": [],
    }
    vibe = (swarm / "rejected" / "vibe.json.reason").read_text()
    assert "- missing required field: falsifier\n" in vibe
    memo = (swarm / "parked" / "memo-1.reason").read_text()
    assert "after 2 failed rounds" in memo and "validator exited 1: count_primes(10000) = 1229 in " in memo
    assert (swarm / "results" / "sieve-1" / "report.md").read_text().startswith("DECISION:")
    assert (swarm / "outbox" / "sieve-1.md").read_text().startswith("# Brief for task sieve-1\n")
    evs = events(root / "control-room" / "LEDGER.md")
    assert evs.count("reject") == 2 and evs.count("park") == 1 and evs.count("route-kill") == 1
    tomb = (swarm / "rejected" / "c-ext-1.json.reason").read_text()
    assert "- route rewrite-in-c is killed: see graveyard/rewrite-in-c.md (verdict: a C extension" in tomb
    assert evs.count("result") == 4 and evs.count("claim") == 4


def test_the_demo_ledger_verifies(exe: str, demo: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    root, _ = demo
    done = cr(exe, "--room", str(root), "ledger", "verify", cwd=root.parent)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_demo_ends_with_the_status(demo: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    root, done = demo
    status = done.stdout.split("\n\n")[1]
    assert status.startswith(f"room      {root}\nSTOP      no\n")
    tasks = next(ln for ln in status.split("\n") if ln.startswith("tasks "))
    assert "done 2" in tasks and "parked 1" in tasks
    assert tasks == "tasks     queue 0 · running 0 · done 2 · parked 1 · rejected 2 · cancelled 0"
    assert f"  control-room --room {root} ledger verify" in done.stdout


def test_the_demo_refuses_a_folder_that_is_not_empty(exe: str, tmp_path: Path) -> None:
    target = tmp_path / "busy"
    target.mkdir()
    (target / "notes.txt").write_text("mine\n")
    done = cr(exe, "demo", str(target), cwd=tmp_path)
    assert (done.returncode, done.stdout) == (errors.INVALID, "")
    assert done.stderr == f"Error: {target} exists and is not empty; the demo needs a new folder\n"
    assert sorted(os.listdir(target)) == ["notes.txt"]
    assert (target / "notes.txt").read_text() == "mine\n"
    assert sorted(os.listdir(tmp_path)) == ["busy"]


def test_the_demo_in_an_empty_folder_with_a_relative_path(exe: str, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    done = cr(exe, "demo", "empty", cwd=tmp_path)
    assert done.returncode == errors.OK, done.stderr
    assert done.stdout.startswith(f"demo room: {tmp_path / 'empty'}\n")
    assert sorted(os.listdir(tmp_path / "empty" / "swarm" / "done")) == [
        "confirm-after-sieve.json",
        "sieve-1.json",
    ]


def test_a_reader_that_goes_away_ends_the_command_quietly(exe: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "CONTROL_ROOM"}
    proc = subprocess.Popen([exe, "demo", str(tmp_path / "d")], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # like `| head -0`: nobody reads
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 141
    assert err == ""
    assert cr(exe, "ledger", "verify", cwd=tmp_path / "d").returncode == 0


def test_after_the_demo_the_views_say_what_status_says(
    exe: str, demo: tuple[Path, subprocess.CompletedProcess[str]]
) -> None:
    root, _ = demo
    status = json.loads(cr(exe, "--room", str(root), "status", "--json", cwd=root.parent).stdout)
    assert status["tasks"] == {"queue": 0, "running": 0, "passed": 0, "to-test": 0, "done": 2, "parked": 1,
                               "rejected": 2, "cancelled": 0}  # fmt: skip
    assert status["ledger_lines"] == len(events(root / "control-room" / "LEDGER.md"))
    assert_views_agree(Room(root), status)
