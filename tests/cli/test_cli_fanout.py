"""control-room task fanout: a queued task split into child slices, each admitted as `task add`
admits a task; the parent waits for them as their gather step. Refusals write nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from support import ADD_ARGS, entries, error, events, set_gate, task, task_json, unsealed, where

from control_room import errors
from control_room.room.layout import Room

Run = Callable[..., Result]
NOTHING = "; nothing was written"
NOTE = (
    " [gather step of a fan-out into 3 slices, its deps: it runs once they are done (with a repo: "
    "merged), on their joined work]"
)
THREE = ["--slice", "Parser: write the parser", "--slice", "Printer: write the printer",
         "--slice", "Docs page: document the format"]  # fmt: skip


def room_files(root: Path) -> dict[Path, bytes]:
    """Every file of the room but caches and locks (hidden names), and their bytes."""
    files = (p for p in root.rglob("*") if p.is_file())
    return {p: p.read_bytes() for p in files if not any(s.startswith(".") for s in p.relative_to(root).parts)}


@pytest.fixture
def parent(run: Run, inside: Room) -> Room:
    """The room with task `fmt` queued (a probe task, priority 2, waiting for `base`)."""
    assert run("task", "add", "--id", "base", *ADD_ARGS).exit_code == 0
    added = run("task", "add", "--id", "fmt", "--priority", "2", "--dep", "base", "--gate", "gpu",
                "--owns", "src", *ADD_ARGS)  # fmt: skip
    assert added.exit_code == 0, added.stderr
    return inside


def test_fanout_writes_a_child_per_slice_and_the_parent_waits_as_gather_step(run: Run, parent: Room) -> None:
    result = run("task", "fanout", "fmt", *THREE,
                 "--owns-of", "parser=src/parse.py, tests/test_parse.py",
                 "--owns-of", "Docs page=docs/format.md",
                 "--validator-of", "docs page=test -f docs/format.md")  # fmt: skip
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == (
        "fanned out fmt into 3 slices: fmt-parser, fmt-printer, fmt-docs-page (swarm/queue/); fmt waits for "
        "them and then runs as their gather step\n"
    )
    inherited = {
        "falsifier": "no gain over three runs",
        "validator": "python bench.py --check",
        "max_cost_usd": 1.0,
        "wall_clock_s": 600.0,
        "kill_condition": "two rounds without gain",
        "command": "python bench.py",
        "deps": ["base"],
        "gate": ["gpu"],
        "priority": 2,
        "fanout_of": "fmt",
    }
    children = {
        c: unsealed(task_json(parent, "queue", c)) for c in ("fmt-parser", "fmt-printer", "fmt-docs-page")
    }
    assert all(c.pop("created") for c in children.values())
    assert children == {
        "fmt-parser": {"id": "fmt-parser", "objective": "write the parser",
                       "brief": "Parser: write the parser", "owns": ["src/parse.py", "tests/test_parse.py"],
                       **inherited},
        "fmt-printer": {"id": "fmt-printer", "objective": "write the printer",
                        "brief": "Printer: write the printer", **inherited},
        "fmt-docs-page": {"id": "fmt-docs-page", "objective": "document the format",
                          "brief": "Docs page: document the format", "owns": ["docs/format.md"],
                          **inherited, "validator": "test -f docs/format.md"},
    }  # fmt: skip
    assert "route" not in str(children)  # no route: each gets its own task/<id> worktree
    gather = task_json(parent, "queue", "fmt")
    assert gather["deps"] == ["base", "fmt-parser", "fmt-printer", "fmt-docs-page"]
    assert gather["objective"] == "make parse() twice as fast" + NOTE
    assert gather["owns"] == ["src"] and "brief" not in gather and "fanout_of" not in gather
    assert events(parent.ledger)[-4:] == ["task-add", "task-add", "task-add", "fanout"]
    [line] = entries(parent, "fanout")
    assert (line.task, line.outcome, line.detail) == (
        "fmt", "split",
        "3 slices: fmt-parser, fmt-printer, fmt-docs-page; fmt is their gather step")  # fmt: skip
    added = [e.task for e in entries(parent, "task-add")]
    assert added[-3:] == ["fmt-parser", "fmt-printer", "fmt-docs-page"]
    # the parent waits for its slices; the slices wait for what the parent waited for
    listed = run("task", "list", "--state", "queue", "--json")
    assert {t["id"]: t.get("deps") for t in json.loads(listed.stdout)}["fmt"] == gather["deps"]


def test_fanout_json_gives_the_parent_and_the_children(run: Run, parent: Room) -> None:
    result = run("task", "fanout", "fmt", *THREE[:4], "--json")
    assert result.exit_code == 0
    out = json.loads(result.stdout)
    assert out["parent"] == task_json(parent, "queue", "fmt")
    assert [c["id"] for c in out["children"]] == ["fmt-parser", "fmt-printer"]
    assert out["children"][0] == task_json(parent, "queue", "fmt-parser")


REFUSED = [
    (
        ["--slice", "a: Write  the parser", "--slice", "b: write the PARSER "],
        "fanout refused: slices 'a' and 'b' tell their agents the same thing ('write the parser', case and "
        "spacing aside): a fan-out pays only when each arm gets different information; for the same work, "
        "give one task the budget" + NOTHING,
    ),
    (
        [
            "--slice",
            "a: write the parser",
            "--slice",
            "b: write the printer",
            "--slice",
            "c: Write the  parser",
        ],
        "fanout refused: slices 'a' and 'c' tell their agents the same thing ('write the parser', case and "
        "spacing aside): a fan-out pays only when each arm gets different information; for the same work, "
        "give one task the budget" + NOTHING,
    ),
    (
        ["--slice", "all: write the parser and its tests", "--slice", "part: write the parser"],
        "fanout refused: slice 'all' asks for everything slice 'part' does ('write the parser') and more: "
        "two agents would do that part twice; say in 'part' what only it is to do" + NOTHING,
    ),
    (
        ["--slice", "only: write the parser"],
        "fanout refused: 1 slice: a fan-out needs at least 2 (for one, give the task itself the work)"
        + NOTHING,
    ),
    (
        ["--slice", "Parser: write it", "--slice", "parser!: test it"],
        "fanout refused: slices 'Parser' and 'parser!' make one id, fmt-parser: give them distinct titles"
        + NOTHING,
    ),
    (
        ["--slice", "!!: write it", "--slice", "b: test it"],
        "fanout refused: slice '!!' makes no valid id from fmt- and its title (ids are at most 64 of "
        "[a-z0-9._-])" + NOTHING,
    ),
    (
        [*THREE[:4], "--owns-of", "lexer=src/lex.py"],
        "fanout refused: --owns-of names 'lexer', which is no slice's title (the slices: 'Parser', 'Printer')"
        + NOTHING,
    ),
    (
        [*THREE[:4], "--validator-of", "printer=true", "--validator-of", "Printer=false"],
        "fanout refused: --validator-of names 'Printer' twice" + NOTHING,
    ),
    (  # a child goes through task add's admission: the same refusals, in the same words
        [*THREE[:4], "--validator-of", "printer=make && ./check"],
        "fanout refused: slice fmt-printer: task refused: validator `make && ./check` needs a shell (&&), "
        "and commands run without one: write `sh -c 'make && ./check'` to use a shell on purpose" + NOTHING,
    ),
    (
        [*THREE[:4], "--owns-of", "parser=../elsewhere"],
        "fanout refused: slice fmt-parser: task refused: owns path '../elsewhere' must be relative to the "
        "work dir, without '..'" + NOTHING,
    ),
]


@pytest.mark.parametrize(("args", "message"), REFUSED)
def test_fanout_refuses_and_writes_nothing(run: Run, parent: Room, args: list[str], message: str) -> None:
    before = room_files(parent.root)
    error(run("task", "fanout", "fmt", *args), errors.INVALID, message)
    assert room_files(parent.root) == before


def test_fanout_refuses_a_child_id_that_is_taken(run: Run, parent: Room) -> None:
    (parent.state_dir("done") / "fmt-printer.json").write_text(json.dumps(task("fmt-printer")))
    before = room_files(parent.root)
    error(
        run("task", "fanout", "fmt", *THREE),
        errors.INVALID,
        "fanout refused: slice fmt-printer: task refused: task fmt-printer exists already "
        "(swarm/done/fmt-printer.json); ids are unique: give this one a new id" + NOTHING,
    )
    assert room_files(parent.root) == before and where(parent, "fmt-parser") == []


def test_fanout_refuses_a_parent_that_is_not_queued(run: Run, parent: Room) -> None:
    assert run("task", "park", "fmt").exit_code == 0
    before = room_files(parent.root)
    error(
        run("task", "fanout", "fmt", *THREE),
        errors.INVALID,
        "fanout refused: task fmt is in swarm/parked/, not in swarm/queue/: only a queued task can be split"
        + NOTHING,
    )
    error(
        run("task", "fanout", "nope", *THREE),
        errors.NOT_FOUND,
        "fanout refused: no task nope in any swarm folder" + NOTHING,
    )
    assert room_files(parent.root) == before


def test_fanout_refuses_a_parent_that_is_a_gather_step_already(run: Run, parent: Room) -> None:
    assert run("task", "fanout", "fmt", *THREE[:4]).exit_code == 0
    before = room_files(parent.root)
    error(
        run("task", "fanout", "fmt", "--slice", "a: lex", "--slice", "b: emit"),
        errors.INVALID,
        "fanout refused: task fmt is the gather step of a fan-out already (fmt-parser is one of its slices)"
        + NOTHING,
    )
    assert room_files(parent.root) == before
    # a slice may itself be split: it is a queued task like any other
    assert run("task", "fanout", "fmt-parser", "--slice", "a: lex", "--slice", "b: emit").exit_code == 0
    assert task_json(parent, "queue", "fmt-parser")["deps"] == ["base", "fmt-parser-a", "fmt-parser-b"]


def test_fanout_refuses_slices_the_queue_has_no_room_for(run: Run, parent: Room) -> None:
    set_gate(parent, "max_queued", "3")
    before = room_files(parent.root)
    error(
        run("task", "fanout", "fmt", *THREE[:4]),
        errors.QUEUE_FULL,
        "fanout refused: the queue holds 2 tasks and CONTROL.md max_queued is 3: no room for 2 slices"
        + NOTHING,
    )
    assert room_files(parent.root) == before


def test_a_malformed_slice_is_a_usage_error(run: Run, parent: Room) -> None:
    result = run("task", "fanout", "fmt", "--slice", "no colon here", "--slice", "b: x")
    assert result.exit_code == errors.USAGE
    assert result.stderr.endswith(
        "Error: Invalid value for '--slice': 'no colon here' is not 'title: objective' (a title, a colon, "
        "what the slice is to do)\n"
    )
    result = run("task", "fanout", "fmt", *THREE[:4], "--owns-of", "parser")
    assert result.exit_code == errors.USAGE
    assert result.stderr.endswith("Error: Invalid value for '--owns-of': 'parser' is not 'title=path,path'\n")


def test_fanout_through_the_installed_command(cr, room: Room) -> None:  # type: ignore[no-untyped-def]
    assert cr("task", "add", "--id", "fmt", *ADD_ARGS).returncode == 0
    done = cr("task", "fanout", "fmt", *THREE)
    assert (done.returncode, done.stderr) == (0, "")
    assert where(room, "fmt-docs-page") == ["queue"]
    assert events(room.ledger)[-1] == "fanout"
    assert cr("ledger", "verify").returncode == 0
