"""dispatch.queue.deps: which deps can never get done, and dependency cycles."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support import data_lines, events, task

from control_room.dispatch.queue import admission, deps, index, listing
from control_room.errors import InvalidError
from control_room.ledger.line import parse
from control_room.room import settings, swarm
from control_room.room.layout import Room


def test_a_dep_that_can_still_get_done_is_no_refusal() -> None:
    for state in ("queue", "running", "done", "parked", "cancelled"):
        assert deps.refusal("t0", state) is None


def test_a_dep_in_rejected_or_nowhere_is_refused() -> None:
    assert (
        deps.refusal("t0", "rejected")
        == "deps names t0, which is in swarm/rejected/: it could never be ready"
    )
    assert deps.refusal("t0", None) == (
        "deps names t0, which is not a task in any swarm folder: it could never be ready"
    )


def named(found: dict[str, tuple[list[str], int]]) -> dict[str, str]:
    """Each task's cycle as its refusal names it, without the common words."""
    return {t: deps.cycle_refusal(*c).removeprefix("deps form a cycle").removesuffix(
        " (no task in it could ever be ready)") for t, c in found.items()}  # fmt: skip


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"a": ["b"], "b": []}, {}),
        ({"a": ["b"], "b": ["a"]}, {"a": ": a -> b -> a", "b": ": b -> a -> b"}),
        ({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]},
         {"a": ": a -> b -> c -> a", "b": ": b -> c -> a -> b", "c": ": c -> a -> b -> c"}),
        # two cycles through b: c is on the second one
        ({"a": ["b"], "b": ["a", "c"], "c": ["b"]},
         {"a": ": a -> b -> a", "b": ": b -> a -> b", "c": ": c -> b -> c"}),
        # the shortest cycle through the first member, though a longer one exists
        ({"a": ["x", "b"], "x": ["y"], "y": ["a"], "b": ["a"]},
         {"a": ": a -> b -> a", "b": ": b -> a -> b", "x": ": x -> y -> a -> x", "y": ": y -> a -> x -> y"}),
        ({"a": ["outside"], "outside": []}, {}),
        ({"a": ["gone"]}, {}),  # an id outside the mapping is no edge
        ({"a": ["a"]}, {}),  # a task naming itself is refused on its own, not here
        ({"a": ["a", "b"], "b": ["a"]}, {"a": ": a -> b -> a", "b": ": b -> a -> b"}),
    ],
    ids=["chain", "pair", "three-and-a-tail", "figure-eight", "shortest", "no-cycle", "unknown-dep",
         "self", "self-and-pair"],
)  # fmt: skip
def test_cycles(graph: dict[str, list[str]], expected: dict[str, str]) -> None:
    assert named(deps.cycles(graph)) == expected


def test_a_long_cycle_is_named_shortly() -> None:
    ring = {f"t{i}": [f"t{(i + 1) % 26}"] for i in range(26)}
    assert named(deps.cycles(ring))["t5"] == " of 26 tasks: t5 -> t6 -> t7 -> t8 -> ... -> t3 -> t4 -> t5"


def test_cycles_on_a_ring_of_20000_tasks_are_found_at_once() -> None:
    """Linear: one search for the whole ring (each member's cycle is the ring, named from it)."""
    n = 20_000
    ring = {f"t{i}": [f"t{(i + 1) % n}"] for i in range(n)}
    found = deps.cycles(ring)
    assert len(found) == n and len({id(loop) for loop, _ in found.values()}) == 1
    assert named({"t9": found["t9"]}) == {
        "t9": f" of {n} tasks: t9 -> t10 -> t11 -> t12 -> ... -> t7 -> t8 -> t9"
    }


def test_cycle_refusal_names_the_cycle() -> None:
    assert (
        deps.cycle_refusal(["t1", "t2"])
        == "deps form a cycle: t1 -> t2 -> t1 (no task in it could ever be ready)"
    )
    assert (
        deps.cycle_refusal(["t1", "t2"], 1)
        == "deps form a cycle: t2 -> t1 -> t2 (no task in it could ever be ready)"
    )


def _put(room: Room, state: str, task_id: str, **fields: object) -> None:
    (room.state_dir(state) / f"{task_id}.json").write_text(json.dumps(task(task_id, **fields)))


