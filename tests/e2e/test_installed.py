"""The installed `control-room` executable, run as a real process."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from support import ADD_ARGS, no_room_error

from control_room import __version__


@pytest.fixture
def cr(exe: str, tmp_path: Path):  # type: ignore[no-untyped-def]
    env = {k: v for k, v in os.environ.items() if k != "CONTROL_ROOM"}
    env["CONTROL_ROOM_WRITER"] = "installed"

    def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([exe, *args], cwd=cwd or tmp_path, env=env, capture_output=True,
                              text=True, timeout=120)  # fmt: skip
        assert "Traceback" not in done.stderr, done.stderr
        return done

    return run


def test_version(cr) -> None:  # type: ignore[no-untyped-def]
    done = cr("--version")
    assert (done.returncode, done.stdout) == (0, f"control-room, version {__version__}\n")


def test_a_session(cr, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "room"
    done = cr("init", "room")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.endswith(f"room ready: {root}  (next: cat room/AGENTS.md)\n")

    done = cr("task", "add", "--id", "t1", *ADD_ARGS, cwd=root)
    assert (done.returncode, done.stdout, done.stderr) == (
        0, "queued t1  (swarm/queue/t1.json)\n", "",
    )  # fmt: skip

    (root / "swarm" / "queue" / "vibe.json").write_text('{"id": "vibe", "objective": "better"}')
    done = cr("task", "list", "--json", cwd=root)
    assert done.returncode == 0
    rows = json.loads(done.stdout)
    assert [(r["state"], r["file"]) for r in rows] == [("queue", "t1.json"),
                                                        ("rejected", "vibe.json")]  # fmt: skip
    assert rows[1]["problem"] == (
        "missing required fields: falsifier, validator, max_cost_usd, wall_clock_s, kill_condition"
    )
    assert (root / "swarm" / "rejected" / "vibe.json.reason").is_file()
    assert not (root / "swarm" / "queue" / "vibe.json").exists()

    done = cr("stop", "--reason", "lunch", cwd=root)
    assert (done.returncode, done.stdout) == (
        0, f"stopped: {root / 'STOP'} exists; every cycle halts until `control-room resume`\n",
    )  # fmt: skip
    done = cr("status", "--json", cwd=root)
    status = json.loads(done.stdout)
    assert (done.returncode, status["tasks"]["queue"], status["tasks"]["rejected"]) == (0, 1, 1)
    assert status["stop"].endswith(" by installed reason: lunch")
    done = cr("resume", cwd=root)
    assert (done.returncode, done.stdout) == (0, "resumed: STOP removed; cycles run again\n")

    done = cr("ledger", "verify", cwd=root)
    assert (done.returncode, done.stdout, done.stderr) == (
        0, "ledger ok: 5 lines from 1 writer, every chain intact\n", "",
    )  # fmt: skip


def test_user_errors_exit_with_their_code_and_no_traceback(cr, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    done = cr("status")
    assert (done.returncode, done.stdout, done.stderr) == (3, "", no_room_error(tmp_path))

    cr("init", "room")
    root = tmp_path / "room"
    done = cr("task", "add", "--objective", "x", cwd=root)
    assert (done.returncode, done.stderr) == (
        4, "Error: task refused: missing falsifier, validator, max_cost_usd, wall_clock_s, "
        "kill_condition (a task that cannot state its falsifier is a vibe, not a task)\n",
    )  # fmt: skip
    done = cr("task", "show", "ghost", cwd=root)
    assert (done.returncode, done.stderr) == (7, f"Error: no task ghost in {root / 'swarm'}\n")
    done = cr("status", "--no-such-flag", cwd=root)
    assert (done.returncode, done.stderr) == (
        2, "Usage: control-room status [OPTIONS]\nTry 'control-room status --help' for help.\n\n"
        "Error: No such option '--no-such-flag'.\n",
    )  # fmt: skip

    ledger = root / "control-room" / "LEDGER.md"
    ledger.write_text(ledger.read_text().replace("| init |", "| edited |"))
    done = cr("ledger", "verify", cwd=root)
    assert done.returncode == 6
    assert done.stderr.endswith("ledger BAD: 1 bad line of 1\n")
