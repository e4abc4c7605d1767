"""doctor's `shared` check, on real clones of one bare remote."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from machines import Machine, probe_tasks, shared_room
from support import git


def shared_lines(m: Machine) -> list[str]:
    return [ln for ln in m.cr("doctor").stdout.splitlines() if " shared " in f" {ln} "]


def test_a_shared_clone_says_its_remote_and_host(exe: str, tmp_path: Path) -> None:
    _, (m1,) = shared_room(tmp_path, exe, ["m1"], [])
    assert shared_lines(m1) == [
        "OK   shared  shared through origin (main) as host m1 (from CONTROL_ROOM_WRITER)"
    ]


def test_two_clones_with_one_host_id_are_found_out(exe: str, tmp_path: Path) -> None:
    remote, (m1,) = shared_room(tmp_path, exe, ["m1"], probe_tasks(1, command=["sleep", "30"]))
    twin = Machine(tmp_path / "twin", "m1", exe)  # a second clone, same host id
    subprocess.run(["git", "clone", "-q", "-b", "main", str(remote), str(twin.path)], check=True)
    cycle = m1.start("cycle")
    try:
        for _ in range(1200):  # up to a minute for m1's claim to reach the remote
            if git(remote, "for-each-ref", "refs/control-room/claims/t001"):
                break
            time.sleep(0.05)
        else:
            raise AssertionError("m1 never claimed t001")
        lines = shared_lines(twin)
        assert lines[0] == "OK   shared  shared through origin (main) as host m1 (from CONTROL_ROOM_WRITER)"
        assert lines[1] == (
            "WARN shared  the remote shows live claims of host m1 that this clone did not make (t001): "
            "another clone uses the same host id, and each takes the other's claims for its own; "
            "give each clone its own: `control-room sync --host NAME`"
        )
        assert shared_lines(m1) == [
            "OK   shared  shared through origin (main) as host m1 (from CONTROL_ROOM_WRITER)"
        ]
    finally:
        cycle.terminate()
        cycle.wait(timeout=60)


def test_an_unreachable_remote_fails(exe: str, tmp_path: Path) -> None:
    _, (m1,) = shared_room(tmp_path, exe, ["m1"], [])
    git(m1.path, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    (line,) = shared_lines(m1)
    assert line.startswith("FAIL shared  cannot fetch from remote 'origin': fatal: ")
    assert line.endswith(": cycles claim nothing (exit 17); check the remote and the network")
