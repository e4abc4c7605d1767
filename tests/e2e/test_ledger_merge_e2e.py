"""Two clones of a room repository append through the real CLI, then one pulls the other:
with the driver `init` registered, LEDGER.md merges by event id and verifies."""

from __future__ import annotations

import subprocess
from pathlib import Path

from machines import clone, cr
from support import data_lines, git, make_repo

from control_room.room.gitmerge import DRIVER


def test_two_clones_pull_each_others_ledger_lines_once_each(exe: str, tmp_path: Path) -> None:
    origin = make_repo(tmp_path / "origin")
    done = cr(exe, origin, "origin", "init", ".")
    assert f"registered  git merge driver {DRIVER} in {origin}: {exe} ledger merge %O %A %B" in done.stdout
    again = cr(exe, origin, "origin", "init", ".")
    assert f"kept  git merge driver {DRIVER} (registered already in {origin})" in again.stdout
    attributes = (origin / "control-room/.gitattributes").read_text()
    assert "\nLEDGER.md merge=control-room-ledger\n" in attributes
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "room")
    a, b = clone(origin, tmp_path / "a"), clone(origin, tmp_path / "b")
    for repo, writer in ((a, "alpha"), (b, "beta")):
        assert f"registered  git merge driver {DRIVER}" in cr(exe, repo, writer, "init", ".").stdout
        for k in (1, 2):
            assert cr(exe, repo, writer, "stop", "--reason", f"{writer} {k}").returncode == 0
            assert cr(exe, repo, writer, "resume").returncode == 0
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", writer)
    ours, theirs = data_lines(a / "control-room/LEDGER.md"), data_lines(b / "control-room/LEDGER.md")
    pull = subprocess.run(["git", "-C", str(a), "pull", "-q", "--no-rebase", str(b), "main"],
                          capture_output=True, text=True)  # fmt: skip
    # nothing conflicts: not the ledger, nor the views both sides refreshed (their own drivers)
    assert git(a, "diff", "--name-only", "--diff-filter=U") == "", pull.stdout + pull.stderr
    assert "Auto-merging control-room/LEDGER.md" in pull.stdout + pull.stderr
    merged = data_lines(a / "control-room/LEDGER.md")
    assert sorted(merged) == sorted(set(ours) | set(theirs))
    # origin's init, each clone's init, 2 stops and 2 resumes on each side
    assert len(merged) == len(set(merged)) == 1 + 2 + 4 + 4
    assert [line for line in merged if "| alpha |" in line] == [line for line in ours if "| alpha |" in line]
    assert [line for line in merged if "| beta |" in line] == [line for line in theirs if "| beta |" in line]
    verify = cr(exe, a, "alpha", "ledger", "verify")
    assert verify.returncode == 0, verify.stderr
    assert verify.stdout == f"ledger ok: {len(merged)} lines from 3 writers, every chain intact\n"
