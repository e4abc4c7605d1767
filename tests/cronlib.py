"""Helpers for the schedule tests: what cron does with a crontab line, the user's real crontab
saved and put back around a test, and fake `systemctl`/`launchctl` on PATH."""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from support import FAKES

STAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ  "  # what `cycle --log` puts before each line
CLEAN_PATH = "/usr/bin:/bin"


def starters() -> list[list[str]]:
    """What an entry may start control-room with: the console script on PATH (absolute), or
    this interpreter with -m."""
    found = shutil.which("control-room")
    out = [[sys.executable, "-m", "control_room"]]
    if found:
        out.insert(0, [str(Path(found).absolute())])
    return out


def once(path: str) -> str:
    """PATH with each folder once, in its first place (what the entries carry)."""
    out: list[str] = []
    for folder in path.split(os.pathsep):
        if folder and folder not in out:
            out.append(folder)
    return os.pathsep.join(out)


def split_cron(line: str) -> tuple[list[str], str]:
    """(the five schedule fields, the command part) of a crontab line."""
    parts = line.split(" ", 5)
    return parts[:5], parts[5]


def cron_command(command: str) -> tuple[str, str]:
    """What cron does to the command part before sh sees it (crontab(5)): an unescaped `%`
    ends the command (the rest is stdin, its `%`s newlines); `\\%` is a literal `%`."""
    out, i = [], 0
    while i < len(command):
        ch = command[i]
        if ch == "\\" and command[i + 1 : i + 2] == "%":
            out.append("%")
            i += 2
            continue
        if ch == "%":
            return "".join(out), command[i + 1 :].replace("%", "\n")
        out.append(ch)
        i += 1
    return "".join(out), ""


def run_as_cron(command: str, home: Path) -> subprocess.CompletedProcess[str]:
    """The command part of a crontab line run as cron runs it: `sh -c`, from HOME, with only
    PATH and HOME set (`env -i`)."""
    sh_command, stdin = cron_command(command)
    argv = ["env", "-i", f"PATH={CLEAN_PATH}", f"HOME={home}", "/bin/sh", "-c", sh_command]
    return subprocess.run(argv, check=False, input=stdin, cwd=home, capture_output=True, text=True,
                          timeout=120)  # fmt: skip


def stamped(log: str) -> list[str]:
    """The log's lines without their time stamps; every line must have one."""
    lines = log.splitlines()
    for line in lines:
        assert re.match(STAMP, line), line
    return [re.sub(f"^{STAMP}", "", line) for line in lines]


def need_crontab() -> str:
    """The real `crontab`; missing, the test is skipped with the reason, or fails when
    CONTROL_ROOM_REQUIRE_CRONTAB=1 (CI installs Debian's cron)."""
    found = shutil.which("crontab")
    if found is None:
        reason = "crontab is not installed (Debian: apt-get install cron)"
        if os.environ.get("CONTROL_ROOM_REQUIRE_CRONTAB") == "1":
            pytest.fail(f"{reason}, and CONTROL_ROOM_REQUIRE_CRONTAB=1 requires it")
        pytest.skip(reason)
    return found


def crontab_text() -> str:
    done = subprocess.run(["crontab", "-l"], capture_output=True, text=True, check=False)
    return done.stdout if done.returncode == 0 else ""


def set_crontab(text: str) -> None:
    subprocess.run(["crontab", "-"], input=text, text=True, check=True)


@contextmanager
def users_crontab() -> Iterator[None]:
    """Hold the user's real crontab for one test (a lock across test processes), and put back
    what it held before, or no crontab if there was none."""
    need_crontab()
    lock_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"control-room-tests-crontab-{os.getuid()}.lock"
    with open(lock_path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        before = subprocess.run(["crontab", "-l"], capture_output=True, text=True, check=False)
        try:
            yield
        finally:
            if before.returncode == 0:
                set_crontab(before.stdout)
            else:
                subprocess.run(["crontab", "-r"], capture_output=True, check=False)


def fake_ctl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *names: str, **env: str) -> Path:
    """`systemctl` and/or `launchctl` on PATH as the fake in tests/fakes/schedulerctl, which
    writes each call to the returned log."""
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir(exist_ok=True)
    for name in names:
        (bin_dir / name).symlink_to(FAKES / "schedulerctl")
    log = tmp_path / "ctl.log"
    log.touch()
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("SCHEDULERCTL_LOG", str(log))
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return log
