"""control-room lever / branch: add, set, list (and list as the default)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from click.testing import Result
from support import error, events, no_room_error, ok

from control_room.cli.intel import branch, lever
from control_room.knowledge.intelligence import add
from control_room.room.layout import Room

Run = Callable[..., Result]

HEAD = "# Levers\n\nProse a person wrote.\n\n| id | state | title | because |\n|---|---|---|---|\n"
CACHE = "| cache-input | untested | Cache the parsed input | parsing is 30% of wall time |\n"
SIMD = "| simd | pending | Port the hot loop to SIMD | task simd-1 is testing it |\n"
NOTE = "\nA hand-written note below the table.\n"
PAGE = HEAD + CACHE + SIMD + NOTE  # the rows are on lines 7 and 8


def levers(room: Room) -> Path:
    return room.root / "intelligence" / "levers.md"


# list ---------------------------------------------------------------------------------------


def test_list_is_the_default_and_shows_the_example_row(run: Run, inside: Room) -> None:
    expected = (
        "untested  lever-example  Cache the parsed input between benchmark runs  (because: Example "
        "row: profiling suggests parsing takes about 30% of wall time; replace it with your first "
        "lever)\n"
    )
    ok(run("lever"), expected)
    ok(run("lever", "list"), expected)


def test_list_state_and_json(run: Run, inside: Room) -> None:
    levers(inside).write_text(PAGE)
    ok(run("lever", "list"), (
        "untested  cache-input  Cache the parsed input  (because: parsing is 30% of wall time)\n"
        "pending   simd         Port the hot loop to SIMD  (because: task simd-1 is testing it)\n"
    ))  # fmt: skip
    ok(run("lever", "list", "--state", "pending"),
       "pending   simd  Port the hot loop to SIMD  (because: task simd-1 is testing it)\n")  # fmt: skip
    ok(run("lever", "list", "--state", "killed"), "no killed levers\n")
    result = run("lever", "list", "--json")
    assert (result.exit_code, result.stderr) == (0, "")
    assert json.loads(result.stdout) == [
        {"id": "cache-input", "state": "untested", "title": "Cache the parsed input",
         "because": "parsing is 30% of wall time", "line": 7},
        {"id": "simd", "state": "pending", "title": "Port the hot loop to SIMD",
         "because": "task simd-1 is testing it", "line": 8},
    ]  # fmt: skip
    ok(run("lever", "list", "--state", "killed", "--json"), "[]\n")


def test_list_refuses_an_unknown_state_filter(run: Run, inside: Room) -> None:
    result = run("lever", "list", "--state", "maybe")
    assert (result.exit_code, result.stdout) == (2, "")
    assert (
        "Invalid value for '--state': 'maybe' is not one of 'untested', 'pending', 'killed'." in result.stderr
    )


def test_list_an_empty_page(run: Run, inside: Room) -> None:
    (inside.root / "intelligence" / "branches.md").write_text("# Branches\n")
    ok(run("branch"), "no branches\n")


# add ----------------------------------------------------------------------------------------


def test_add_appends_a_row_and_logs_it(run: Run, inside: Room) -> None:
    levers(inside).write_text(PAGE)
    ok(run("lever", "add", "mmap", "--title", "Memory-map the input", "--because", "saves a copy"),
       "added lever mmap (untested)  intelligence/levers.md:9\n")  # fmt: skip
    assert (
        levers(inside).read_text()
        == HEAD + CACHE + SIMD + "| mmap | untested | Memory-map the input | saves a copy |\n" + NOTE
    )
    assert events(inside.ledger) == ["init", "lever-add"]


def test_add_refuses_a_duplicate_a_bad_id_and_no_title(run: Run, inside: Room) -> None:
    levers(inside).write_text(PAGE)
    error(run("lever", "add", "simd", "--title", "again"), 4,
          "lever simd exists already (intelligence/levers.md:8); its state is pending: "
          "change it with `control-room lever set simd STATE`")  # fmt: skip
    error(run("lever", "add", "Not_An_Id", "--title", "t"), 4,
          "lever id 'Not_An_Id' must match [a-z0-9][a-z0-9._-]{0,63}")  # fmt: skip
    result = run("lever", "add", "mmap")
    assert (result.exit_code, result.stdout) == (2, "")
    assert "Missing option '--title'." in result.stderr
    assert levers(inside).read_text() == PAGE
    assert events(inside.ledger) == ["init"]


# set ----------------------------------------------------------------------------------------


def test_set_rewrites_one_row_and_keeps_the_rest_of_the_page(run: Run, inside: Room) -> None:
    levers(inside).write_text(PAGE)
    ok(run("lever", "set", "simd", "killed", "--because", "no gain over 5 runs (task simd-1)"),
       "lever simd: pending -> killed  intelligence/levers.md:8\n")  # fmt: skip
    ok(run("lever", "set", "cache-input", "pending"),
       "lever cache-input: untested -> pending  intelligence/levers.md:7\n")  # fmt: skip
    ok(
        run("lever", "set", "cache-input", "pending"),
        "lever cache-input: still pending  intelligence/levers.md:7\n",
    )
    assert levers(inside).read_text() == (
        HEAD
        + CACHE.replace("untested", "pending")
        + "| simd | killed | Port the hot loop to SIMD | no gain over 5 runs (task simd-1) |\n"
        + NOTE
    )
    assert events(inside.ledger) == ["init", "lever-set", "lever-set", "lever-set"]
    ok(
        run("lever", "list", "--state", "killed"),
        "killed    simd  Port the hot loop to SIMD  (because: no gain over 5 runs (task simd-1))\n",
    )


def test_a_kill_needs_a_reason(run: Run, inside: Room) -> None:
    levers(inside).write_text(PAGE)
    error(run("lever", "set", "simd", "killed"), 4,
          "a kill needs a reason: give --because (what ruled simd out, with the task id or "
          "tombstone that shows it)")  # fmt: skip
    assert levers(inside).read_text() == PAGE
    assert events(inside.ledger) == ["init"]


def test_set_refuses_an_unknown_id_or_state(run: Run, inside: Room) -> None:
    levers(inside).write_text(PAGE)
    error(run("lever", "set", "nope", "pending"), 7, "no lever 'nope' in intelligence/levers.md")
    error(run("lever", "set", "simd", "maybe"), 4, "state 'maybe' is not one of untested, pending, killed")
    assert levers(inside).read_text() == PAGE
    assert events(inside.ledger) == ["init"]


# a hand edit that breaks a row --------------------------------------------------------------


def test_a_broken_row_is_named_while_other_rows_stay_editable(run: Run, inside: Room) -> None:
    broken = HEAD + CACHE + SIMD + "| typo | maybe | Typed by hand | b |\n" + NOTE
    levers(inside).write_text(broken)
    message = "intelligence/levers.md:9: state 'maybe' is not one of untested, pending, killed"
    error(run("lever", "list"), 4, message)
    error(run("lever"), 4, message)
    ok(run("lever", "set", "simd", "untested"), "lever simd: pending -> untested  intelligence/levers.md:8\n")
    ok(run("lever", "add", "mmap", "--title", "Memory-map the input"),
       "added lever mmap (untested)  intelligence/levers.md:10\n")  # fmt: skip
    assert levers(inside).read_text() == (
        HEAD
        + CACHE
        + SIMD.replace("pending", "untested")
        + "| typo | maybe | Typed by hand | b |\n"
        + "| mmap | untested | Memory-map the input |  |\n"
        + NOTE
    )
    error(run("lever", "list"), 4, message)
    ok(run("lever", "set", "typo", "pending"), "lever typo: maybe -> pending  intelligence/levers.md:9\n")
    result = run("lever", "list", "--state", "pending")
    ok(result, "pending   typo  Typed by hand  (because: b)\n")
    assert events(inside.ledger) == ["init", "lever-set", "lever-add", "lever-set"]


# branch, --room, outside a room -------------------------------------------------------------


def test_branch_works_like_lever_on_its_own_page(run: Run, room: Room) -> None:
    where = ("--room", str(room.root))
    ok(run("branch", "add", "beam-8", "--title", "Beam search of width 8", *where),
       "added branch beam-8 (untested)  intelligence/branches.md:15\n")  # fmt: skip
    ok(run("branch", "set", "beam-8", "killed", "--because", "worse than greedy (task beam-1)", *where),
       "branch beam-8: untested -> killed  intelligence/branches.md:15\n")  # fmt: skip
    ok(run("--room", str(room.root), "branch", "list", "--state", "killed"),
       "killed    beam-8  Beam search of width 8  (because: worse than greedy (task beam-1))\n")  # fmt: skip
    assert (
        (room.root / "intelligence" / "branches.md")
        .read_text()
        .endswith("| beam-8 | killed | Beam search of width 8 | worse than greedy (task beam-1) |\n")
    )
    assert events(room.ledger) == ["init", "branch-add", "branch-set"]
    listed = json.loads(run("lever", "list", "--json", *where).stdout)
    assert [r["id"] for r in listed] == ["lever-example"]  # the levers page was not touched


# the edge: a command that changed the room refreshes CURRENT_CONTEXT.md -----------------------


def test_add_and_set_refresh_the_current_context_at_the_edge(room: Room, run: Callable[..., Any]) -> None:
    add(room, "lever", "mmap", "Memory-map the input")
    assert "mmap" not in room.context.read_text()  # a model change never refreshes a view itself
    assert run("--room", str(room.root), "lever", "add", "mmio", "--title", "Map the output").exit_code == 0
    assert "lever-add  untested  mmio: added as untested" in room.context.read_text()
    assert run("--room", str(room.root), "lever", "set", "mmap", "pending").exit_code == 0
    assert "lever-set  pending  mmap: untested -> pending" in room.context.read_text()


def test_outside_a_room(run: Run, tmp_path: Path) -> None:
    for args in (("lever",), ("branch", "add", "x", "--title", "t"), ("lever", "set", "x", "pending")):
        error(run(*args), 3, no_room_error(tmp_path)[len("Error: ") : -1])


def test_the_two_groups_are_identical_but_for_their_names() -> None:
    def shape(group: click.Group) -> list[tuple[str, list[tuple[str, ...]]]]:
        return [(name, [tuple(p.opts) for p in cmd.params])
                for name, cmd in sorted(group.commands.items())]  # fmt: skip

    assert shape(lever) == shape(branch)
    assert sorted(lever.commands) == ["add", "list", "set"]
    assert (lever.name, branch.name) == ("lever", "branch")
