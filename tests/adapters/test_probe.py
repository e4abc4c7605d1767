"""The probe adapter through the same harness: it runs the task's own command."""

import sys

import pytest
from harness import TASK_ID, Spec, assert_group_dead, execute, invocation

from control_room.adapters.probe import Probe
from control_room.room.shell import argv_of

SPEC = Spec(Probe(), model=None)


def run(tmp_path, command, mode="success", timeout_s=30):
    inv = invocation(tmp_path, SPEC, task={"id": TASK_ID, "command": command})
    inv.command = argv_of(command, "the command")  # as the dispatcher hands it over (admission)
    return execute(SPEC, inv, tmp_path, mode, timeout_s=timeout_s)


def test_success(tmp_path):
    out = run(tmp_path, ["python3", "-c", "print('hi')"]).outcome
    assert out.ok and out.error is None
    assert "DECISION: the command exited 0" in out.final_message
    assert '- CONFIRMED: stdout line: "hi"\n' in out.final_message


def test_failure_names_the_exit_code(tmp_path):
    out = run(tmp_path, "python3 -c 'import sys; sys.exit(3)'").outcome
    assert not out.ok and "exited 3" in out.error


@pytest.mark.slow  # waits out a 1 s wall clock
def test_timeout_kills_the_whole_group(tmp_path):
    pidfile = tmp_path / "grandchild.pid"
    code = (f"import subprocess, time; p = subprocess.Popen(['sleep', '1000']); "
            f"open({str(pidfile)!r}, 'w').write(str(p.pid)); time.sleep(1000)")  # fmt: skip
    r = run(tmp_path, [sys.executable, "-c", code], mode="timeout", timeout_s=1)
    assert r.result.timed_out and not r.outcome.ok
    assert "DECISION: the command was killed at its 1s time limit\n" in r.outcome.final_message
    assert r.outcome.error == "the agent was killed at its 1s time limit"
    assert_group_dead(pidfile)


def test_the_report_names_the_files_it_points_at(tmp_path):
    r = run(tmp_path, ["python3", "-c", "print('hi')"])
    out, res = r.outcome, r.result
    where = f"(its output: {res.stdout.path}, {res.stderr.path})"
    assert f"after {res.duration_s:.2f}s {where}\n" in out.final_message
    assert "<task>" not in out.final_message
