"""control_room.room.tasks: the task schema (SPEC §3); validate() never raises and names every problem."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import VALID_TASK, task

from control_room.room import tasks, values

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=10**308, max_value=10**400),  # too big for a float
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
)
json_like = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.text(max_size=8), inner, max_size=4),
    ),
    max_leaves=20,
)
field_names = st.sampled_from([f.name for f in tasks.FIELDS] + ["bogus"])
task_like = st.dictionaries(field_names, json_like, max_size=len(tasks.FIELDS))


@settings(max_examples=400)
@given(data=st.one_of(json_like, task_like))
def test_validate_never_raises(data: object) -> None:
    result, problems = tasks.validate(data)
    assert isinstance(result, dict) and isinstance(problems, list)
    assert all(isinstance(p, str) and p for p in problems)
    if not isinstance(data, dict):
        assert problems == [f"a task must be a JSON object, not {type(data).__name__}"]


@settings(max_examples=400)
@given(data=task_like, name=st.from_regex(values.ID_RE, fullmatch=True))
def test_validate_with_a_file_name_never_raises(data: dict[str, object], name: str) -> None:
    result, problems = tasks.validate(data, expected_id=name)
    missing = [f for f in tasks.REQUIRED if data.get(f) in (None, "")]
    if missing:
        assert problems[0] == (
            "missing required field" + ("s" if len(missing) > 1 else "") + ": " + ", ".join(missing)
        )
    if not problems:
        assert result["id"] == name


def test_a_valid_task_has_no_problems() -> None:
    result, problems = tasks.validate(task("t1", route="r1", priority=3, deps=["t0"]))
    assert problems == []
    assert result == task("t1", route="r1", priority=3, deps=["t0"])


def test_every_missing_required_field_is_named() -> None:
    assert tasks.validate({"objective": "x"})[1] == [
        "missing required fields: falsifier, validator, max_cost_usd, wall_clock_s, kill_condition"
    ]
    assert tasks.validate({k: v for k, v in VALID_TASK.items() if k != "falsifier"})[1] == [
        "missing required field: falsifier"
    ]
    assert tasks.validate({})[1] == [
        "missing required fields: objective, falsifier, validator, max_cost_usd, wall_clock_s, kill_condition"
    ]


def test_empty_values_count_as_missing() -> None:
    data = {**VALID_TASK, "falsifier": "", "validator": None}
    assert tasks.validate(data)[1] == ["missing required fields: falsifier, validator"]


def test_unknown_fields_are_named() -> None:
    assert tasks.validate({**VALID_TASK, "zeta": 1, "alpha": 2})[1] == ["unknown fields: alpha, zeta"]


@pytest.mark.parametrize(
    ("field", "value", "why"),
    [
        ("max_cost_usd", -1, "max_cost_usd must be a number >= 0"),
        ("max_cost_usd", True, "max_cost_usd must be a number >= 0"),
        ("max_cost_usd", float("nan"), "max_cost_usd must be a number >= 0"),
        pytest.param("max_cost_usd", 10**400, "max_cost_usd must be a number >= 0",
                     id="max_cost_usd-int-beyond-float"),
        ("wall_clock_s", 0, "wall_clock_s must be a number of seconds > 0"),
        pytest.param("wall_clock_s", 10**400, "wall_clock_s must be a number of seconds > 0",
                     id="wall_clock_s-int-beyond-float"),
        ("objective", "   ", "objective must be a non-empty string"),
        ("validator", [], "validator must be a command string or a non-empty list of strings"),
        ("validator", [""], "validator must be a command string or a non-empty list of strings"),
        ("priority", 1.5, "priority must be an integer"),
        ("deps", ["ok", "Not OK"], "deps must be a list of ids"),
        ("owns", ["src/../../etc"],
         "owns path 'src/../../etc' must be relative to the work dir, without '..'"),
        ("owns", ["/etc/passwd"], "owns path '/etc/passwd' must be relative to the work dir, without '..'"),
        ("extra_args", "--yolo", "extra_args must be a list of strings"),
    ],
)  # fmt: skip
def test_a_wrong_value_is_named(field: str, value: object, why: str) -> None:
    assert tasks.validate({**VALID_TASK, field: value})[1] == [why]


def test_id_must_match_the_file_name() -> None:
    assert tasks.validate(task("other"), expected_id="mine")[1] == [
        "id 'other' does not match the file name mine.json"
    ]
    result, problems = tasks.validate(dict(VALID_TASK), expected_id="mine")
    assert (problems, result["id"]) == ([], "mine")


@pytest.mark.parametrize("empty", [None, ""])
def test_an_empty_id_in_a_file_is_the_files_name(empty: object) -> None:
    """Found by tests/reliability/test_fuzz_tasks.py: `"id": null` was valid and left the task
    without an id, and every queue scan (status, task list, cycle) died on it with a KeyError."""
    result, problems = tasks.validate({**VALID_TASK, "id": empty}, expected_id="mine")
    assert (problems, result["id"]) == ([], "mine")


def test_an_unknown_field_is_named_on_one_line_whatever_its_name() -> None:
    """Found by the fuzz tests: a key holding a line break (or a terminal's escape) was named
    as it was, and `task add`'s one-line refusal spanned lines."""
    data = {**VALID_TASK, "a\nb": 1, "\x1b[2J": 2, "x" * 70: 3, "plain_name": 4}
    assert tasks.validate(data)[1] == ["unknown fields: '\\x1b[2J', 'a\\nb', '" + "x" * 64 + "…', plain_name"]


def test_new_id_is_readable_and_valid() -> None:
    made = tasks.new_id("Make parse() 2x FASTER, please, now!")
    assert made.startswith("make-parse-2x-faster-please-") and values.is_id(made)
    assert tasks.new_id("!!!").startswith("task-")


def test_the_schema_round_trips_through_json() -> None:
    data = json.loads(json.dumps(task("t1", command=["python3", "-c", "print(1)"], gate=["gpu"])))
    assert tasks.validate(data, expected_id="t1")[1] == []


def declared(cls: str) -> list[str]:
    """The fields class ``cls`` of room/tasks.py declares (the TypedDicts exist for mypy only)."""
    tree = ast.parse(Path(tasks.__file__).read_text(encoding="utf-8"))
    (node,) = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == cls]
    return [a.target.id for a in node.body if isinstance(a, ast.AnnAssign) and isinstance(a.target, ast.Name)]


