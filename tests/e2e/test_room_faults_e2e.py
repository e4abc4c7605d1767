"""A fault of the room is the room's (SPEC §15), through the installed command on real files:
checked before the claim (exit ROOM_INVALID, one line naming the file and the fix, the task
queued, nothing rejected, the ledger untouched), or, when it strikes after the claim (the disk
fills mid-run), the task is un-claimed without using a round.

Read-only folders and files are real read-only bind mounts, and the full disk a real 8 MiB
tmpfs, each inside a private mount namespace (``unshare -rm``): chmod cannot stop root, and
these tests run as root in CI. Where namespaces are not allowed, those tests say so and skip;
the same faults are also injected at the store layer by tests/dispatch/run/test_preflight.py."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from support import PY, events, queue, where

from control_room import errors
from control_room.ledger.line import HEADER, PREAMBLE
from control_room.room.layout import Room


def _namespaces() -> str | None:
    """Why mount namespaces cannot be used here, or None."""
    if shutil.which("unshare") is None:
        return "no unshare command"
    done = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs tmpfs /mnt"], capture_output=True)
    return None if done.returncode == 0 else f"unshare -rm cannot mount here: {done.stderr.decode().strip()}"


NO_NAMESPACES = _namespaces()
needs_namespaces = pytest.mark.skipif(NO_NAMESPACES is not None, reason=f"{NO_NAMESPACES}")


def read_only(cr, path: Path, *args: str) -> subprocess.CompletedProcess[str]:  # type: ignore[no-untyped-def]
    """Run the command with ``path`` (a folder or a file) mounted read-only."""
    p = shlex.quote(str(path))
    script = f"mount --bind {p} {p} && mount -o remount,bind,ro {p} && exec {shlex.join([cr.exe, *args])}"
    return subprocess.run(["unshare", "-rm", "sh", "-c", script], env=cr.env, capture_output=True, text=True,
                          timeout=120)  # fmt: skip


def set_key(room: Room, key: str, value: str) -> None:
    text = room.control.read_text()
    text, n = re.subn(rf"(?m)^{key}:.*$", f"{key}: {value}", text)
    assert n == 1, key
    room.control.write_text(text)


def assert_nothing_claimed(room: Room, before: bytes) -> None:
    assert where(room, "t") == ["queue"]
    assert "rounds" not in json.loads((room.state_dir("queue") / "t.json").read_text())
    assert os.listdir(room.state_dir("rejected")) == [] and os.listdir(room.state_dir("running")) == []
    assert room.ledger.read_bytes() == before


def refused(done: subprocess.CompletedProcess[str], message: str) -> None:
    assert (done.returncode, done.stdout, done.stderr) == (
        errors.ROOM_INVALID, "", f"Error: room invalid: {message}; nothing was claimed\n")  # fmt: skip


@needs_namespaces
@pytest.mark.parametrize("folder", ["swarm/results", "swarm/running", "control-room"])
def test_a_read_only_folder_stops_the_cycle_before_the_claim(cr, room: Room, folder: str) -> None:
    queue(room, "t")
    before = room.ledger.read_bytes()
    refused(read_only(cr, room.root / folder, "cycle"),
            f"{room.root / folder} is not writable; give this user write permission on it")  # fmt: skip
    assert_nothing_claimed(room, before)


@needs_namespaces
def test_a_read_only_ledger_stops_the_cycle_before_the_claim(cr, room: Room) -> None:
    queue(room, "t")
    before = room.ledger.read_bytes()
    refused(read_only(cr, room.ledger, "cycle"),
            f"{room.ledger} is not writable; give this user write permission on it")  # fmt: skip
    assert_nothing_claimed(room, before)


def test_a_missing_work_dir_is_the_rooms_fault(cr, room: Room) -> None:
    queue(room, "t")
    set_key(room, "workdir", "/nonexistent")
    before = room.ledger.read_bytes()
    refused(
        cr("cycle"),
        f"{room.control}: workdir /nonexistent does not exist; create it or fix workdir in CONTROL.md",
    )
    assert_nothing_claimed(room, before)


def test_an_unknown_default_adapter_rejects_no_task(cr, room: Room) -> None:
    queue(room, "t")
    set_key(room, "default_adapter", "nope")
    before = room.ledger.read_bytes()
    done = cr("cycle")
    assert done.returncode == errors.ROOM_INVALID
    assert done.stderr.startswith(f"Error: room invalid: {room.control}: default_adapter 'nope' "
                                  "is not an adapter (known: aider, amp, claude, ")  # fmt: skip
    assert done.stderr.endswith("); fix it in CONTROL.md; nothing was claimed\n")
    assert cr("task", "list").returncode == 0  # the listing rejects nothing either
    assert_nothing_claimed(room, before)
    added = cr("task", "add", "--objective", "o", "--falsifier", "f", "--validator", "true",
               "--max-cost", "1", "--wall-clock", "60", "--kill-condition", "k",
               "--command", "true")  # fmt: skip
    assert added.returncode == errors.ROOM_INVALID
    assert added.stderr.startswith(
        "Error: room invalid: CONTROL.md names adapter 'nope', which is not an adapter"
    )
    assert room.ledger.read_bytes() == before and where(room, "t") == ["queue"]


def test_an_unknown_adapter_in_a_role_file_rejects_no_task(cr, room: Room) -> None:
    queue(room, "t", role="tester", adapter=None)
    (room.root / "agents" / "tester.md").write_text("---\nadapter: nope\n---\nYou test.\n")
    before = room.ledger.read_bytes()
    done = cr("cycle")
    assert done.returncode == errors.ROOM_INVALID
    assert done.stderr.startswith(
        "Error: room invalid: agents/tester.md names adapter 'nope', which is not an"
    )
    assert_nothing_claimed(room, before)


def test_invalid_settings_are_the_rooms_fault(cr, room: Room) -> None:
    queue(room, "t")
    set_key(room, "max_parallel", "lots")
    before = room.ledger.read_bytes()
    done = cr("cycle")
    assert done.returncode == errors.ROOM_INVALID
    assert done.stderr.startswith(f"Error: room invalid: {room.control}: ")
    assert "max_parallel" in done.stderr and done.stderr.endswith("; nothing was claimed\n")
    assert_nothing_claimed(room, before)


@pytest.mark.parametrize(
    "content",
    ["", "| time | id |\n", PREAMBLE.replace(HEADER + "\n", "")],
    ids=["empty", "junk", "no-table-header"],
)
def test_a_ledger_without_its_header_gets_no_line(cr, room: Room, content: str) -> None:
    queue(room, "t")
    room.ledger.write_text(content)
    what = "empty" if not content else "without its header"
    refused(
        cr("cycle"),
        f"{room.ledger} is {what}; restore it (git checkout), or `control-room init` restores the header",
    )
    assert_nothing_claimed(room, content.encode())


def test_a_missing_state_folder_is_named_with_its_fix(cr, room: Room) -> None:
    queue(room, "t")
    (room.swarm / "outbox").rmdir()
    before = room.ledger.read_bytes()
    refused(
        cr("cycle"),
        f"{room.swarm / 'outbox'} is missing; `control-room init {room.root}` restores the room's folders",
    )
    assert_nothing_claimed(room, before)


def test_too_little_free_disk_stops_the_cycle_before_the_claim(cr, room: Room) -> None:
    queue(room, "t")
    set_key(room, "min_free_mb", str(2**40))  # more than any disk here has
    before = room.ledger.read_bytes()
    done = cr("cycle")
    assert done.returncode == errors.ROOM_INVALID
    assert re.fullmatch(rf"Error: room invalid: {re.escape(str(room.root))}: [\d.]+ MiB free on its disk, "
                        rf"below CONTROL.md min_free_mb {2**40}; free some space; nothing was claimed\n",
                        done.stderr)  # fmt: skip
    assert_nothing_claimed(room, before)


FILLER = (
    "f = open('filler', 'wb')\n"
    "try:\n"
    "    while True:\n"
    "        f.write(b'x' * 65536); f.flush()\n"
    "except OSError:\n"
    "    pass\n"
)


@needs_namespaces
def test_a_disk_that_fills_mid_run_unclaims_the_task_without_a_round(exe: str, tmp_path: Path) -> None:
    """On a real 8 MiB tmpfs: the agent fills the disk, so its output cannot be saved."""
    disk, out = tmp_path / "disk", tmp_path / "out"
    disk.mkdir()
    out.mkdir()
    agent = tmp_path / "filler.py"
    agent.write_text(FILLER + "print('DECISION: done')\n")
    room = disk / "room"
    task = {"id": "t", "objective": "o", "falsifier": "f", "validator": ["true"], "max_cost_usd": 1,
            "wall_clock_s": 60, "kill_condition": "k", "command": [PY, str(agent)]}  # fmt: skip
    q = shlex.quote
    script = "\n".join([
        "set -e",
        f"mount -t tmpfs -o size=8m tmpfs {q(str(disk))}",
        f"{q(exe)} init {q(str(room))} > /dev/null",
        f"sed -i 's/^min_free_mb:.*/min_free_mb: 1/' {q(str(room / 'control-room' / 'CONTROL.md'))}",
        f"printf '%s' {q(json.dumps(task))} > {q(str(room / 'swarm' / 'queue' / 't.json'))}",
        "set +e",
        f"{q(exe)} --room {q(str(room))} cycle > {q(str(out / 'stdout'))} 2> {q(str(out / 'stderr'))}",
        f"echo $? > {q(str(out / 'code'))}",
        f"rm {q(str(room / 'filler'))}",  # space again, to read what is left
        f"{q(exe)} --room {q(str(room))} ledger verify > {q(str(out / 'verify'))} 2>&1; "
        f"echo $? >> {q(str(out / 'verify'))}",
        f"cp -r {q(str(room))} {q(str(out / 'room'))}",
    ])  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "CONTROL_ROOM"}
    done = subprocess.run(
        ["unshare", "-rm", "sh", "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    code = int((out / "code").read_text())
    stderr = (out / "stderr").read_text()
    assert "Traceback" not in stderr
    assert code == errors.IO_ERROR, stderr
    assert stderr.startswith("Error: room fault while t ran: the agent's output could not be saved: ")
    assert "No space left on device" in stderr
    assert ("; t is back in the queue, no round used" in stderr) or (
        "; t is in swarm/queue/, no round used" in stderr
    )
    after = Room(out / "room")
    assert where(after, "t") == ["queue"]
    assert "rounds" not in json.loads((after.state_dir("queue") / "t.json").read_text())
    assert os.listdir(after.state_dir("running")) == []
    assert (out / "verify").read_text().splitlines()[-1] == "0"
    assert events(after.ledger)[-1] in ("claim", "requeue")  # the requeue line, as far as the disk allowed
