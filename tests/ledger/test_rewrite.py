"""control_room.ledger.rewrite: a process's first line while git rewrites LEDGER.md (unlink, then a
new file, then its content) waits for the rewrite and lands in the new file, whole.

The appender is a process of its own, started while the rewrite holds its locks; the test goes
on once /proc/locks shows it waiting for one (Linux), so the order is certain, not timed."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import data_lines, ev

from control_room.ledger import append, rewrite
from control_room.ledger.verify import verify

pytestmark = pytest.mark.skipif(not Path("/proc/locks").exists(), reason="reads /proc/locks (Linux)")

FIRST_LINE = (
    "import sys; from pathlib import Path; from control_room.ledger import append; "
    "from control_room.ledger.events import Event; "
    "append(Path(sys.argv[1]), Event('late', (), ('detail',), 'a line'), detail='written during the rewrite')"
)


def _appender(ledger: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "CONTROL_ROOM_WRITER": "tester"}
    return subprocess.Popen([sys.executable, "-c", FIRST_LINE, str(ledger)], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip


def _waits(child: subprocess.Popen[str]) -> None:
    """Until ``child`` waits for a lock (a blocked request in /proc/locks); fails if it ends."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if child.poll() is not None:
            out, err = child.communicate()
            pytest.fail(f"the appender ended instead of waiting (exit {child.returncode}): {out}{err}")
        blocked = [ln for ln in Path("/proc/locks").read_text().splitlines() if "->" in ln]
        if any(f" {child.pid} " in ln for ln in blocked):
            return
        time.sleep(0.01)
    pytest.fail("the appender never waited for a lock")


def _done(child: subprocess.Popen[str]) -> None:
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, out + err


def test_a_first_line_while_the_ledger_is_gone_waits_for_the_new_file(ledger: Path) -> None:
    append(ledger, ev("before"), writer="tester")
    text = ledger.read_bytes()
    with rewrite.held(ledger, rewriting=True):
        ledger.unlink()  # git: the old file gone, the new one not made yet
        child = _appender(ledger)
        _waits(child)
        ledger.write_bytes(text)
    _done(child)
    assert [ln.split(" | ")[3] for ln in data_lines(ledger)] == ["before", "late"]
    assert verify(ledger).ok


def test_a_first_line_into_the_new_file_before_git_wrote_it_is_not_written_over(ledger: Path) -> None:
    append(ledger, ev("before"), writer="tester")
    text = ledger.read_bytes()
    with rewrite.held(ledger, rewriting=True):
        ledger.unlink()
        fd = os.open(ledger, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)  # as git makes it: empty
        try:
            child = _appender(ledger)
            _waits(child)  # it opened the empty file and waits for the rewrite's end
            os.write(fd, text)  # git writes from the start, not at the end
        finally:
            os.close(fd)
    _done(child)
    assert [ln.split(" | ")[3] for ln in data_lines(ledger)] == ["before", "late"]
    assert verify(ledger).ok


def test_without_a_rewrite_a_first_line_neither_waits_nor_makes_the_lock(ledger: Path) -> None:
    child = _appender(ledger)
    _done(child)
    assert [ln.split(" | ")[3] for ln in data_lines(ledger)] == ["late"]
    assert not (ledger.parent / rewrite.REWRITE_LOCK).exists()


def test_a_missing_ledger_with_no_rewrite_is_still_a_clear_error(tmp_path: Path) -> None:
    child = _appender(tmp_path / "LEDGER.md")
    _, err = child.communicate(timeout=60)
    assert child.returncode != 0 and "LEDGER.md is missing" in err
