"""control-room init"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from support import data_lines, events

from control_room import errors
from control_room.ledger.line import HEADER, PREAMBLE, parse
from control_room.room import scaffold
from control_room.room.layout import Room

Run = Callable[..., Result]


def planned() -> list[str]:
    return [i.rel + "/" if i.is_dir else i.rel for i in scaffold.plan()]


def files() -> list[str]:
    return [i.rel for i in scaffold.plan() if not i.is_dir]


def test_init_creates_a_room(run: Run, tmp_path: Path) -> None:
    result = run("init", "myroom")
    root = tmp_path / "myroom"
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == "".join(f"created  {rel}\n" for rel in planned()) + (
        f"room ready: {root}  (next: cat myroom/AGENTS.md)\n"
    )
    assert (root / "control-room" / "LEDGER.md").is_file()


def test_init_defaults_to_the_current_folder(run: Run, tmp_path: Path) -> None:
    result = run("init")
    assert result.exit_code == 0
    assert result.stdout.endswith(f"room ready: {tmp_path}  (next: cat ./AGENTS.md)\n")
    assert (tmp_path / "AGENTS.md").is_file()


def test_init_twice_has_nothing_to_do(run: Run, tmp_path: Path) -> None:
    run("init", "r")
    result = run("init", "r")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == (
        f"nothing to do: {tmp_path / 'r'} is a complete room ({len(files())} files kept)\n"
    )


def test_init_repairs_a_missing_file(run: Run, tmp_path: Path) -> None:
    run("init", "r")
    (tmp_path / "r" / "control-room" / "DIGEST.md").unlink()
    result = run("init", "r")
    assert result.stdout == (
        f"created  control-room/DIGEST.md\nroom ready: {tmp_path / 'r'}  (next: cat r/AGENTS.md)\n"
    )


def test_dry_run_prints_the_plan_and_writes_nothing(run: Run, tmp_path: Path) -> None:
    result = run("init", "--dry-run", "r")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == "".join(f"would create  {rel}\n" for rel in planned())
    assert list(tmp_path.iterdir()) == []


def test_dry_run_on_a_room_lists_what_it_keeps(run: Run, tmp_path: Path) -> None:
    run("init", "r")
    result = run("init", "r", "--dry-run")
    assert result.exit_code == 0
    root = tmp_path / "r"
    assert result.stdout == "".join(f"file {rel} exists already ({root}): kept\n" for rel in files()) + (
        f"nothing to do: {tmp_path / 'r'} is a complete room ({len(files())} files kept)\n"
    )


def test_init_on_a_file_says_what_to_do(run: Run, tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    result = run("init", "afile")
    assert (result.exit_code, result.stdout) == (errors.INVALID, "")
    assert result.stderr == (
        f"Error: {tmp_path / 'afile'} is a file, not a folder: a room is a folder; give init a new "
        "folder (e.g. `control-room init afile-room`) or an existing one\n"
    )
    assert (tmp_path / "afile").read_text() == "x"
    assert sorted(os.listdir(tmp_path)) == ["afile"]


@pytest.mark.parametrize("args", [("afile/room",), ("afile/a/b",), ("--dry-run", "afile/room")])
def test_init_inside_a_file_says_what_to_do(run: Run, tmp_path: Path, args: tuple[str, ...]) -> None:
    (tmp_path / "afile").write_text("x")
    result = run("init", *args)
    assert (result.exit_code, result.stdout) == (errors.INVALID, "")
    assert result.stderr == (
        f"Error: cannot make a room at {tmp_path / args[-1]}: {tmp_path / 'afile'} is a file, not a "
        "folder; give init a path whose parents are folders\n"
    )
    assert sorted(os.listdir(tmp_path)) == ["afile"]


def test_init_on_a_dangling_link_says_what_to_do(run: Run, tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to(tmp_path / "nowhere")
    result = run("init", "link")
    assert (result.exit_code, result.stdout) == (errors.INVALID, "")
    assert result.stderr == (
        f"Error: {tmp_path / 'link'} is a symbolic link to a missing target, not a folder: a room is "
        "a folder; give init a new folder (e.g. `control-room init link-room`) or an existing one\n"
    )


def test_a_file_where_a_folder_belongs_is_refused_before_anything_is_made(run: Run, tmp_path: Path) -> None:
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "swarm").write_text("mine\n")
    result = run("init", "r")
    assert (result.exit_code, result.stdout) == (errors.INVALID, "")
    assert result.stderr == (
        f"Error: {tmp_path / 'r' / 'swarm'} is a file where the room needs a folder: move it away, "
        "then run `control-room init` again\n"
    )
    assert sorted(os.listdir(tmp_path / "r")) == ["swarm"]
    assert (tmp_path / "r" / "swarm").read_text() == "mine\n"


# a ledger that lost its header ----------------------------------------------------------------


def test_init_puts_back_a_lost_ledger_header_and_logs_it(run: Run, tmp_path: Path) -> None:
    assert run("init", "r").exit_code == 0
    room = Room(tmp_path / "r")
    assert run("route", "add", "faster", "--title", "Make it faster", "--room", str(room.root)).exit_code == 0
    whole = room.ledger.read_text()
    room.ledger.write_text(whole.replace(HEADER + "\n", ""))
    dry = run("init", "--dry-run", "r")
    assert dry.exit_code == 0
    assert dry.stdout.startswith(
        "would restore  control-room/LEDGER.md (its header)\nfile AGENTS.md exists already ("
    )
    assert room.ledger.read_text() == whole.replace(HEADER + "\n", "")  # a dry run writes nothing
    result = run("init", "r")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == (
        "restored  control-room/LEDGER.md (its header, above 2 lines)\n"
        f"room repaired: {room.root}  (next: control-room status)\n"
    )
    assert room.ledger.read_text().startswith(whole)  # every line kept, in its place
    assert events(room.ledger) == ["init", "route-add", "header-restored"]
    last = parse(data_lines(room.ledger)[-1])
    assert last is not None and (last.outcome, last.detail) == (
        "restored", "control-room/LEDGER.md had lost its table header: put back above its 2 lines",
    )  # fmt: skip
    assert run("ledger", "verify", "--room", str(room.root)).stdout == (
        "ledger ok: 3 lines from 1 writer, every chain intact\n"
    )
    assert "warning" not in run("status", "--room", str(room.root)).stdout
    assert run("init", "r").stdout.startswith("nothing to do: ")


def test_init_on_an_empty_ledger_writes_its_preamble_and_logs_it(run: Run, tmp_path: Path) -> None:
    assert run("init", "r").exit_code == 0
    room = Room(tmp_path / "r")
    room.ledger.write_bytes(b"")
    result = run("init", "r")
    assert result.stdout.startswith("restored  control-room/LEDGER.md (its header, above 0 lines)\n")
    assert room.ledger.read_text().startswith(PREAMBLE)
    assert events(room.ledger) == ["header-restored"]
