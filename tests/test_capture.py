"""capture: a child's output into capped files and its stdin fed, from one poll loop, no thread."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from control_room import capture

PY = sys.executable


def spawn(code: str, stdin: bool = False) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [PY, "-c", code],
        stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def pump(
    child: subprocess.Popen[bytes], tmp_path: Path, cap: int = 1000, payload: bytes = b""
) -> tuple[capture.Stream, capture.Stream]:
    out, err = capture.Stream(tmp_path / "out"), capture.Stream(tmp_path / "err")
    assert child.stdout is not None and child.stderr is not None
    pipes = capture.Pipes(
        [(child.stdout, out, capture.sink(out)), (child.stderr, err, capture.sink(err))],
        cap,
        child.stdin,
        payload,
        capture.exit_fd(child.pid),
    )
    while child.poll() is None:
        pipes.wait(1.0)
    pipes.drain(2.0)
    pipes.close()
    return out, err


def test_both_streams_are_kept_to_the_cap_and_read_to_their_end(tmp_path: Path) -> None:
    code = "import sys; sys.stdout.write('o' * 300_000); sys.stderr.write('e' * 10)"
    out, err = pump(spawn(code), tmp_path, cap=1000)
    assert (out.bytes_seen, out.bytes_kept, out.truncated) == (300_000, 1000, True)
    assert (tmp_path / "out").read_bytes() == b"o" * 1000
    assert (err.bytes_seen, err.bytes_kept, err.truncated) == (10, 10, False)
    assert (tmp_path / "err").read_bytes() == b"e" * 10


def test_the_payload_reaches_stdin_and_a_child_that_never_reads_it_blocks_nothing(tmp_path: Path) -> None:
    payload = b"x" * 1_000_000  # more than a pipe holds
    pump(spawn("import sys; print(len(sys.stdin.buffer.read()))", stdin=True), tmp_path, 100, payload)
    assert (tmp_path / "out").read_text() == "1000000\n"
    pump(spawn("print('not reading')", stdin=True), tmp_path, 100, payload)  # returns: nothing blocked
    assert (tmp_path / "out").read_text() == "not reading\n"


def test_the_exit_of_a_child_is_heard_while_a_grandchild_holds_its_pipes(tmp_path: Path) -> None:
    code = (
        "import subprocess, sys; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(3)']); "
        "print('parent done')"
    )
    child = spawn(code)
    pump(child, tmp_path)  # drain gives up after 2 s: the grandchild still holds the pipe
    assert child.returncode == 0
    assert (tmp_path / "out").read_text() == "parent done\n"


def test_a_capture_file_that_cannot_be_written_is_noted_and_the_rest_dropped(tmp_path: Path) -> None:
    if not os.path.exists("/dev/full"):
        return
    out = capture.Stream(Path("/dev/full"))
    child = spawn("print('x' * 100000)")
    assert child.stdout is not None and child.stderr is not None
    fd = os.open("/dev/full", os.O_WRONLY)
    err = capture.Stream(tmp_path / "err")
    pipes = capture.Pipes([(child.stdout, out, fd), (child.stderr, err, capture.sink(err))], 10**9)
    while child.poll() is None:
        pipes.wait(0.05)
    pipes.drain(2.0)
    pipes.close()
    assert out.bytes_seen == 100001 and out.bytes_kept == 0
    assert out.error.startswith("/dev/full: ")


def test_no_thread_is_started(tmp_path: Path) -> None:
    before = threading.active_count()
    pump(spawn("print('hi')"), tmp_path)
    assert threading.active_count() == before
