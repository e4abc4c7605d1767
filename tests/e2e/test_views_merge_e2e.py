"""Two clones of a room share a bare remote: a person edits ROUTES.md and CURRENT_CONTEXT.md on
one, cycles run on the other, both commit, one pushes, the other pulls. With the drivers `init`
registered, nothing conflicts: the person's edits and the cycles' counts are both there, and
`route recount` agrees with the merged ledger."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from machines import clone, cr
from support import FAIL, git, make_repo, probe_task

from control_room.room.gitmerge import DRIVERS
from control_room.store.markdown import AUTO_BEGIN


def row(root: Path, route: str) -> list[str]:
    for line in (root / "control-room/ROUTES.md").read_text().splitlines():
        if line.startswith(f"| {route} |"):
            return [c.strip() for c in line.strip("|").split("|")]
    raise AssertionError(f"no row {route}")


def test_a_persons_edits_on_one_clone_and_cycles_on_the_other_merge_without_conflict(
    exe: str, tmp_path: Path
) -> None:
    first = make_repo(tmp_path / "first")
    assert cr(exe, first, "origin", "init", ".").returncode == 0
    for route in ("r1", "r2"):
        assert cr(exe, first, "origin", "route", "add", route, "--title", f"route {route}").returncode == 0
    git(first, "add", "-A")
    git(first, "commit", "-q", "-m", "room")
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(first), str(remote)], check=True)
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    for repo, writer in ((a, "alpha"), (b, "beta")):
        said = cr(exe, repo, writer, "init", ".").stdout
        for driver in DRIVERS:
            assert f"registered  git merge driver {driver.name} in {repo}: {exe} {driver.args}\n" in said

    # A: a person sets r1's verdict and writes a line in the free part; a command refreshes the views
    routes_md = a / "control-room/ROUTES.md"
    routes_md.write_text(routes_md.read_text().replace("| r1 | untested |", "| r1 | promising |"))
    context = a / "control-room/CURRENT_CONTEXT.md"
    note = "Alpha's person: r2 looks slow on big inputs.\n"
    text = context.read_text()
    context.write_text(text.replace("## Now\n\n", "## Now\n\n" + note, 1))
    assert cr(exe, a, "alpha", "stop", "--reason", "lunch").returncode == 0
    assert cr(exe, a, "alpha", "resume").returncode == 0

    # B: cycles run two probe tasks, one on each route; r2's fails
    queue = b / "swarm/queue"
    (queue / "t1.json").write_text(json.dumps(probe_task("t1", route="r1", priority=2)))
    (queue / "t2.json").write_text(json.dumps(probe_task("t2", route="r2", validator=FAIL, priority=1)))
    ran = cr(exe, b, "beta", "run", "--cycles", "2", "--every", "0")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert (row(b, "r1")[3], row(b, "r2")[3], row(b, "r2")[5].split()[:2]) == ("1", "1", ["fail", "t2"])

    for repo, writer in ((a, "alpha"), (b, "beta")):
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", writer)
    git(b, "push", "-q")
    ours_auto = context.read_text().split(AUTO_BEGIN)[1]
    pull = subprocess.run(["git", "-C", str(a), "pull", "--no-rebase"], capture_output=True, text=True)
    assert pull.returncode == 0, pull.stdout + pull.stderr
    assert git(a, "diff", "--name-only", "--diff-filter=U") == ""
    out = pull.stdout + pull.stderr
    for name in ("LEDGER.md", "ROUTES.md", "CURRENT_CONTEXT.md", "DIGEST.md"):
        assert f"Auto-merging control-room/{name}" in out, out
    assert "CONFLICT" not in out

    # A's edits are there, and B's counts
    assert row(a, "r1")[:4] == ["r1", "promising", "route r1", "1"]
    assert row(a, "r1")[5].split()[:2] == ["pass", "t1"]
    assert row(a, "r2")[:4] == ["r2", "alive", "route r2", "1"]
    merged = context.read_text()
    assert merged.count(note) == 1 and merged.split(AUTO_BEGIN)[1] == ours_auto
    recount = cr(exe, a, "alpha", "route", "recount")
    assert (recount.returncode, recount.stdout) == (0, "ROUTES.md already agrees with the ledger\n")
    verify = cr(exe, a, "alpha", "ledger", "verify")
    assert verify.returncode == 0, verify.stderr
    # the next command that changes the room refreshes the auto block from the merged room
    assert cr(exe, a, "alpha", "stop", "--reason", "after the pull").returncode == 0
    assert "- tasks: queue 1, running 0, done 1" in context.read_text()
