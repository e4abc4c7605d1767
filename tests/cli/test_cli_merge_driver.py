"""control_room.cli.merge_driver: `merge-driver routes|view` write the merge into OURS; their refusals."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from click.testing import Result
from support import ok

from control_room import errors
from control_room.store.markdown import AUTO_BEGIN, AUTO_END

Run = Callable[..., Result]

# a view (CURRENT_CONTEXT.md), as in tests/views/test_view_merge.py
FREE = "# CURRENT CONTEXT\n\n## Objective\n\nBeat 12 ms.\n\n## Now\n\nRoutes r1 and r2.\n\n## Rules of thumb\n\nNone yet.\n\n"  # noqa: E501


def context(auto: str, free: str = FREE, after: str = "") -> str:
    return f"{free}{AUTO_BEGIN}\n{auto}\n{AUTO_END}\n{after}"


# a board (ROUTES.md), as in tests/knowledge/test_routes_merge.py
TOP = "# ROUTES\n\nThe board.\n\n"
HEAD = "| route | verdict | title | attempts | spend_usd | last_result | falsifier |\n|---|---|---|---|---|---|---|\n"  # noqa: E501
R1 = "| r1 | alive | cache the parse | 2 | 0.5 | pass t2 2026-11-30 | no gain |\n"
R2 = "| r2 | untested | vectorise | 0 | 0 |  | slower |\n"
BOTTOM = "\nNotes below the table.\n"


def board(*rows: str, top: str = TOP, bottom: str = BOTTOM) -> str:
    return top + HEAD + "".join(rows) + bottom


def sides(tmp_path: Path, base: str, ours: str, theirs: str) -> tuple[Path, Path, Path]:
    paths = tmp_path / "base", tmp_path / "ours", tmp_path / "theirs"
    for path, text in zip(paths, (base, ours, theirs), strict=True):
        path.write_text(text)
    return paths


def usage_error(done: Result, usage: str, message: str) -> None:
    command = usage.split(" [OPTIONS]")[0]
    assert (done.exit_code, done.stdout) == (errors.USAGE, "")
    assert done.stderr == f"Usage: {usage}\nTry '{command} --help' for help.\n\nError: {message}\n"


# routes ------------------------------------------------------------------------------------------


def test_the_routes_command_writes_the_merge_into_ours(run: Run, tmp_path: Path) -> None:
    base, ours, theirs = tmp_path / "base", tmp_path / "ours", tmp_path / "theirs"
    base.write_text(board(R1, R2))
    ours.write_text(board(R1.replace("| alive |", "| killed |"), R2))
    theirs.write_text(board(R1, "| r3 | untested | new | 0 | 0 |  | x |\n"))
    done = run("merge-driver", "routes", str(base), str(ours), str(theirs))
    assert (done.exit_code, done.stdout, done.stderr) == (0, "", "")
    assert ours.read_text() == board(
        R1.replace("| alive |", "| killed |"), "| r3 | untested | new | 0 | 0 |  | x |\n"
    )
    missing = run("merge-driver", "routes", str(tmp_path / "gone"), str(ours), str(theirs))
    assert (missing.exit_code, missing.stderr) == (
        4,
        f"Error: {tmp_path / 'gone'}: cannot read it: No such file or directory\n",
    )


def test_routes_leaves_ours_alone_when_it_is_the_merge(run: Run, tmp_path: Path) -> None:
    base, ours, theirs = sides(tmp_path, board(R1), board(R1, R2), board(R1))
    inode = ours.stat().st_ino
    ok(run("merge-driver", "routes", str(base), str(ours), str(theirs)), "")
    assert (ours.read_text(), ours.stat().st_ino) == (board(R1, R2), inode)


def test_routes_keeps_a_board_it_cannot_read_as_ours_and_exits_0(run: Run, tmp_path: Path) -> None:
    broken = "# ROUTES\n\n| id | x |\n|---|---|\n| r1 | y |\n"
    base, ours, theirs = sides(tmp_path, board(R1), broken, board(R1, R2))
    ok(run("merge-driver", "routes", str(base), str(ours), str(theirs)), "")
    assert ours.read_text() == broken


def test_a_folder_for_a_side_is_a_usage_error_and_writes_nothing(run: Run, tmp_path: Path) -> None:
    base, ours, theirs = sides(tmp_path, board(R1), board(R1, R2), board(R1))
    theirs.unlink()
    theirs.mkdir()  # a folder: click's own check
    usage_error(run("merge-driver", "routes", str(base), str(ours), str(theirs)),
                "control-room merge-driver routes [OPTIONS] BASE OURS THEIRS",
                f"Invalid value for 'THEIRS': File '{theirs}' is a directory.")  # fmt: skip
    assert ours.read_text() == board(R1, R2)


def test_routes_takes_exactly_three_files(run: Run, tmp_path: Path) -> None:
    base, ours, theirs = sides(tmp_path, board(R1), board(R1), board(R1))
    usage = "control-room merge-driver routes [OPTIONS] BASE OURS THEIRS"
    usage_error(run("merge-driver", "routes", str(base), str(ours)), usage, "Missing argument 'THEIRS'.")
    extra = run("merge-driver", "routes", str(base), str(ours), str(theirs), "ROUTES.md")
    usage_error(extra, usage, "Got unexpected extra argument (ROUTES.md)")


# view --------------------------------------------------------------------------------------------


def test_the_view_command_writes_the_merge_into_ours(run: Run, tmp_path: Path) -> None:
    base, ours, theirs = tmp_path / "base", tmp_path / "ours", tmp_path / "theirs"
    base.write_text(context("b"))
    ours.write_text(context("o"))
    theirs.write_text(context("t", FREE + "Theirs' note.\n"))
    done = run("merge-driver", "view", str(base), str(ours), str(theirs), "control-room/CURRENT_CONTEXT.md")
    assert (done.exit_code, done.stdout, done.stderr) == (0, "", "")
    assert ours.read_text() == context("o", FREE + "Theirs' note.\n")
    digest = tmp_path / "digest"
    digest.write_text("# DIGEST\nours\n")
    done = run("merge-driver", "view", str(base), str(digest), str(theirs), "control-room/DIGEST.md")
    assert (done.exit_code, digest.read_text()) == (0, "# DIGEST\nours\n")


def test_view_keeps_all_of_ours_where_both_sides_edits_collide(run: Run, tmp_path: Path) -> None:
    mine = context("o", FREE.replace("Beat 12 ms.", "Beat 11 ms."))
    base, ours, theirs = sides(
        tmp_path, context("b"), mine, context("t", FREE.replace("Beat 12 ms.", "Beat 10 ms."))
    )
    ok(run("merge-driver", "view", str(base), str(ours), str(theirs), "control-room/CURRENT_CONTEXT.md"), "")
    assert ours.read_text() == mine


def test_view_without_a_path_takes_a_file_without_an_auto_block_as_generated(
    run: Run, tmp_path: Path
) -> None:
    base, ours, theirs = sides(tmp_path, "# DIGEST\nold\n", "# DIGEST\nours\n", "# DIGEST\ntheirs\n")
    ok(run("merge-driver", "view", str(base), str(ours), str(theirs)), "")
    assert ours.read_text() == "# DIGEST\nours\n"
    # with the auto block, the people's part is merged, path or not
    base, ours, theirs = sides(tmp_path, context("b"), context("o"), context("t", FREE + "Their note.\n"))
    ok(run("merge-driver", "view", str(base), str(ours), str(theirs)), "")
    assert ours.read_text() == context("o", FREE + "Their note.\n")


def test_view_refuses_a_side_it_cannot_read(run: Run, tmp_path: Path) -> None:
    base, ours, theirs = sides(tmp_path, context("b"), context("o"), context("t"))
    base.unlink()
    done = run("merge-driver", "view", str(base), str(ours), str(theirs), "control-room/CURRENT_CONTEXT.md")
    assert (done.exit_code, done.stdout, done.stderr) == (
        errors.INVALID, "", f"Error: {base}: cannot read it: No such file or directory\n")  # fmt: skip
    assert ours.read_text() == context("o")
    usage = "control-room merge-driver view [OPTIONS] BASE OURS THEIRS [PATH]"
    usage_error(run("merge-driver", "view", str(base), str(ours)), usage, "Missing argument 'THEIRS'.")
