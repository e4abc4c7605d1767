"""control-room init"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from click.testing import Result

from control_room.room import scaffold

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


def test_init_on_a_file_is_a_usage_error(run: Run, tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    result = run("init", "afile")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == (
        "Usage: control-room init [OPTIONS] [DIRECTORY]\n"
        "Try 'control-room init --help' for help.\n\n"
        "Error: Invalid value for '[DIRECTORY]': Directory 'afile' is a file.\n"
    )
    assert (tmp_path / "afile").read_text() == "x"
