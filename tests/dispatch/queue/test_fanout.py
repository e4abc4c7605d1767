"""dispatch.queue.fanout: slices, the new-information test, children, the gather step, refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import entries, snapshot, task, task_json, unsealed

from control_room.dispatch.queue import fanout
from control_room.dispatch.queue.fanout import Slice
from control_room.errors import InvalidError, NotFoundError, QueueFullError
from control_room.room import settings, swarm
from control_room.room.layout import Room

NOTHING = "; nothing was written"
TWO = [Slice("Parser", "write the parser"), Slice("Printer", "write the printer")]


def queued(room: Room, tid: str, **fields: object) -> dict[str, object]:
    t = {**task(tid, **fields), "created": "2024-01-01T00:00:00Z"}
    swarm.task_file(room, "queue", tid).write_text(swarm.dumps(t))
    return t


def room_files(root: Path) -> dict[Path, bytes]:
    """Every file of the room but caches and locks (hidden names), and their bytes."""
    return {
        p: b
        for p, b in snapshot(root).items()
        if not any(s.startswith(".") for s in p.relative_to(root).parts)
    }


def test_parse_slice_reads_title_colon_objective() -> None:
    assert fanout.parse_slice("  Docs   page :  document the format: all of it ") == Slice(
        "Docs page", "document the format: all of it"
    )
    assert Slice("Docs page", "document it").brief == "Docs page: document it"


@pytest.mark.parametrize("text", ["no colon", ": no title", "no objective:  "])
def test_parse_slice_refuses_what_is_not_a_slice(text: str) -> None:
    with pytest.raises(ValueError) as err:
        fanout.parse_slice(text)
    assert str(err.value) == f"{text!r} is not 'title: objective' (a title, a colon, what the slice is to do)"


def test_parse_of_reads_title_equals_value() -> None:
    assert fanout.parse_of(" Docs  page = docs/a.md, docs/b.md ", "path,path") == (
        "Docs page",
        "docs/a.md, docs/b.md",
    )
    for text in ("parser", "=x", "parser= "):
        with pytest.raises(ValueError) as err:
            fanout.parse_of(text, "command")
        assert str(err.value) == f"{text!r} is not 'title=command'"


def test_slug_and_words() -> None:
    assert fanout.slug("Docs page (v2)!") == "docs-page-v2"
    assert fanout.slug("!!") == ""
    assert fanout.words("  Write\tthe  PARSER\n") == ["write", "the", "parser"]


def test_with_extras_gives_slices_their_paths_and_validators_matched_by_slug() -> None:
    given = [Slice("Parser", "write the parser", ("src",)), Slice("Docs page", "document it")]
    out = fanout.with_extras(
        given, [("docs PAGE", "docs/a.md, ,docs/b.md")], [("parser", "test -f src/p.py")]
    )
    assert out == [
        Slice("Parser", "write the parser", ("src",), "test -f src/p.py"),  # its own owns, as it was
        Slice("Docs page", "document it", ("docs/a.md", "docs/b.md"), None),
    ]


def test_with_extras_refuses_a_title_of_no_slice_or_given_twice() -> None:
    with pytest.raises(InvalidError) as err:
        fanout.with_extras(TWO, [], [("lexer", "true")])
    assert str(err.value) == (
        "fanout refused: --validator-of names 'lexer', which is no slice's title (the slices: 'Parser', "
        "'Printer')" + NOTHING
    )
    with pytest.raises(InvalidError) as err:
        fanout.with_extras(TWO, [("Parser", "a"), ("parser", "b")], [])
    assert str(err.value) == "fanout refused: --owns-of names 'parser' twice" + NOTHING


def test_same_information_passes_slices_that_say_different_things() -> None:
    assert fanout.same_information(TWO) is None
    # a shared start is fine as long as neither asks for all the other does
    assert fanout.same_information([Slice("a", "write the parser"), Slice("b", "write the printer")]) is None
    assert fanout.same_information([Slice("a", "x"), Slice("b", "y"), Slice("c", "z")]) is None


def test_same_information_names_identical_objectives_whatever_the_titles() -> None:
    why = fanout.same_information(
        [Slice("one", "Write the parser"), Slice("two", "x"), Slice("three", "write  THE parser")]
    )
    assert why == (
        "slices 'one' and 'three' tell their agents the same thing ('write the parser', case and spacing "
        "aside): a fan-out pays only when each arm gets different information; for the same work, give one "
        "task the budget"
    )


@pytest.mark.parametrize("order", [0, 1])
def test_same_information_names_a_slice_that_asks_for_all_another_does(order: int) -> None:
    pair = [Slice("part", "write the parser"), Slice("all", "Write the parser and its tests")]
    why = fanout.same_information(pair if order == 0 else pair[::-1])
    assert why == (
        "slice 'all' asks for everything slice 'part' does ('write the parser') and more: two agents would "
        "do that part twice; say in 'part' what only it is to do"
    )


def test_gather_note_counts_the_slices() -> None:
    assert fanout.gather_note(2) == (
        " [gather step of a fan-out into 2 slices, its deps: it runs once they are done (with a repo: "
        "merged), on their joined work]"
    )
    assert "into 1 slice," in fanout.gather_note(1)


def test_fanout_writes_the_children_and_makes_the_parent_their_gather_step(room: Room) -> None:
    queued(room, "base")
    parent = queued(room, "fmt", route="r1", deps=["base"], owns=["src"], priority=2, brief="the whole job",
                    model="big", review=["security"])  # fmt: skip
    slices = [
        Slice("Parser", "write the parser", ("src/p.py",)),
        Slice("Docs", "document it", (), "test -f d.md"),
    ]
    done = fanout.fanout(room, settings.load(room), "fmt", slices)
    inherited = {k: parent[k] for k in fanout.INHERITED if k in parent}
    assert set(inherited) == {"falsifier", "validator", "max_cost_usd", "wall_clock_s", "kill_condition",
                              "model", "command", "priority", "deps"}  # fmt: skip
    children = [{k: v for k, v in unsealed(c).items() if k != "created"} for c in done.children]
    assert children == [
        {**inherited, "id": "fmt-parser", "objective": "write the parser",
         "brief": "Parser: write the parser", "fanout_of": "fmt", "owns": ["src/p.py"]},
        {**inherited, "id": "fmt-docs", "objective": "document it", "brief": "Docs: document it",
         "fanout_of": "fmt", "validator": "test -f d.md"},
    ]  # fmt: skip  # no route, no review, no brief of the parent's
    assert [task_json(room, "queue", c["id"]) for c in done.children] == done.children
    assert done.parent == task_json(room, "queue", "fmt")
    assert unsealed(done.parent) == {**parent, "deps": ["base", "fmt-parser", "fmt-docs"],
                           "objective": parent["objective"] + fanout.gather_note(2)}  # fmt: skip
    assert [(e.task, e.detail) for e in entries(room, "task-add")] == [
        ("fmt-parser", "write the parser"),
        ("fmt-docs", "document it"),
    ]
    [line] = entries(room, "fanout")
    assert (line.task, line.route, line.outcome, line.detail) == (
        "fmt", "r1", "split", "2 slices: fmt-parser, fmt-docs; fmt is their gather step")  # fmt: skip


def test_a_child_id_is_cut_to_64_characters(room: Room) -> None:
    pid = "p" * 60
    queued(room, pid)
    done = fanout.fanout(room, settings.load(room), pid, [Slice("ab-cd", "one"), Slice("xyz", "two")])
    assert [c["id"] for c in done.children] == [f"{pid}-ab", f"{pid}-xyz"]  # "ab-cd" cut to "ab-", then "ab"


def test_fewer_than_two_slices_are_refused_before_the_room_is_read(room: Room) -> None:
    with pytest.raises(InvalidError) as err:
        fanout.fanout(room, settings.load(room), "nope", TWO[:1])
    assert str(err.value) == (
        "fanout refused: 1 slice: a fan-out needs at least 2 (for one, give the task itself the work)"
        + NOTHING
    )
    with pytest.raises(InvalidError) as err:
        fanout.fanout(room, settings.load(room), "nope", [Slice("a", "same"), Slice("b", "Same")])
    assert str(err.value).startswith("fanout refused: slices 'a' and 'b' tell their agents the same thing")


def test_a_parent_in_no_folder_is_not_found(room: Room) -> None:
    with pytest.raises(NotFoundError) as err:
        fanout.fanout(room, settings.load(room), "nope", TWO)
    assert str(err.value) == "fanout refused: no task nope in any swarm folder" + NOTHING


def test_a_broken_parent_file_is_refused_naming_its_problem(room: Room) -> None:
    swarm.task_file(room, "queue", "fmt").write_text(json.dumps({"id": "fmt", "objective": "o"}))
    before = room_files(room.root)
    with pytest.raises(InvalidError) as err:
        fanout.fanout(room, settings.load(room), "fmt", TWO)
    assert str(err.value) == (
        "fanout refused: swarm/queue/fmt.json is not a valid task (missing required fields: falsifier, "
        "validator, max_cost_usd, wall_clock_s, kill_condition)" + NOTHING
    )
    assert room_files(room.root) == before


def test_a_slice_admission_refuses_writes_no_slice(room: Room) -> None:
    queued(room, "fmt", max_cost_usd=5)
    before = room_files(room.root)
    with pytest.raises(InvalidError) as err:
        fanout.fanout(room, settings.load(room), "fmt", TWO)
    assert str(err.value) == (
        "fanout refused: slice fmt-parser: task refused: max_cost_usd 5 is above CONTROL.md "
        "max_task_cost_usd 2.0" + NOTHING
    )  # a slice is admitted as `task add` admits a task: the parent's bounds, checked again
    assert room_files(room.root) == before


def test_slices_the_queue_has_no_room_for_are_refused(room: Room) -> None:
    queued(room, "fmt")
    s = settings.load(room).replace(max_queued=2)
    before = room_files(room.root)
    with pytest.raises(QueueFullError) as err:
        fanout.fanout(room, s, "fmt", TWO)
    assert str(err.value) == (
        "fanout refused: the queue holds 1 task and CONTROL.md max_queued is 2: no room for 2 slices"
        + NOTHING
    )
    assert room_files(room.root) == before
    assert len(fanout.fanout(room, s.replace(max_queued=3), "fmt", TWO).children) == 2