def test_the_task_type_declares_the_fields_of_the_table_in_its_order() -> None:
    assert declared("_Identity") + declared("Task") == [f.name for f in tasks.FIELDS]
    assert declared("_Identity") == ["id", *tasks.REQUIRED]  # what every task read from a file has


def test_each_field_is_written_by_a_person_or_by_the_dispatcher() -> None:
    assert {f.writer for f in tasks.FIELDS} == {tasks.PERSON, tasks.DISPATCHER}
    assert {"rounds", "created", "passed_at", "dispatcher_deaths", "plan_hash", "seal"} <= set(tasks.OWNED)
    assert not any(f.required for f in tasks.FIELDS if f.writer == tasks.DISPATCHER)
    assert tasks.PERSON_FIELDS[:7] == ("id", *tasks.REQUIRED)


def test_fields_only_control_room_writes_are_refused_in_one_wording() -> None:
    assert tasks.owned_problem(task("t1")) is None
    assert tasks.owned_problem(task("t1", rounds=0)) == (
        "rounds: a field only control-room writes (a task's history is the room's): remove it"
    )
    assert tasks.owned_problem(task("t1", created="2026-01-01T00:00:00Z", done_by="me", seal="x")) == (
        "created, done_by, seal: fields only control-room writes (a task's history is the room's): "
        "remove them"
    )


def test_the_seal_covers_the_id_and_the_dispatchers_fields_only() -> None:
    mine = task("t1", rounds=1, last_failure="validator exited 1")
    seal = tasks.seal(mine)
    assert seal is not None and len(seal) == 16
    assert tasks.sealed({**mine, "seal": seal})
    assert tasks.sealed({**mine, "objective": "a person's edit", "seal": seal})  # theirs to edit
    assert not tasks.sealed({**mine, "rounds": 0, "seal": seal})  # a round count edited by hand
    assert not tasks.sealed({**mine, "id": "t2", "seal": seal})  # a file copied under a new id
    assert not tasks.sealed(mine)  # no seal at all
    assert tasks.seal(task("t1")) is None and tasks.sealed(task("t1"))  # nothing to seal


def test_split_parts_what_the_author_wrote_from_what_control_room_did() -> None:
    both = tasks.as_task(
        {**task("t1", route="r1"), "plan": "P.md", "created": "2026-01-01T00:00:00Z", "seal": "s"}
    )
    person, owned = tasks.split(both)
    assert person == task("t1", route="r1") and owned == {"plan": "P.md", "created": "2026-01-01T00:00:00Z"}


@pytest.mark.parametrize(
    ("a", "b", "overlap"),
    [
        ("src", "src/parse.py", True),
        ("src", "src2", False),
        ("./src", "src/", True),
        ("src//deep/", "src/deep/x.py", True),
        ("a/b/../c", "a/c", True),
        (".", "docs", True),
        ("", "docs", True),
        ("docs", "doc", False),
    ],
)
def test_owns_paths_overlap_however_they_are_spelt(a: str, b: str, overlap: bool) -> None:
    assert tasks.owns_overlap(a, b) is overlap
    assert tasks.owns_overlap(b, a) is overlap
