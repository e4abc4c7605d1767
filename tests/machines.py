"""Several machines sharing one room, on one machine: a bare repository as the remote and one
clone per "machine", each driven through the installed command with its own host id."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from support import git, probe_task, set_gate

from control_room.ledger.read import entries
from control_room.room.layout import Room


@dataclass
class Machine:
    path: Path
    host: str
    exe: str
    named: bool = True  # False: no CONTROL_ROOM_WRITER, as a new user runs it (the clone picks its id)

    @property
    def room(self) -> Room:
        return Room(self.path)

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("CONTROL_ROOM", "CONTROL_ROOM_WRITER")}
        return {**env, "CONTROL_ROOM_WRITER": self.host} if self.named else env

    def cr(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([self.exe, *args], cwd=self.path, env=self.env(), capture_output=True,
                              text=True, timeout=timeout)  # fmt: skip
        assert "Traceback" not in done.stderr, done.stderr
        return done

    def start(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen([self.exe, *args], cwd=self.path, env=self.env(), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, start_new_session=True)  # fmt: skip

    def ledger(self) -> list[Any]:
        return list(entries(self.room.ledger))


def shared_room(
    tmp: Path, exe: str, hosts: list[str], tasks: list[dict[str, Any]], nested: bool = False, **settings: str
) -> tuple[Path, list[Machine]]:
    """A bare remote and one clone per host; the first made the room (with ``tasks`` queued and
    ``settings`` in CONTROL.md) and pushed it, every other cloned it and synced once. Each room
    is ``tmp/<host>``, or ``tmp/<host>/room`` when ``nested`` (beside the machine's other
    clones)."""
    remote = tmp / "remote.git"
    git(tmp, "init", "-q", "--bare", "-b", "main", str(remote))
    where = (lambda host: tmp / host / "room") if nested else (lambda host: tmp / host)
    first = Machine(where(hosts[0]), hosts[0], exe)
    first.path.mkdir(parents=True)
    git(first.path, "init", "-q", "-b", "main")
    assert first.cr("init", ".").returncode == 0
    set_gate(first.room, "remote", "origin")
    for key, value in settings.items():
        set_gate(first.room, key, value)
    for task in tasks:
        (first.room.state_dir("queue") / f"{task['id']}.json").write_text(json.dumps(task))
    git(first.path, "remote", "add", "origin", str(remote))
    done = first.cr("sync")
    assert done.returncode == 0, done.stdout + done.stderr
    machines = [first]
    for host in hosts[1:]:
        m = Machine(where(host), host, exe)
        subprocess.run(["git", "clone", "-q", "-b", "main", str(remote), str(m.path)], check=True)
        done = m.cr("sync")
        assert done.returncode == 0, done.stdout + done.stderr
        machines.append(m)
    return remote, machines


def clone(remote: Path, path: Path) -> Path:
    """A clone of ``remote`` at ``path`` with a git identity of its own (the machine may have none)."""
    subprocess.run(["git", "clone", "-q", str(remote), str(path)], check=True)
    git(path, "config", "user.email", "t@example.com")
    git(path, "config", "user.name", "t")
    return path


def cr(exe: str, where: Path, writer: str, *args: str) -> subprocess.CompletedProcess[str]:
    """The installed command run in ``where`` as ``writer`` (one machine's host id)."""
    return Machine(where, writer, exe).cr(*args, timeout=120)


def probe_tasks(n: int, **fields: Any) -> list[dict[str, Any]]:
    return [probe_task(f"t{k:03d}", **fields) for k in range(1, n + 1)]