def test_cycle_through_follows_deps_of_tasks_not_done(room: Room) -> None:
    _put(room, "queue", "t2", deps=["t3"])
    _put(room, "parked", "t3", deps=["t1"])  # t1 is gone (deleted by hand): a new t1 closes the loop
    assert deps.cycle_through(room, task("t1", deps=["t2"])) == ["t1", "t2", "t3"]


def test_cycle_through_stops_at_a_done_task(room: Room) -> None:
    _put(room, "done", "t2", deps=["t1"])  # done: nothing waits any more
    assert deps.cycle_through(room, task("t1", deps=["t2"])) is None


# at `task add` (admission, Stage.NEW) ---------------------------------------------------------


def refused(room: Room, **fields: object) -> str:
    with pytest.raises(InvalidError) as err:
        admission.add(room, settings.load(room), task("t1", **fields))
    assert not (room.state_dir("queue") / "t1.json").exists()
    return str(err.value)


def test_add_refuses_a_dep_that_is_no_task(room: Room) -> None:
    assert refused(room, deps=["t9"]) == (
        "task refused: deps names t9, which is not a task in any swarm folder: it could never be ready"
    )
    assert events(room.ledger) == ["init"]


def test_add_refuses_a_dep_that_was_rejected(room: Room) -> None:
    _put(room, "rejected", "t0")
    assert refused(room, deps=["t0"]) == (
        "task refused: deps names t0, which is in swarm/rejected/: it could never be ready"
    )


@pytest.mark.parametrize("state", ["queue", "running", "done", "parked", "cancelled"])
def test_add_accepts_a_dep_in_any_other_state(room: Room, state: str) -> None:
    _put(room, state, "t0")
    assert admission.add(room, settings.load(room), task("t1", deps=["t0"]))["deps"] == ["t0"]


def test_add_refuses_a_task_that_closes_a_cycle(room: Room) -> None:
    _put(room, "queue", "t2", deps=["t1"])  # dropped by hand, not scanned yet
    assert refused(room, deps=["t2"]) == (
        "task refused: deps form a cycle: t1 -> t2 -> t1 (no task in it could ever be ready)"
    )


# at the queue scan (admission, Stage.QUEUED; index) -------------------------------------------


def reasons(room: Room) -> dict[str, str]:
    """Each rejected file's problems, as written beside it."""
    rejected = room.state_dir("rejected")
    return {
        p.name.removesuffix(".reason"): "; ".join(
            ln[2:] for ln in p.read_text().splitlines() if ln.startswith("- ")
        )
        for p in sorted(rejected.glob("*.reason"))
    }


def test_the_scan_rejects_a_dep_that_is_no_task_or_rejected(room: Room) -> None:
    _put(room, "rejected", "bad")
    _put(room, "parked", "p")
    _put(room, "running", "r")
    _put(room, "queue", "on-nothing", deps=["ghost"])
    _put(room, "queue", "on-rejected", deps=["bad"])
    _put(room, "queue", "on-parked", deps=["p"])
    _put(room, "queue", "on-running", deps=["r", "on-parked"])
    assert sorted(t.id for t in index.scan(room, "queue")) == ["on-parked", "on-running"]
    assert reasons(room) == {
        "on-nothing.json": (
            "deps names ghost, which is not a task in any swarm folder: it could never be ready"
        ),
        "on-rejected.json": "deps names bad, which is in swarm/rejected/: it could never be ready",
    }
    assert events(room.ledger) == ["init", "reject", "reject"]


def test_the_scan_rejects_every_task_on_a_cycle_naming_it(room: Room) -> None:
    _put(room, "queue", "t1", deps=["t2"])
    _put(room, "queue", "t2", deps=["t3"])
    _put(room, "queue", "t3", deps=["t1"])
    _put(room, "queue", "t4", deps=["t1"])  # waits for the cycle, is not on it
    assert [t.id for t in index.scan(room, "queue")] == ["t4"]
    never = " (no task in it could ever be ready)"
    assert reasons(room) == {
        "t1.json": f"deps form a cycle: t1 -> t2 -> t3 -> t1{never}",
        "t2.json": f"deps form a cycle: t2 -> t3 -> t1 -> t2{never}",
        "t3.json": f"deps form a cycle: t3 -> t1 -> t2 -> t3{never}",
    }
    lines = [parse(ln) for ln in data_lines(room.ledger)[1:]]
    assert [(e.event, e.task) for e in lines if e] == [("reject", "t1"), ("reject", "t2"), ("reject", "t3")]


