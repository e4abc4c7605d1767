"""Where input enters (docs/security.md), attacked through the installed command: a room path
that would inject schedule lines, and `dashboard --serve` with an idle client, a rebound host
name, a forged request line and clients that go away."""

from __future__ import annotations

import os
import re
import socket
import struct
import subprocess
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from cronlib import crontab_text, set_crontab, users_crontab

from control_room import errors

# 10a. a room path with a line break never becomes a line of a schedule --------------------------

EVIL = "r\n* * * * * touch control-room-pwned\n"


def _evil_room(exe: str, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A room whose folder name carries a crontab line, HOME and XDG_CONFIG_HOME in tmp_path."""
    root = tmp_path / EVIL
    root.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "CONTROL_ROOM"}
    env.update(
        HOME=str(tmp_path / "home"), XDG_CONFIG_HOME=str(tmp_path / "config"), CONTROL_ROOM_WRITER="e2e"
    )
    done = subprocess.run([exe, "init"], cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return root, env


def test_a_room_path_with_a_line_break_is_refused_before_any_entry_is_written(
    exe: str, tmp_path: Path
) -> None:
    root, env = _evil_room(exe, tmp_path)
    (tmp_path / "home").mkdir()
    said = re.escape(str(root).replace("\n", "\\n"))
    one_line = (
        rf"Error: the room's path '{said}' holds a control character \(a line break, a tab, \.\.\.\): a "
        r"schedule entry cannot carry it safely; move the room \(or fix PATH\) and run again\n"
    )
    mine = "# my own line, kept\n17 3 * * * /usr/bin/true mine\n"
    with users_crontab():
        set_crontab(mine)
        for args in (["--cron"], ["--systemd"], ["--launchd"], ["--cron", "--install"],
                     ["--systemd", "--install"], ["--launchd", "--install"]):  # fmt: skip
            done = subprocess.run([exe, "schedule", *args], cwd=root, env=env, capture_output=True, text=True,
                                  timeout=120)  # fmt: skip
            assert (done.returncode, done.stdout) == (errors.INVALID, ""), (args, done.stdout)
            assert re.fullmatch(one_line, done.stderr), (args, done.stderr)
        assert crontab_text() == mine
    assert not (tmp_path / "config").exists()  # no systemd unit, not even its folder
    assert list((tmp_path / "home").iterdir()) == []  # no LaunchAgents plist
    ledger = (root / "control-room" / "LEDGER.md").read_text(encoding="utf-8")
    assert "schedule-install" not in ledger


# 10b. `dashboard --serve`: idle clients, other host names, forged lines, clients that go ----------


@contextmanager
def serving(cr: Any) -> Iterator[tuple[int, subprocess.Popen[str]]]:
    """`control-room dashboard --serve --port 0` in the room; (its port, the process). Its stderr
    is read whole after it stops."""
    proc = subprocess.Popen([cr.exe, "dashboard", "--serve", "--port", "0"], env=cr.env,
                            cwd=cr.env["CONTROL_ROOM"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert m is not None, line
        yield int(m.group(1)), proc
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def raw(port: int, request: bytes) -> bytes:
    """Send ``request`` as it is on a fresh connection; everything the server answered."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(request)
        s.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def test_an_idle_connection_blocks_no_other_request(cr: Any) -> None:
    with serving(cr) as (port, _proc):
        idle = socket.create_connection(("127.0.0.1", port), timeout=30)
        try:
            idle.sendall(b"GET / HTTP/1.1\r\n")  # and never the rest
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/routes.html", timeout=30) as resp:
                assert resp.status == 200 and b"<title>Routes - control-room</title>" in resp.read()
        finally:
            idle.close()


def test_only_a_loopback_host_is_served(cr: Any) -> None:
    with serving(cr) as (port, _proc):
        for host in (f"127.0.0.1:{port}", "127.0.0.1", f"localhost:{port}", "LOCALHOST", f"[::1]:{port}"):
            answer = raw(
                port, f"GET /routes.html HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode()
            )
            assert status_of(answer) == 200, host
        rebound = ("evil.example", f"evil.example:{port}", "localhost.evil.example", "127.0.0.1.evil.example")
        for host in (*rebound, f"127.0.0.1:{port}@evil.example", "", "localhost:http"):
            answer = raw(
                port, f"GET /routes.html HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode()
            )
            assert status_of(answer) == 403, host
            assert answer.endswith(b"\r\n\r\nforbidden: ask for this page as 127.0.0.1 or localhost\n"), host
        assert status_of(raw(port, b"GET /routes.html HTTP/1.0\r\n\r\n")) == 403  # no Host at all


def test_request_lines_are_logged_escaped_and_a_client_that_goes_is_no_traceback(cr: Any) -> None:
    with serving(cr) as (port, proc):
        forged = (
            b'GET /a\rforged 127.0.0.1 "GET /x HTTP/1.1" 200 -\x1b[2J HTTP/1.1\r\nHost: localhost\r\n\r\n'
        )
        assert status_of(raw(port, forged)) == 400
        for _ in range(5):  # the client resets the connection (SO_LINGER 0) as soon as it asked
            s = socket.create_connection(("127.0.0.1", port), timeout=30)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.sendall(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            s.close()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=30) as resp:
            assert resp.status == 200
    _out, err = proc.communicate()
    assert "Traceback" not in err and "Exception occurred" not in err, err
    lines = err.splitlines()
    assert not any(line.startswith("forged") for line in lines), err
    assert "\x1b" not in err
    logged = [line for line in lines if "forged" in line]
    assert logged and all(line.startswith("127.0.0.1 ") for line in logged), err
    assert any(
        '"GET /a\\rforged 127.0.0.1' in line and '\\x1b[2J HTTP/1.1" 400' in line for line in logged
    ), err
