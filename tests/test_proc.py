"""The one subprocess wrapper, on real processes: no shell, stdin, streaming, the capture cap,
STOP and time-outs killing the whole group, a missing executable."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import pytest
from support import dead

from control_room import proc

PY = sys.executable


def run(tmp_path: Path, argv: list[str], **kw) -> proc.Result:  # type: ignore[no-untyped-def]
    kw.setdefault("timeout_s", 60)
    return proc.run(argv, cwd=tmp_path, stdout_path=tmp_path / "out", stderr_path=tmp_path / "err", **kw)


def test_argv_is_never_a_shell_and_stdin_arrives(tmp_path: Path) -> None:
    res = run(tmp_path, [PY, "-c", "import sys; print(sys.argv[1:]); print(sys.stdin.read())",
                         "a; rm -rf /", "$HOME"],
              stdin=b"the prompt\nline two")  # fmt: skip
    assert res.ok and res.exit_code == 0
    assert (tmp_path / "out").read_text() == "['a; rm -rf /', '$HOME']\nthe prompt\nline two\n"


def test_capture_is_capped_and_the_cut_noted_without_blocking_the_child(tmp_path: Path) -> None:
    res = run(tmp_path, [PY, "-c",
                         "import sys; sys.stdout.write('x' * 5_000_000); print('done', file=sys.stderr)"],
              cap_bytes=1000)  # fmt: skip
    assert res.exit_code == 0
    assert (tmp_path / "out").read_bytes() == b"x" * 1000
    assert (res.stdout.bytes_seen, res.stdout.bytes_kept, res.stdout.truncated) == (5_000_000, 1000, True)
    assert res.notes == ["stdout cut at 1000 bytes of 5000000"]
    assert (tmp_path / "err").read_text() == "done\n"


def test_a_link_at_a_capture_path_is_replaced_never_followed(tmp_path: Path) -> None:
    outside = tmp_path / "a-persons-file"
    outside.write_text("keep me\n")
    (tmp_path / "out").symlink_to(outside)  # as an agent planted it for its validator's run
    (tmp_path / "err").symlink_to(tmp_path / "not-there")
    res = run(tmp_path, [PY, "-c", "import sys; print('said'); print('err', file=sys.stderr)"])
    assert res.ok
    assert outside.read_text() == "keep me\n" and not (tmp_path / "not-there").exists()
    assert not (tmp_path / "out").is_symlink() and (tmp_path / "out").read_text() == "said\n"
    assert (tmp_path / "err").read_text() == "err\n"


def test_output_streams_to_disk_while_the_child_runs(tmp_path: Path) -> None:
    stop = tmp_path / "STOP"
    seen: list[str] = []

    def watch() -> None:
        for _ in range(600):
            text = (tmp_path / "out").read_text() if (tmp_path / "out").exists() else ""
            if "first" in text:
                seen.append(text)
                stop.touch()  # only now end it: the line was on disk before the child exited
                return
            time.sleep(0.05)

    t = threading.Thread(target=watch)
    t.start()
    res = run(tmp_path, [PY, "-u", "-c", "import time; print('first'); time.sleep(120)"], stop_file=stop)
    t.join()
    assert seen == ["first\n"]
    assert (res.stopped, res.exit_code, res.notes) == (True, None, ["killed because STOP appeared"])


def test_a_time_out_kills_the_whole_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    code = ("import subprocess, sys, time; "
            "c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)']); "
            f"open({str(pidfile)!r}, 'w').write(str(c.pid)); time.sleep(300)")  # fmt: skip
    res = run(tmp_path, [PY, "-c", code], timeout_s=1.5)
    assert (res.timed_out, res.exit_code) == (True, None)
    assert res.notes == ["killed after the 1.5s time limit"]
    grandchild = int(pidfile.read_text())
    assert dead(grandchild), "the grandchild survived the time-out"  # gone, or a zombie for init


def test_a_missing_executable_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(proc.ExecutableNotFound) as err:
        run(tmp_path, ["no-such-agent-cli", "-p"], env={"PATH": str(tmp_path)})
    assert str(err.value) == "no-such-agent-cli: command not found on PATH"
    assert not (tmp_path / "out").exists()


def test_the_child_gets_exactly_the_environment_given(tmp_path: Path) -> None:
    res = run(tmp_path, [PY, "-c", "import os; print(sorted(k for k in os.environ if k != 'LC_CTYPE'))"],
              env={"PATH": os.environ["PATH"], "ONLY_THIS": "1"})  # fmt: skip
    assert res.ok
    assert (tmp_path / "out").read_text() == "['ONLY_THIS', 'PATH']\n"


def test_the_child_gets_the_normal_signal_mask_so_sigterm_reaches_it_first(tmp_path: Path) -> None:
    """The time-out's SIGTERM must reach the agent (which may want to save its work) before the
    SIGKILL: the signals control-room holds back for itself are never blocked in its children."""
    marker = tmp_path / "term"
    code = ("import signal, sys, time\n"
            f"def bye(*a):\n    open({str(marker)!r}, 'w').write('TERM')\n    sys.exit(0)\n"
            "signal.signal(signal.SIGTERM, bye)\n"
            "print('ready', flush=True)\ntime.sleep(60)\n")  # fmt: skip
    res = run(tmp_path, [PY, "-c", code], timeout_s=1.0)
    assert res.timed_out and marker.read_text() == "TERM"


def test_call_captures_a_short_command_and_a_hang_is_timed_out(tmp_path: Path) -> None:
    both = "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"
    assert proc.call([sys.executable, "-c", both], cwd=tmp_path) == (3, "out\n", "err\n")
    assert proc.call([sys.executable, "-c", "print(input())"], cwd=tmp_path, input_text="fed\n")[1] == "fed\n"
    with pytest.raises(proc.TimedOut) as hung:
        proc.call([sys.executable, "-c", "import time; time.sleep(30)"], cwd=tmp_path, timeout_s=0.3)
    assert str(hung.value).endswith("gave no answer in 0.3s") and hung.value.exit_code != 0
    with pytest.raises(proc.ExecutableNotFound, match="no-such-program: command not found on PATH"):
        proc.call(["no-such-program"], cwd=tmp_path)
