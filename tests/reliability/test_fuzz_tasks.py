"""Bad input, fuzzed (#23 item 5), in-process: task files dropped into swarm/queue/, tasks
given to ``task add`` (admission, as the CLI and MCP call it), agents' reports. Each is
accepted or refused with one line; a refused file goes to swarm/rejected/ with one ledger
line; nothing is written outside the room; no ledger line is forged."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from fuzzing import JSON, NASTY, NUMBER, TEXT, WRITER, bounded, ledger_grows, outside, refused_or
from hypothesis import event, example, given
from hypothesis import strategies as st
from support import VALID_TASK

from control_room.dispatch.queue import admission, index, orchestrator
from control_room.dispatch.round.report import validate
from control_room.ledger.line import parse
from control_room.ledger.read import tail
from control_room.room import settings as settings_file
from control_room.room import swarm, tasks
from control_room.room.layout import Room
from control_room.room.values import is_id

FIELD_NAMES = [f.name for f in tasks.FIELDS]
VALUE = JSON | NASTY | st.lists(NASTY, max_size=3) | NUMBER


@st.composite
def task_data(draw: st.DrawFn) -> dict[str, Any]:
    """A valid task with some fields dropped, some set to hostile values, some unknown added."""
    data: dict[str, Any] = dict(VALID_TASK)
    if draw(st.integers(0, 3)) == 0:
        for name in draw(st.lists(st.sampled_from(list(tasks.REQUIRED)), max_size=2)):
            data.pop(name, None)
    person = st.sampled_from([n for n in tasks.PERSON_FIELDS if n != "id"])
    names = person | st.sampled_from([*FIELD_NAMES, "bogus", ""])
    data.update(draw(st.dictionaries(names, VALUE, max_size=2)))
    data.update(draw(st.dictionaries(person, TEXT | st.lists(TEXT, max_size=2), max_size=2)))
    if draw(st.booleans()):
        data["id"] = draw(st.from_regex(r"[a-z0-9][a-z0-9._-]{0,10}", fullmatch=True) | NASTY)
    return data


def file_bytes() -> st.SearchStrategy[bytes]:
    as_json = task_data().map(lambda d: json.dumps(d, allow_nan=True).encode())
    return (
        as_json
        | st.binary(max_size=200)
        | JSON.map(lambda v: json.dumps(v).encode())
        | st.sampled_from([b"", b"{", b"\xff\xfe{}", b"[" * 5000, b'{"id": 1' + b"0" * 5000 + b"}"])
    )


NAMES = st.from_regex(r"[a-z0-9][a-z0-9._-]{0,12}\.json", fullmatch=True) | st.sampled_from(
    ["x.json", "X.json", ".json", "a b.json", "t.json.json", "t.txt", "t", "-t.json", "é.json"]
)


def _clear(room: Room) -> None:
    for state in ("queue", "rejected"):
        folder = room.state_dir(state)
        shutil.rmtree(folder)
        folder.mkdir()


@bounded(300)
@given(name=NAMES, raw=file_bytes())
@example(name="x.json", raw=json.dumps({**VALID_TASK, "id": None}).encode())  # no id at all, before
@example(name="x.json", raw=b'{"\\n": null}')  # a line break in the problem, before
def test_a_parsed_task_file_is_a_task_or_its_problems(name: str, raw: bytes) -> None:
    task, problems = swarm.parse_task(name, raw)
    assert all(isinstance(p, str) and p and "\n" not in p for p in problems), problems
    if not problems:
        assert is_id(task["id"]) and name == f"{task['id']}.json"
        assert tasks.validate(task)[1] == []
        for path in task.get("owns", []):
            assert not path.startswith(("/", "~")) and ".." not in path.split("/")


@bounded(150)
@given(name=NAMES, raw=file_bytes())
@example(name="x.json", raw=json.dumps({**VALID_TASK, "id": ""}).encode())  # a KeyError, before
def test_a_dropped_file_is_listed_or_rejected_with_one_line(
    room: Room, tmp_path: Path, name: str, raw: bytes
) -> None:
    _clear(room)
    before = outside(tmp_path, room)
    (room.state_dir("queue") / name).write_bytes(raw)
    listed: list[Any] = []
    hidden = name.startswith(".")  # an editor's or a writer's temporary file: never read
    with ledger_grows(room, lambda: 0 if listed or hidden else 1):
        listed = [x for x in index.scan(room, "queue") if "problem" not in x.summary]
    rejected = sorted(p.name for p in room.state_dir("rejected").iterdir())
    event("hidden" if hidden else "listed" if listed else "rejected")
    if hidden:
        assert listed == rejected == [] and (room.state_dir("queue") / name).read_bytes() == raw
    elif listed:
        assert [x.name for x in listed] == [name] and rejected == []
    else:
        assert rejected == [name, name + swarm.REASON]
        (line,) = [ln for ln in tail(room.ledger, 1)]
        entry = parse(line)
        assert entry is not None and entry.event == "reject" and entry.writer == WRITER
    assert outside(tmp_path, room) == before


@bounded(200)
@given(data=task_data(), new_route=st.booleans())
def test_task_add_queues_the_task_or_refuses_it_in_one_line(
    room: Room, tmp_path: Path, data: dict[str, Any], new_route: bool
) -> None:
    _clear(room)
    before = outside(tmp_path, room)
    settings = settings_file.load(room)
    routes_before = room.routes.read_text(encoding="utf-8")
    got: list[Any] = [None]

    def appended() -> int:
        if got[0] is None:
            return 0
        return 1 + (room.routes.read_text(encoding="utf-8") != routes_before)  # a route add's line

    with ledger_grows(room, appended):
        got[0], refusal = refused_or(
            lambda: admission.add(room, settings, data, new_route="" if new_route else None)
        )
    queued = sorted(p.name for p in room.state_dir("queue").iterdir())
    event("refused" if got[0] is None else "queued")
    if got[0] is None:
        assert refusal is not None and queued == []
    else:
        task = got[0]
        assert queued == [f"{task['id']}.json"]
        again, problems = swarm.read_task(room.state_dir("queue") / queued[0])
        assert problems == [] and again == task
        last = parse(tail(room.ledger, 1)[0])
        assert last is not None and (last.event, last.task) == ("task-add", task["id"])
    assert outside(tmp_path, room) == before


REPORT_LINES = st.sampled_from(
    [
        "DECISION: ship it", "WHY: because", "EVIDENCE:", "- CONFIRMED: tests pass", "- INFERRED: x",
        "* UNKNOWN: y", "MISSING: none", "NEXT COMMAND: make test", "STOP RULE: when red", "> DECISION: q",
        "## **DECISION:** x", "decision: x", "```", "~~~", "- ", "-", "| a | b |", "",
    ]
) | TEXT  # fmt: skip


@bounded(300)
@given(st.lists(REPORT_LINES, max_size=30).map("\n".join) | st.binary(max_size=300))
def test_a_report_is_checked_never_raised_on(output: str | bytes) -> None:
    report = validate(output)
    json.dumps(report.as_dict())  # what `validate --json` and the MCP tool print
    assert report.ok == (report.violations == [])
    assert all("\n" not in v.message for v in report.violations)


SLICE = st.fixed_dictionaries(
    {}, optional={"title": TEXT, "objective": TEXT, "owns": VALUE, "validator": VALUE, "extra": JSON}
)
PROPOSAL = task_data() | task_data().map(
    lambda d: {**d, "slices": [{"title": "a", "objective": "do a"}, {"title": "b", "objective": "do b"}]}
)
PROPOSAL |= st.builds(lambda d, s: {**d, "slices": s}, task_data(), st.lists(SLICE, max_size=3) | JSON)


@bounded(200)
@given(blocks=st.lists(st.lists(PROPOSAL | JSON, max_size=3).map(lambda ps: ps[0] if len(ps) == 1 else ps)
                       .map(lambda v: json.dumps(v, allow_nan=True)) | TEXT, max_size=3))  # fmt: skip
@example(
    blocks=[json.dumps({**VALID_TASK, "slices": [{"title": "", "objective": "", "owns": 1}]})]
)  # crashed
def test_an_agents_proposals_are_queued_or_refused_each_with_its_line(
    room: Room, tmp_path: Path, blocks: list[str]
) -> None:
    _clear(room)
    before = outside(tmp_path, room)
    text = "".join(f"some words\n```json\n{b}\n```\n" for b in blocks)
    settings = settings_file.load(room)
    with ledger_grows(room, lambda: None):
        queued, refused = orchestrator.accept(room, settings, "orch-1", text)
    assert all("\n" not in r for r in refused), refused
    event("queued" if queued else "refused")
    held = {p.stem for p in room.state_dir("queue").iterdir() if p.suffix == ".json"}
    assert set(queued) <= held | {p.stem for p in room.state_dir("cancelled").iterdir()}
    assert outside(tmp_path, room) == before
