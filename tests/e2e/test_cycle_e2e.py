"""The cycle end to end, through the installed `control-room` command, on real files and
real processes: pass, fail, parked, rejected, STOP mid-run, time-out, busy, a cycle killed
with SIGKILL and recovered, a missing adapter CLI, an unsupported claim."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
from pathlib import Path

from support import FAKES, PY, data_lines, dead, events, queue, task_json, verify_ok, wait_for, where

from control_room import errors
from control_room.ledger import result
from control_room.ledger.line import parse
from control_room.room.layout import Room


def test_a_passing_task_goes_to_done(cr, room: Room) -> None:
    queue(room, "t-pass")
    done = cr("cycle")
    assert done.returncode == errors.PASSED
    assert done.stdout.startswith("passed: t-pass (round 1; agent exit 0 in ")
    assert where(room, "t-pass") == ["done"]
    results = room.swarm / "results" / "t-pass"
    assert (results / "stdout.txt").read_text() == "did the work\n"
    meta = json.loads((results / "meta.json").read_text())
    assert (meta["verdict"], meta["adapter"], meta["exit_code"], meta["failures"]) == ("pass", "probe", 0, [])
    assert meta["report"]["ok"] is True and meta["validator"]["exit_code"] == 0
    assert (room.swarm / "outbox" / "t-pass.md").read_text().startswith("# Brief for task t-pass\n")
    assert not list(room.root.glob(".brief-*")), "the brief in the work dir is removed after the run"
    assert events(room.ledger)[-2:] == ["claim", "result"]
    verify_ok(cr)
    assert cr("cycle").returncode == errors.OK


def test_a_failing_task_is_retried_with_what_failed_then_parked(cr, room: Room) -> None:
    queue(room, "t-fail", validator=[PY, "-c", "import sys; print('too slow'); sys.exit(3)"])
    first = cr("cycle")
    assert first.returncode == errors.FAILED
    assert first.stdout == ("failed: t-fail (validator exited 3: too slow); back in the queue for "
                            "round 2 of 2\n")  # fmt: skip
    task = task_json(room, "queue", "t-fail")
    assert (task["rounds"], task["last_failure"]) == (1, "validator exited 3: too slow")
    second = cr("cycle")
    assert second.returncode == errors.FAILED
    assert second.stdout.endswith("parked for a person (swarm/parked/)\n")
    assert where(room, "t-fail") == ["parked"]
    reason = (room.state_dir("parked") / "t-fail.reason").read_text()
    assert "after 2 failed rounds" in reason and "validator exited 3: too slow" in reason
    brief = (room.swarm / "outbox" / "t-fail.md").read_text()
    assert "What failed in round 1 (do not repeat it):\nvalidator exited 3: too slow" in brief
    assert json.loads((room.swarm / "results" / "t-fail" / "run-1" / "meta.json").read_text())["round"] == 1
    assert (room.swarm / "results" / "t-fail" / "run-1" / "prompt.md").exists()
    assert events(room.ledger)[-5:] == ["claim", "result", "claim", "result", "park"]
    verify_ok(cr)


def test_a_malformed_task_is_rejected_and_never_blocks_the_next(cr, room: Room) -> None:
    (room.state_dir("queue") / "broken.json").write_text('{"objective": "no closing brace"')
    queue(room, "t-ok")
    assert cr("cycle").returncode == errors.PASSED
    assert sorted(os.listdir(room.state_dir("rejected"))) == ["broken.json", "broken.json.reason"]
    assert where(room, "t-ok") == ["done"]
    assert events(room.ledger).count("reject") == 1


def test_stop_while_the_agent_runs_kills_its_group_and_requeues(
    cr, exe: str, room: Room, tmp_path: Path
) -> None:
    pidfile, ready = tmp_path / "grandchild.pid", tmp_path / "ready"
    queue(room, "t-stop", command=[PY, str(FAKES / "sleeper.py"), "--pidfile", str(pidfile),
                                   "--ready", str(ready)])  # fmt: skip
    proc = subprocess.Popen([exe, "cycle"], cwd=room.root, env=cr.env, stdout=subprocess.PIPE, text=True)
    wait_for(ready)
    grandchild = int(pidfile.read_text().split()[0])
    room.stop.write_text("testing\n")
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == errors.STOPPED
    assert out == "stopped: STOP appeared while the agent ran; t-stop is back in the queue\n"
    assert dead(grandchild), "the agent's grandchild survived STOP"
    assert where(room, "t-stop") == ["queue"]
    assert "rounds" not in task_json(room, "queue", "t-stop"), "STOP is not a failed round"
    assert events(room.ledger)[-1] == "stopped"
    assert cr("cycle").returncode == errors.STOPPED
    verify_ok(cr)


def test_a_time_out_kills_the_grandchild_and_counts_a_failed_round(cr, room: Room, tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    queue(room, "t-slow", wall_clock_s=1,
          command=[PY, str(FAKES / "sleeper.py"), "--pidfile", str(pidfile)])  # fmt: skip
    done = cr("cycle")
    assert done.returncode == errors.FAILED
    assert "the agent was killed at its 1s time limit" in done.stdout
    assert dead(int(pidfile.read_text().split()[0])), "the grandchild survived the time-out"
    assert task_json(room, "queue", "t-slow")["rounds"] == 1
    meta = json.loads((room.swarm / "results" / "t-slow" / "meta.json").read_text())
    assert (meta["timed_out"], meta["exit_code"]) == (True, None)


def test_a_second_cycle_is_busy_and_changes_nothing(cr, room: Room) -> None:
    queue(room, "t-wait")
    fd = os.open(room.cr / ".slot-0.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)  # a running cycle holds the only slot

    def state() -> dict[Path, bytes]:  # every file but the disposable caches
        return {p: p.read_bytes() for p in room.root.rglob("*") if p.is_file() and ".cache" not in p.parts}

    before = state()
    try:
        done = cr("cycle")
    finally:
        os.close(fd)
    assert (done.returncode, done.stdout) == (errors.BUSY, "busy: the only slot is taken; nothing changed\n")
    assert state() == before


def test_a_cycle_killed_mid_run_is_recovered_by_the_next(cr, exe: str, room: Room, tmp_path: Path) -> None:
    pidfile, ready, second = tmp_path / "grandchild.pid", tmp_path / "ready", tmp_path / "second"
    queue(room, "t-crash", command=[PY, str(FAKES / "sleeper.py"), "--pidfile", str(pidfile),
                                    "--ready", str(ready), "--skip-if", str(second)])  # fmt: skip
    proc = subprocess.Popen([exe, "cycle"], cwd=room.root, env=cr.env)
    wait_for(ready)
    grandchild = int(pidfile.read_text().split()[0])
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert where(room, "t-crash") == ["running"]
    second.touch()
    done = cr("cycle")
    assert done.returncode == errors.PASSED, done.stdout
    assert done.stdout.splitlines()[0] == (
        "recovered t-crash: its slot 0 is ours now, so the cycle that held it is gone; back in the queue, "
        "no round used (dispatcher death 1 of 3)"
    )
    assert dead(grandchild), "the dead cycle's agent group was not killed on recovery"
    assert where(room, "t-crash") == ["done"]
    finished = task_json(room, "done", "t-crash")
    assert ("rounds" in finished, finished["dispatcher_deaths"]) == (False, 1)  # the dispatcher's fault
    tail = events(room.ledger)
    assert tail[tail.index("recover") :] == ["recover", "claim", "result"]
    assert not list(room.state_dir("running").iterdir())
    verify_ok(cr)


def test_a_missing_adapter_cli_leaves_the_task_queued(cr, room: Room) -> None:
    queue(room, "t-claude", adapter="claude")
    done = cr("cycle", extra_env={"PATH": "/nonexistent"})
    assert done.returncode == errors.ADAPTER_MISSING
    assert done.stdout == (
        "adapter unavailable for 1 ready task, which stays queued: "
        "t-claude (claude: claude not found on PATH)\n"
    )
    assert where(room, "t-claude") == ["queue"]
    assert events(room.ledger)[-1] == "adapter-missing"


def test_a_confirmed_success_the_validator_denies_is_an_unsupported_claim(
    cr, room: Room, tmp_path: Path
) -> None:
    report = ("DECISION: done\nWHY: it works\nEVIDENCE:\n- CONFIRMED: all tests pass (pytest -q)\n"
              "MISSING: none\nNEXT COMMAND: pytest -q\nSTOP RULE: stop when green\n")  # fmt: skip
    agent = tmp_path / "agent.py"
    agent.write_text(f"import sys\nsys.stdin.read()\nprint({report!r})\n")
    control = room.control.read_text().replace("command_argv: []", f'command_argv: ["{PY}", "{agent}"]')
    room.control.write_text(control)
    queue(room, "t-liar", adapter="command", validator=[PY, "-c", "import sys; sys.exit(1)"])
    done = cr("cycle")
    assert done.returncode == errors.FAILED
    meta = json.loads((room.swarm / "results" / "t-liar" / "meta.json").read_text())
    assert (meta["report"]["ok"], meta["unsupported_claim"]) == (True, True)
    line = parse(data_lines(room.ledger)[-1])
    assert line is not None and line.event == "result" and line.outcome == "fail"
    assert result.read(line.detail).unsupported  # the flag is on the result line itself
    status = json.loads(cr("status", "--json").stdout)
    assert status["findings"] == 1


def test_output_cut_at_the_capture_cap_is_said_in_the_answer(cr, room: Room) -> None:
    control = room.control.read_text().replace("capture_max_bytes: 10000000", "capture_max_bytes: 1000")
    room.control.write_text(control)
    queue(room, "t-loud", command=[PY, "-c", "print('x' * 5000)"])
    assert cr("cycle").returncode == errors.PASSED
    answer = (room.swarm / "results" / "t-loud" / "answer.md").read_text()
    assert answer.endswith("x\n\n[control-room: the agent's stdout cut at 1000 bytes of 5001; "
                           "the rest was dropped (CONTROL.md capture_max_bytes)]")  # fmt: skip
    meta = json.loads((room.swarm / "results" / "t-loud" / "meta.json").read_text())
    assert meta["notes"] == ["stdout cut at 1000 bytes of 5001"]


def test_output_that_is_not_utf8_is_read_as_latin1_and_said(cr, room: Room) -> None:
    queue(
        room,
        "t-latin",
        command=[PY, "-c", "import sys; sys.stdout.buffer.write('café\\n'.encode('latin-1'))"],
    )
    assert cr("cycle").returncode == errors.PASSED
    results = room.swarm / "results" / "t-latin"
    assert (results / "stdout.txt").read_bytes() == b"caf\xe9\n"  # the bytes as the agent wrote them
    assert "café" in (results / "answer.md").read_text(encoding="utf-8")
    meta = json.loads((results / "meta.json").read_text())
    assert meta["notes"] == ["stdout is not UTF-8: the bytes that are not were read as Latin-1"]
