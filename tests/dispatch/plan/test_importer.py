"""dispatch.plan.importer: content_hash, prepare's decisions and refusals, apply, export."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from support import entries, snapshot, task_json, where

from control_room.dispatch.plan import importer
from control_room.errors import ConflictError, InvalidError, QueueFullError
from control_room.knowledge import routes
from control_room.room import settings, swarm
from control_room.room.layout import Room

NOTHING = "; nothing was written"


def fields(tid: str, **over: str) -> str:
    base = {"objective": f"do {tid}", "falsifier": f"{tid} shows no gain", "validator": "python3 check.py",
            "max_cost_usd": "1", "wall_clock_s": "10m", "kill_condition": "two rounds without gain",
            "command": "true", **over}  # fmt: skip
    return "\n".join(f"{k}: {v}" for k, v in base.items() if v)


def tasks(*ids: str, route: str = "work", falsifier: str = "the work is useless", **over: str) -> str:
    """A plan: route ``route`` (with a falsifier line unless it is empty), a task per id."""
    head = [f"## {route} — The work"] + ([f"Falsifier: {falsifier}"] if falsifier else []) + [""]
    return "\n".join(head + [f"### {t}\n{fields(t, **over)}\n" for t in ids])


def room_files(root: Path) -> dict[Path, bytes]:
    """Every file of the room but caches and locks (hidden names), and their bytes."""
    files = (p for p in root.rglob("*") if p.is_file())
    return {p: p.read_bytes() for p in files if not any(s.startswith(".") for s in p.relative_to(root).parts)}


def imported(room: Room, text: str, name: str = "PLAN.md") -> importer.Outcome:
    return importer.apply(room, settings.load(room), name, text)


def test_content_hash_is_the_task_files_text_without_plan_and_plan_hash() -> None:
    task = {"id": "t1", "objective": "o", "created": "2024-01-01T00:00:00Z"}
    digest = hashlib.sha256(swarm.dumps(task, seal=False).encode("utf-8")).hexdigest()[:16]
    assert importer.content_hash(task) == digest
    assert importer.content_hash({**task, "plan": "P.md", "plan_hash": "0" * 16}) == digest
    assert importer.content_hash({**task, "rounds": 1}) != digest  # a round written into it changes it
    assert importer.content_hash({**task, "objective": "o2"}) != digest  # and so does a person's edit


def test_apply_adds_the_route_and_the_tasks_deps_first_with_one_ledger_line(room: Room) -> None:
    text = tasks("a", "b").replace("command: true\n", "command: true\ndeps: b\n", 1)
    out = imported(room, text)
    assert [(i.id, i.route, i.action, i.why) for i in out.items] == [
        ("a", "work", "add", ""),
        ("b", "work", "add", ""),
    ]
    assert [(r.name, new) for r, new in out.routes] == [("work", True)]
    assert out.counts() == {"add": 2, "update": 0, "unchanged": 0, "kept": 0}
    assert [e.task for e in entries(room, "task-add")] == ["b", "a"]  # a waits for b: b first
    assert [e.detail for e in entries(room, "task-add")] == ["proposed by plan PLAN.md: do b",
                                                             "proposed by plan PLAN.md: do a"]  # fmt: skip
    [route] = entries(room, "route-add")
    assert (route.route, route.detail) == ("work", "The work (from plan PLAN.md)")
    row = routes.find(room, "work")
    assert row is not None and (row["title"], row["falsifier"]) == ("The work", "the work is useless")
    a = task_json(room, "queue", "a")
    assert (a["deps"], a["route"], a["plan"], a["plan_hash"]) == (
        ["b"],
        "work",
        "PLAN.md",
        importer.content_hash(a),
    )
    assert [e.detail for e in entries(room, "plan-import")] == [
        "PLAN.md: 2 added, 0 updated, 0 unchanged, 0 kept as they are"
    ]


def test_prepare_decides_each_task_and_writes_nothing(room: Room) -> None:
    imported(room, tasks("up", "same", "edited", "ran"))
    q = room.state_dir("queue")
    edited = task_json(room, "queue", "edited")
    (q / "edited.json").write_text(json.dumps({**edited, "objective": "as a person put it"}))
    swarm.move(room, "ran", "queue", "done")
    drop(room, "mine")  # queued by hand: no plan_hash
    (q / "broken.json").write_text("{")
    before = room_files(room.root)
    text = tasks("up", "same", "edited", "ran", "mine", "broken", "new").replace("do up", "do up, v2")
    out = importer.prepare(room, settings.load(room), "PLAN.md", text)
    assert [(i.id, i.action, i.why) for i in out.items] == [
        ("up", "update", ""),
        ("same", "unchanged", ""),
        ("edited", "kept", "edited or run since it was imported: left as it is"),
        ("ran", "kept", "in swarm/done/: it ran; the plan's version is not applied"),
        ("mine", "kept", "queued, but not by a plan import: left as it is"),
        ("broken", "kept", "swarm/queue/broken.json is not a valid task: left as it is"),
        ("new", "add", ""),
    ]
    assert out.items[0].task["objective"] == "do up, v2"
    assert out.items[0].task["created"] == task_json(room, "queue", "up")["created"]  # kept by an update
    assert out.items[1].task == task_json(room, "queue", "same")
    assert [(r.name, new) for r, new in out.routes] == [("work", False)]
    assert room_files(room.root) == before


def test_a_plan_file_name_with_a_line_break_is_refused_in_one_line(room: Room) -> None:
    """Found by the fuzz tests: the name is in every problem, so `plan import` of a file named
    with a line break printed its refusal over two lines."""
    before = room_files(room.root)
    with pytest.raises(InvalidError) as err:
        imported(room, tasks("t1"), name="PL\nAN.md")
    assert str(err.value) == (
        "plan refused: the file name 'PL\\nAN.md' holds a line break or a control character: rename the file"
        + NOTHING
    )
    assert room_files(room.root) == before


def test_apply_rewrites_an_update_and_names_what_it_kept(room: Room) -> None:
    imported(room, tasks("up", "ran"))
    swarm.move(room, "ran", "queue", "parked")
    out = imported(room, tasks("up", "ran").replace("do up", "do up, v2"))
    assert out.counts() == {"add": 0, "update": 1, "unchanged": 0, "kept": 1}
    up = task_json(room, "queue", "up")
    assert (up["objective"], up["plan_hash"]) == ("do up, v2", importer.content_hash(up))
    assert where(room, "ran") == ["parked"] and task_json(room, "parked", "ran")["objective"] == "do ran"
    assert entries(room, "plan-import")[-1].detail == (
        "PLAN.md: 0 added, 1 updated (up), 0 unchanged, 1 kept as they are: "
        "ran (in swarm/parked/: it ran; the plan's version is not applied)"
    )


def a_person_edits_after_the_check(room: Room, monkeypatch: pytest.MonkeyPatch, task_id: str) -> None:
    """The next import checks the plan whole, then a person edits queued ``task_id`` (its
    objective: ``mine``) before the import writes."""
    real = importer.prepare
    path = swarm.task_file(room, "queue", task_id)

    def then_a_person_edits(*args: object) -> importer.Outcome:
        out = real(*args)  # type: ignore[arg-type]
        path.write_text(json.dumps({**json.loads(path.read_text()), "objective": "mine"}))
        return out

    monkeypatch.setattr(importer, "prepare", then_a_person_edits)


def test_an_edit_during_the_import_is_kept_and_the_import_stops(
    room: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    imported(room, tasks("up"))
    a_person_edits_after_the_check(room, monkeypatch, "up")
    with pytest.raises(ConflictError) as err:
        imported(room, tasks("up").replace("do up", "do up, v2"))
    assert str(err.value) == "task up changed or left swarm/queue/ during the import: import again"
    assert task_json(room, "queue", "up")["objective"] == "mine"
    assert len(entries(room, "plan-import")) == 1  # the first import's only


def test_an_import_stopped_by_an_edit_says_what_it_wrote_before(
    room: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    imported(room, tasks("up"))
    a_person_edits_after_the_check(room, monkeypatch, "up")
    with pytest.raises(ConflictError):
        imported(room, tasks("up", "new").replace("do up", "do up, v2"))
    assert where(room, "new") == ["queue"]  # added before the update met the edit
    last = entries(room, "plan-import")[-1]
    assert (last.outcome, last.detail) == (
        "stopped",
        "PLAN.md: 1 added, 0 updated, then stopped: task up changed or left swarm/queue/ during the "
        "import: import again",
    )


def test_every_problem_of_the_plan_is_raised_at_once(room: Room) -> None:
    room.state_dir("queue").joinpath("x.json").write_text(
        swarm.dumps({**task_json_of(fields("x")), "id": "x", "deps": ["p1"]})
    )  # a room task that waits for a task of the plan
    text = "\n".join([
        "## fresh", "",
        "### p1", fields("p1"), "deps: x", "",
        "### p2", fields("p2", falsifier=""), "",
    ])  # fmt: skip
    before = room_files(room.root)
    with pytest.raises(InvalidError) as err:
        importer.prepare(room, settings.load(room), "P.md", text)
    assert str(err.value) == (
        "plan refused: P.md: 3 problems: "
        "task p1 (P.md:3): deps form a cycle: p1 -> x -> p1 (no task in it could ever be ready); "
        "task p2 (P.md:13): missing falsifier (a task that cannot state its falsifier is a vibe, not a "
        "task); "
        "route fresh (P.md:1): not in ROUTES.md, and no `Falsifier:` line under its heading: a new route "
        "needs one" + NOTHING
    )  # the cycle through a room task once: admission names it, the plan's own check does not again
    assert room_files(room.root) == before


def task_json_of(text: str) -> dict[str, object]:
    """The fields of a plan task (``fields``'s text) as a task file holds them."""
    from control_room.dispatch.plan.syntax import parse
    from control_room.dispatch.queue import admission

    [t] = parse("### x\n" + text).tasks
    return admission.shape(t.data())


def test_a_route_needs_a_falsifier_only_if_it_is_new_and_the_plan_writes_on_it(room: Room) -> None:
    routes.add(room, "known", "Known route")
    imported(room, tasks("k1", route="known", falsifier=""))
    assert task_json(room, "queue", "k1")["route"] == "known"
    drop(room, "n1", route="newer")
    swarm.move(room, "n1", "queue", "done")
    out = imported(room, tasks("n1", route="newer", falsifier=""))  # n1 is kept: nothing is written on it
    assert [(i.id, i.action) for i in out.items] == [("n1", "kept")]
    assert routes.find(room, "newer") is None


def test_a_plan_the_queue_has_no_room_for_is_refused(room: Room) -> None:
    imported(room, tasks("a"))
    s = settings.load(room).replace(max_queued=2)
    with pytest.raises(QueueFullError) as err:
        importer.prepare(room, s, "P.md", tasks("a", "b", "c"))
    assert str(err.value) == (
        "plan refused: P.md: the queue holds 1 task and CONTROL.md max_queued is 2: no room for 2 new tasks"
        + NOTHING
    )
    assert importer.prepare(room, s, "P.md", tasks("a", "b")).counts()["add"] == 1  # room for one more
    full = s.replace(max_queued=1)
    assert importer.prepare(room, full, "P.md", tasks("a")).counts()["unchanged"] == 1  # adds none: no check


def drop(room: Room, tid: str, **over: object) -> None:
    task = {**task_json_of(fields(tid)), "id": tid, "created": "2024-01-01T00:00:00Z", **over}
    swarm.task_file(room, "queue", tid).write_text(swarm.dumps(task))


def test_export_groups_by_route_orders_by_deps_then_priority_and_lists_what_it_left_out(room: Room) -> None:
    routes.add(room, "r2", "Second", "r2 is useless")
    routes.add(room, "r1", "First", "r1 is useless")
    drop(room, "a")
    drop(room, "b", priority=5)
    drop(room, "c", route="r1", deps=["d"])
    drop(room, "d", route="r1")
    drop(room, "e", route="r3", falsifier="e's own falsifier")  # a route not on the board
    drop(room, "f", route="r2")
    room.state_dir("queue").joinpath("bad.json").write_text("{")
    text, written, skipped = importer.export(room, "# Plan")
    assert [t["id"] for t in written] == ["b", "a", "f", "d", "c", "e"]
    assert skipped == [
        "swarm/queue/bad.json: not valid JSON: Expecting property name enclosed in double quotes "
        "(line 1 column 2)"
    ]
    assert [ln for ln in text.splitlines() if ln.startswith(("#", "Falsifier"))] == [
        "# Plan", "### b", "### a",
        "## r2 — Second", "Falsifier: r2 is useless", "### f",
        "## r1 — First", "Falsifier: r1 is useless", "### d", "### c",
        "## r3", "Falsifier: e's own falsifier", "### e",
    ]  # fmt: skip


def test_export_keeps_a_dep_cycle_in_the_queue(room: Room) -> None:
    drop(room, "x", deps=["y"])
    drop(room, "y", deps=["x"], priority=1)
    _, written, _ = importer.export(room, "# Plan")
    assert [t["id"] for t in written] == ["y", "x"]


def test_what_export_writes_imports_as_unchanged(room: Room) -> None:
    imported(room, tasks("a", "b"))
    text, _, _ = importer.export(room, "# Plan")
    before = snapshot(room.swarm)
    out = imported(room, text, "exported.md")
    assert out.counts() == {"add": 0, "update": 0, "unchanged": 2, "kept": 0}
    assert snapshot(room.swarm) == before
    assert (
        entries(room, "plan-import")[-1].detail
        == "exported.md: 0 added, 0 updated, 2 unchanged, 0 kept as they are"
    )
