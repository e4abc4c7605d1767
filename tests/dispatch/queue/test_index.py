"""dispatch.queue.index: a queue scan rejects bad files and trusts its index; the run order."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support import data_lines, drop, queue, task, written

from control_room.dispatch.queue import index
from control_room.ledger.line import parse
from control_room.room import swarm
from control_room.room.layout import Room

BAD_FILES = {
    # file name: (content, the problem written to its .reason file)
    "broken.json": ('{"id": "broken", ', "not valid JSON: Expecting property name enclosed in "
                    "double quotes (line 1 column 18)"),
    "no-falsifier.json": (
        {k: v for k, v in task("no-falsifier").items() if k != "falsifier"},
        "missing required field: falsifier",
    ),
    "Bad Name.json": (task("bad-name"), "file name 'Bad Name.json' is not <id>.json with an id "
                      "matching [a-z0-9][a-z0-9._-]{0,63}"),
    "notes.txt": ("just some notes\n", "not a task file: task files are named <id>.json"),
    "mismatch.json": (task("another-id"), "id 'another-id' does not match the file name "
                      "mismatch.json"),
    "huge.json": (json.dumps({**task("huge"), "objective": "x" * (1 << 20)}),
                  "the task file is larger than 1048576 bytes (1 MiB): keep long text in a file "
                  "the task names"),
}  # fmt: skip


def test_scan_rejects_each_bad_file_and_keeps_the_valid_one(room: Room) -> None:
    drop(room, "good.json", task("good"))
    for name, (content, _) in BAD_FILES.items():
        drop(room, name, content)  # type: ignore[arg-type]
    before = len(data_lines(room.ledger))

    listed = index.scan(room, "queue")

    assert [t.id for t in listed] == ["good"]
    assert sorted(os.listdir(room.state_dir("queue"))) == ["good.json"]
    rejected = room.state_dir("rejected")
    assert sorted(os.listdir(rejected)) == sorted([*BAD_FILES, *(f"{n}.reason" for n in BAD_FILES)])
    for name, (content, why) in BAD_FILES.items():
        expected = content if isinstance(content, str) else json.dumps(content)
        assert (rejected / name).read_text() == expected  # moved untouched
        reason = (rejected / f"{name}.reason").read_text().split("\n")
        assert reason[0].startswith(f"Rejected from swarm/queue/{name} at ")
        assert reason[1:] == ["", f"- {why}", "",
                              "Fix the file and move it back into swarm/queue/, or delete it.",
                              ""]  # fmt: skip
    new = [parse(line) for line in data_lines(room.ledger)[before:]]
    assert sorted(e.detail for e in new) == sorted(  # type: ignore[union-attr]
        f"swarm/queue/{n} -> swarm/rejected/{n}: {why}" for n, (_, why) in BAD_FILES.items()
    )
    assert {(e.event, e.outcome) for e in new} == {("reject", "rejected")}  # type: ignore[union-attr]
    # a second scan finds nothing more to reject
    assert [t.id for t in index.scan(room, "queue")] == ["good"]
    assert len(data_lines(room.ledger)) == before + len(BAD_FILES)


def test_scan_skips_hidden_files_and_folders(room: Room) -> None:
    drop(room, ".partial.json", "{")
    (room.state_dir("queue") / "sub").mkdir()
    assert index.scan(room, "queue") == []
    assert os.listdir(room.state_dir("rejected")) == []


def test_a_huge_number_is_rejected_not_a_crash(room: Room) -> None:
    drop(room, "big.json", '{"id": "big", "objective": "o", "falsifier": "f", "validator": "v",'
         ' "max_cost_usd": 1, "wall_clock_s": 1' + "0" * 400 + ', "kill_condition": "k"}')  # fmt: skip
    assert index.scan(room, "queue") == []
    reason = (room.state_dir("rejected") / "big.json.reason").read_text()
    assert "- wall_clock_s must be a number of seconds > 0\n" in reason


def test_scan_uses_its_index_and_rereads_a_changed_file(room: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    for k in range(3):
        drop(room, f"t{k}.json", task(f"t{k}"))
    reads: list[str] = []
    real = swarm.read_task

    def counting(path: Path):  # type: ignore[no-untyped-def]
        reads.append(os.path.basename(path))
        return real(path)

    monkeypatch.setattr(swarm, "read_task", counting)
    assert sorted(t.id for t in index.scan(room, "queue")) == ["t0", "t1", "t2"]
    assert sorted(reads) == ["t0.json", "t1.json", "t2.json"]

    reads.clear()
    assert sorted(t.id for t in index.scan(room, "queue")) == ["t0", "t1", "t2"]
    assert reads == []  # everything came from the index

    drop(room, "t1.json", task("t1", objective="a new and longer objective", priority=7))
    reads.clear()
    listed = {t.id: t.summary for t in index.scan(room, "queue")}
    assert reads == ["t1.json"]
    assert (listed["t1"]["objective"], listed["t1"]["priority"]) == (
        "a new and longer objective", 7,
    )  # fmt: skip


def test_a_valid_file_made_invalid_later_is_rejected(room: Room) -> None:
    path = drop(room, "t.json", task("t"))
    assert [t.id for t in index.scan(room, "queue")] == ["t"]
    path.write_text('{"id": "t"}')
    assert index.scan(room, "queue") == []
    assert (room.state_dir("rejected") / "t.json").exists()


def test_other_states_list_problems_without_moving_anything(room: Room) -> None:
    done = room.state_dir("done")
    (done / "ok.json").write_text(json.dumps(task("ok")))
    (done / "odd.json").write_text("{")
    listed = {t.name: t.summary for t in index.scan(room, "done")}
    assert listed["ok.json"]["id"] == "ok"
    assert listed["odd.json"] == {
        "problem": "not valid JSON: Expecting property name enclosed in double quotes (line 1 column 2)"
    }
    assert sorted(os.listdir(done)) == ["odd.json", "ok.json"]


def test_queue_order_is_priority_then_age_then_id(room: Room) -> None:
    specs = [
        ("old-low", 0, "2025-01-01T00:00:00Z"),
        ("new-high", 5, "2025-03-01T00:00:00Z"),
        ("old-high", 5, "2025-02-01T00:00:00Z"),
        ("negative", -1, "2024-01-01T00:00:00Z"),
        ("b-tie", 0, "2025-01-01T00:00:00Z"),
        ("a-tie", 0, "2025-01-01T00:00:00Z"),
        ("newest-low", 0, "2025-06-01T00:00:00Z"),
    ]
    for tid, prio, created in specs:
        written(room, "queue", task(tid, priority=prio, created=created))  # as task add wrote them
    ordered = [t.id for t in index.queue_order(index.scan(room, "queue"))]
    assert ordered == ["old-high", "new-high", "a-tie", "b-tie", "old-low", "newest-low",
                       "negative"]  # fmt: skip


def test_a_first_scan_of_many_files_read_in_processes_says_what_one_process_says(
    room: Room, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past PRELOAD_AT fresh files, a scan reads them in a process per core (forked children and
    itself): the same
    listing, the same order, the same files rejected with the same reasons."""
    import shutil

    for k in range(40):
        queue(room, f"t{k:02d}", priority=k % 3, deps=[f"t{k - 1:02d}"] if k % 5 else [])
    for name, (content, _) in BAD_FILES.items():
        drop(room, name, content)  # type: ignore[arg-type]
    twin = Room(tmp_path / "twin")
    shutil.copytree(room.root, twin.root, symlinks=True)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(index, "PRELOAD_AT", 1000)
    alone = [(t.name, t.summary) for t in index.scan(twin, "queue")]
    forked: list[int] = []
    real_fork = os.fork
    monkeypatch.setattr(os, "fork", lambda: forked.append(1) or real_fork())
    monkeypatch.setattr(index, "PRELOAD_AT", 10)
    together = [(t.name, t.summary) for t in index.scan(room, "queue")]
    assert len(forked) == 1  # a child reads half, the scan itself the other
    assert together == alone and len(together) == 40

    def reasons(r: Room) -> dict[str, str]:
        return {p.name: p.read_text() for p in r.state_dir("rejected").glob("*.reason")}

    assert reasons(room) == reasons(twin) and len(reasons(room)) == len(BAD_FILES)
