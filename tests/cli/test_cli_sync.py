"""control_room.cli.sync: `sync` through a real bare remote, --host, the drivers registered; its refusals."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from support import git, set_gate

from control_room import errors
from control_room.room import scaffold
from control_room.room.layout import Room

Run = Callable[..., Result]
BAD_HOST = (
    "Usage: control-room sync [OPTIONS]\nTry 'control-room sync --help' for help.\n\n"
    "Error: Invalid value for --host: 'a b': a host id is letters, digits, '.', '_' and '-' (64 at most)\n"
)


def shared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Room]:
    """A bare remote and a room at tmp_path/m1, a git work tree on `main` whose CONTROL.md says
    ``remote: origin``; the current folder."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    root = tmp_path / "m1"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    scaffold.init(root)
    room = Room(root)
    set_gate(room, "remote", "origin")
    git(root, "remote", "add", "origin", str(remote))
    monkeypatch.chdir(root)
    return remote, room


def test_sync_without_a_remote_says_what_to_set(run, inside: Room) -> None:  # type: ignore[no-untyped-def]
    done = run("sync")
    assert done.exit_code == errors.INVALID
    assert done.stderr == (
        f"Error: {inside.control} sets no remote: add `remote: origin` (or a URL) to share this room "
        "(docs/many-machines.md)\n"
    )


def test_a_first_sync_pushes_the_room_and_registers_the_drivers_and_a_second_has_nothing_to_do(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote, room = shared(tmp_path, monkeypatch)
    done = run("sync")
    assert (done.exit_code, done.stdout, done.stderr) == (
        0, "synced main with origin as tester: nothing new to merge, pushed\n", "")  # fmt: skip
    assert git(remote, "rev-parse", "main") == git(room.root, "rev-parse", "HEAD")
    assert git(remote, "log", "-1", "--format=%an: %s", "main") == (
        "control-room (tester): control-room: control-room sync on tester")  # fmt: skip
    assert "control-room/CONTROL.md" in git(remote, "ls-tree", "-r", "--name-only", "main").split("\n")
    # registered in the clone's config, so a person's own `git pull` merges the ledger too
    drivers = git(room.root, "config", "--local", "--get-regexp", r"^merge\..*\.driver$").splitlines()
    names = ["control-room-ledger", "control-room-routes", "control-room-view"]
    assert [line.split(" ", 1)[0] for line in drivers] == [f"merge.{name}.driver" for name in names]
    assert drivers[2].endswith(" merge-driver view %O %A %B %P")
    again = run("sync")
    assert (again.exit_code, again.stdout, again.stderr) == (
        0, "synced main with origin as tester: nothing new to merge, nothing to push\n", "")  # fmt: skip


def test_host_sets_this_clones_id_before_it_syncs_and_never_shares_it(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote, room = shared(tmp_path, monkeypatch)
    monkeypatch.delenv("CONTROL_ROOM_WRITER")  # else it names the writer, whatever .host says
    done = run("sync", "--host", "m7")
    said = "host id: m7 (control-room/.host)\nsynced main with origin as m7: nothing new to merge, pushed\n"
    assert (done.exit_code, done.stdout, done.stderr) == (0, said, "")
    assert (room.cr / ".host").read_text() == "m7\n"
    assert git(remote, "log", "-1", "--format=%an", "main") == "control-room (m7)"
    assert "control-room/.host" not in git(remote, "ls-tree", "-r", "--name-only", "main").split("\n")
    assert run("sync").stdout == "synced main with origin as m7: nothing new to merge, nothing to push\n"


def test_a_bad_host_is_a_usage_error_and_nothing_is_written(run: Run, inside: Room) -> None:
    done = run("sync", "--host", "a b")
    assert (done.exit_code, done.stdout, done.stderr) == (errors.USAGE, "", BAD_HOST)
    assert not (inside.cr / ".host").exists()


def test_a_host_is_kept_even_when_the_room_has_no_remote(run: Run, inside: Room) -> None:
    done = run("sync", "--host", "m7")  # the tests' CONTROL_ROOM_WRITER is "tester"
    said = (
        "host id: m7 (control-room/.host)\n"
        "  but CONTROL_ROOM_WRITER is set here: while it is, this shell writes as tester\n"
    )
    assert (done.exit_code, done.stdout) == (errors.INVALID, said)
    assert done.stderr.startswith(f"Error: {inside.control} sets no remote: ")
    assert (inside.cr / ".host").read_text() == "m7\n"


def test_a_sync_merges_what_another_clone_pushed(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote, room = shared(tmp_path, monkeypatch)
    me = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
    git(room.root, "add", "-A")
    git(room.root, *me, "commit", "-q", "-m", "the room")
    git(room.root, "push", "-q", "origin", "HEAD:refs/heads/main")
    other = tmp_path / "m2"  # another machine's clone, which pushed a note
    subprocess.run(["git", "clone", "-q", "-b", "main", str(remote), str(other)], check=True)
    (other / "notes.md").write_text("from m2\n")
    git(other, "add", "notes.md")
    git(other, *me, "commit", "-q", "-m", "a note")
    git(other, "push", "-q", "origin", "main")
    done = run("sync")
    assert (done.exit_code, done.stdout, done.stderr) == (
        0, "synced main with origin as tester: merged new work, nothing to push\n", "")  # fmt: skip
    assert (room.root / "notes.md").read_text() == "from m2\n"
    assert git(room.root, "rev-parse", "HEAD") == git(remote, "rev-parse", "main")


def test_an_unreachable_remote_is_exit_17_with_gits_own_words(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, room = shared(tmp_path, monkeypatch)
    git(room.root, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    monkeypatch.chdir(tmp_path)  # found through --room
    done = run("sync", "--room", str(room.root))
    assert (done.exit_code, done.stdout) == (errors.OFFLINE, "")
    assert done.stderr.startswith(
        f"Error: cannot fetch from remote 'origin': fatal: '{tmp_path / 'gone.git'}' "
    )
    assert done.stderr.count("\n") == 1