def test_a_cycle_closed_by_an_edit_rejects_the_task_read_before_too(room: Room) -> None:
    _put(room, "queue", "t2")
    _put(room, "queue", "t1", deps=["t2"])
    assert sorted(t.id for t in index.scan(room, "queue")) == ["t1", "t2"]
    _put(room, "queue", "t2", deps=["t1"])  # t1 comes from the index, unread
    assert index.scan(room, "queue") == []
    assert sorted(reasons(room)) == ["t1.json", "t2.json"]


def test_the_scan_reads_only_new_files_and_lists_only_the_folders_it_needs(
    room: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    for k in range(50):
        _put(room, "queue", f"t{k}", deps=[f"t{k + 1}"] if k < 49 else [])
    index.scan(room, "queue")
    reads: list[str] = []
    listed: list[str] = []
    real_read, real_listdir = swarm.read_task, os.listdir
    monkeypatch.setattr(swarm, "read_task", lambda p: reads.append(os.path.basename(p)) or real_read(p))
    monkeypatch.setattr(os, "listdir", lambda p: listed.append(Path(p).name) or real_listdir(p))
    _put(room, "queue", "new", deps=["t0", "t1"])
    assert len(index.scan(room, "queue")) == 51
    assert reads == ["new.json"]  # the cycle check runs on the deps the index keeps
    assert sorted(listed) == ["queue"]  # its deps are queued: the first folder listed says so


def test_a_task_back_from_parked_that_closes_a_cycle_is_caught_between_full_checks(room: Room) -> None:
    _put(room, "parked", "t2", deps=["t1"])
    _put(room, "queue", "t1", deps=["t2"])  # t2 exists (parked): admitted
    assert [t.id for t in listing.run_order(room)] == ["t1"]  # a full check
    os.rename(room.state_dir("parked") / "t2.json", room.state_dir("queue") / "t2.json")  # as `task retry`
    assert [t.id for t in listing.run_order(room)] == []  # a new name is read, even from the saved order
    assert sorted(reasons(room)) == ["t1.json", "t2.json"]


def test_a_scan_that_may_not_reject_lists_the_problem_and_moves_nothing(room: Room) -> None:
    _put(room, "queue", "t1", deps=["t2"])
    _put(room, "queue", "t2", deps=["t1"])
    _put(room, "queue", "t3", deps=["ghost"])
    _put(room, "queue", "ok")
    listed = [(t.name, t.id, t.summary.get("problem")) for t in index.scan(room, "queue", reject=False)]
    assert listed[0] == ("ok.json", "ok", None)  # the queue in run order, then what a scan would reject
    assert sorted(listed[1:]) == [
        ("t1.json", "t1", "deps form a cycle: t1 -> t2 -> t1 (no task in it could ever be ready)"),
        ("t2.json", "t2", "deps form a cycle: t2 -> t1 -> t2 (no task in it could ever be ready)"),
        (
            "t3.json",
            "t3",
            "deps names ghost, which is not a task in any swarm folder: it could never be ready",
        ),
    ]
    assert sorted(os.listdir(room.state_dir("queue"))) == ["ok.json", "t1.json", "t2.json", "t3.json"]
    assert events(room.ledger) == ["init"]
    assert [t.id for t in index.scan(room, "queue")] == ["ok"]  # the next scan rejects them


def test_a_stale_rejected_copy_of_a_dep_does_not_hide_the_task(room: Room) -> None:
    """rejected/ may hold a copy of an id that lives elsewhere (a hand-dropped duplicate): the
    dep is where the task lives."""
    _put(room, "cancelled", "t0")
    _put(room, "rejected", "t0")
    assert admission.add(room, settings.load(room), task("t1", deps=["t0"]))["deps"] == ["t0"]
    _put(room, "queue", "t2", deps=["t0"])
    assert sorted(t.id for t in index.scan(room, "queue")) == ["t1", "t2"]
    assert swarm.Folders(room).state_of("t0") == "cancelled"
