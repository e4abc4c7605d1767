"""The git processes of one shared cycle, through the installed command: a `git` first on PATH
notes each call the command makes (git's own children find git in its exec path, not here)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from machines import probe_tasks, shared_room
from support import git

from control_room.dispatch.shared.claimrefs import PREFIX
from control_room.errors import PASSED

# `control-room cycle` in a clone the remote holds nothing new for (docs/performance.md): the
# branch's name, fetch, one scan of the refs, this clone's info/exclude, a look for changes;
# the claim (its commit, the compare-and-swap push); then add, commit, our copy of the remote's
# branch written from ours, the push of that copy with the end of the claim. Eleven (19 in 0.3.0).
CYCLE = [
    "symbolic-ref", "fetch", "for-each-ref", "rev-parse", "status", "commit-tree", "push",
    "add", "commit", "update-ref", "push",
]  # fmt: skip


def sub(line: str) -> str:
    words = line.split("\x1f")
    i = 2  # past -C <room>
    while i < len(words) and words[i] == "-c":
        i += 2
    return words[i]


def test_a_shared_cycle_asks_git_eleven_times(
    exe: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote, (m1,) = shared_room(tmp_path, exe, ["m1"], probe_tasks(1))
    real = shutil.which("git")
    assert real is not None
    shims, log = tmp_path / "shims", tmp_path / "git.log"
    shims.mkdir()
    (shims / "git").write_text(f'#!/bin/sh\n{{ printf "%s\\037" "$@"; echo; }} >> {log}\nexec {real} "$@"\n')
    (shims / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shims}:{Path(real).parent}")
    done = m1.cr("cycle")
    assert done.returncode == PASSED, done.stdout + done.stderr
    ours = [sub(line) for line in log.read_text().splitlines() if line.startswith(f"-C\x1f{m1.path}\x1f")]
    assert ours == CYCLE
    # the result and the end of its claim are on the remote, and our copy of the branch says so
    # (our copies of the claim refs are the last fetch's: the next one brings the finished claim)
    assert git(remote, "ls-tree", "--name-only", "main", "swarm/done/") == "swarm/done/t001.json"
    assert git(remote, "rev-parse", f"{PREFIX}t001") == git(remote, "rev-parse", "main")
    assert git(m1.path, "rev-parse", "refs/control-room/remote/main") == git(remote, "rev-parse", "main")
