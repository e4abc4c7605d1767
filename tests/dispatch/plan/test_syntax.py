"""dispatch.plan.syntax: parse (fields, briefs, fences, problems), value, show, render."""

from __future__ import annotations

import pytest

from control_room.dispatch.plan import syntax
from control_room.dispatch.plan.syntax import PLAN_FIELDS, PlanRoute, parse, render, render_task, show

PLAN = """# Plan: a faster parser

What we want and why; not kept.

### loose-1
objective: tidy the repo

## parse — A faster parser
Falsifier: parsing is no faster over 3 runs
falsifier: a second falsifier line is a note
Notes under a route are not kept.

### parse-1

- objective: write the parser
- wall_clock_s: 30m
Max_Cost_USD: 0.5
deps: loose-1, ,
gate:
validator: python3 -m pytest -q
priority: 3
The brief starts here.

```
### not a task
## not a route
```
#### a sub-heading is text
"""


def test_parse_reads_routes_tasks_fields_and_briefs() -> None:
    parsed = parse(PLAN, "PLAN.md")
    assert parsed.problems == []
    assert parsed.routes == [PlanRoute("parse", "A faster parser", "parsing is no faster over 3 runs", 8)]
    loose, task = parsed.tasks
    assert (loose.id, loose.route, loose.line, loose.fields, loose.brief) == (
        "loose-1", None, 5, {"objective": "tidy the repo"}, "")  # fmt: skip
    assert (task.id, task.route, task.line, task.problems) == ("parse-1", "parse", 13, [])
    assert task.fields == {
        "objective": "write the parser",
        "wall_clock_s": 1800.0,
        "max_cost_usd": 0.5,
        "deps": ["loose-1"],  # empty items of a list are dropped
        "validator": "python3 -m pytest -q",  # argv as written: admission splits it
        "priority": 3,
    }  # `gate:` with no value sets nothing
    assert task.brief == (
        "The brief starts here.\n\n```\n### not a task\n## not a route\n```\n#### a sub-heading is text"
    )


def test_a_task_gives_task_add_its_data() -> None:
    loose, task = parse(PLAN).tasks
    assert loose.data() == {"id": "loose-1", "objective": "tidy the repo"}  # no route, no brief
    assert task.data() == {"id": "parse-1", **task.fields, "route": "parse", "brief": task.brief}


@pytest.mark.parametrize(
    ("heading", "route", "title"),
    [
        ("## r1 — Em dash", "r1", "Em dash"),
        ("## r1 – En dash", "r1", "En dash"),
        ("## r1 - Hyphen  ", "r1", "Hyphen"),
        ("##   r1", "r1", ""),
    ],
)
def test_a_routes_title_follows_a_dash_or_is_left_out(heading: str, route: str, title: str) -> None:
    parsed = parse(f"{heading}\n### t1\nobjective: o\n")
    assert [(r.name, r.title, r.falsifier, r.line) for r in parsed.routes] == [(route, title, "", 1)]
    assert parsed.tasks[0].route == route


def test_a_falsifier_after_the_first_task_is_not_the_routes() -> None:
    parsed = parse("## r1\n### t1\nobjective: o\n\nFalsifier: part of t1's brief\n")
    assert parsed.routes[0].falsifier == ""
    assert parsed.tasks[0].brief == "Falsifier: part of t1's brief"


def test_a_field_line_after_the_first_blank_line_is_brief() -> None:
    [t] = parse("### t1\nobjective: o\n\nmodel: big\n").tasks
    assert (t.fields, t.brief) == ({"objective": "o"}, "model: big")


def test_every_problem_is_named_by_line_task_and_field() -> None:
    text = "\n".join([
        "##",  # 1
        "## Bad_Route",  # 2
        "### t1",  # 3
        "colour: red",
        "route: r9",
        "objective: a",
        "objective: b",
        "max_cost_usd: cheap",
        "wall_clock_s: soon",
        "priority: high",
        "## r2",  # 11
        "## r2",  # 12
        "### t1",  # 13
        "### Bad_Id",  # 14
    ])  # fmt: skip
    parsed = parse(text, "P.md")
    assert parsed.problems == [
        "P.md:1: a route's heading is `## route-name — title`, not '##'",
        "P.md:2: route 'Bad_Route' must match [a-z0-9][a-z0-9._-]{0,63}",
        "P.md:12: route r2 is in the plan twice",
        "P.md:13: task t1 is in the plan twice (also line 3)",
    ]
    sets = ", ".join(PLAN_FIELDS)
    assert parsed.tasks[0].problems == [
        f"colour is not a task field (a plan sets: {sets})",
        f"route is not set in a plan (a plan sets: {sets})",
        "objective is given twice",
        "max_cost_usd 'cheap' is not a number (USD)",
        "wall_clock_s: not a duration: 'soon' (try 90, 90s, 30m, 1h)",
        "priority 'high' is not an integer",
    ]
    assert parsed.tasks[0].fields == {"objective": "a"}
    assert [(t.id, t.route) for t in parsed.tasks] == [("t1", "Bad_Route"), ("t1", "r2"), ("Bad_Id", "r2")]
    assert parsed.tasks[2].problems == ["the id after ### must match [a-z0-9][a-z0-9._-]{0,63}: 'Bad_Id'"]


def test_a_task_under_a_broken_route_heading_has_no_route() -> None:
    parsed = parse("## r1\n##\n### t1\nobjective: o\n")
    assert parsed.tasks[0].route is None


def test_plan_fields_are_what_a_person_writes_but_what_the_plan_says_otherwise() -> None:
    assert PLAN_FIELDS == (
        "objective", "falsifier", "validator", "max_cost_usd", "wall_clock_s", "kill_condition", "role",
        "adapter", "model", "fallback", "deps", "owns", "gate", "priority", "max_turns", "extra_args",
        "command", "review",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("deps", " a ,b,, c ", ["a", "b", "c"]),
        ("owns", "src/a.py, docs", ["src/a.py", "docs"]),
        ("extra_args", "--fast, --quiet", ["--fast", "--quiet"]),
        ("max_cost_usd", "2", 2.0),
        ("wall_clock_s", "1h30m", 5400.0),
        ("wall_clock_s", "90", 90.0),
        ("priority", "-2", -2),
        ("max_turns", "30", 30),
        ("command", "python3 run.py --x 'a b'", "python3 run.py --x 'a b'"),
        ("objective", "as written", "as written"),
    ],
)
def test_value_reads_each_kind(name: str, text: str, expected: object) -> None:
    assert syntax.value(name, text) == expected


def test_value_refuses_what_does_not_parse() -> None:
    with pytest.raises(ValueError) as err:
        syntax.value("wall_clock_s", "0")
    assert str(err.value) == "wall_clock_s: not a positive duration: '0' (try 90, 90s, 30m, 1h)"


@pytest.mark.parametrize(
    ("name", "v", "shown"),
    [
        ("command", ["python3", "run.py", "a b"], "python3 run.py 'a b'"),
        ("validator", "make check", "make check"),
        ("deps", ["a", "b"], "a, b"),
        ("max_cost_usd", 1.0, "1"),
        ("max_cost_usd", 0.25, "0.25"),
        ("wall_clock_s", 600.0, "600"),
        ("priority", 3, "3"),
        ("objective", "two\n  lines", "two lines"),
    ],
)
def test_show_writes_a_value_as_a_plan_does(name: str, v: object, shown: str) -> None:
    assert show(name, v) == shown


def test_render_task_writes_plan_fields_in_order_then_the_brief() -> None:
    task = {"id": "t1", "route": "r1", "created": "2024-01-01T00:00:00Z", "plan_hash": "x", "deps": [],
            "max_cost_usd": 1.0, "objective": "do it", "gate": None, "model": "",
            "brief": "\nline 1\nline 2\n"}  # fmt: skip
    assert render_task(task) == ["### t1", "objective: do it", "max_cost_usd: 1", "", "line 1\nline 2", ""]
    assert render_task({"id": "t2", "objective": "o"}) == ["### t2", "objective: o", ""]


def test_render_writes_the_intro_loose_tasks_then_each_route() -> None:
    routes = [
        (PlanRoute("r1", "A  title", "it\nfails", 0), [{"id": "t2", "objective": "two", "brief": "b2"}]),
        (PlanRoute("r2", "", "", 0), [{"id": "t3", "objective": "three"}]),
    ]
    text = render("# Plan\n\n", [{"id": "t1", "objective": "one"}], routes)
    assert text == (
        "# Plan\n\n"
        "### t1\nobjective: one\n\n"
        "## r1 — A title\nFalsifier: it fails\n\n### t2\nobjective: two\n\nb2\n\n"
        "## r2\n\n### t3\nobjective: three\n"
    )


def test_what_render_writes_parse_reads_back() -> None:
    t1 = {"id": "t1", "objective": "one", "command": ["python3", "-c", "print('a b')"], "deps": ["t0"],
          "wall_clock_s": 90.0, "max_cost_usd": 0.5, "priority": 2,
          "brief": "Do one.\n\n- carefully"}  # fmt: skip
    t2 = {"id": "t2", "objective": "two", "owns": ["src/x.py", "docs"], "gate": ["gpu"]}
    text = render("# Plan", [t1], [(PlanRoute("r1", "Route one", "no gain", 0), [t2])])
    parsed = parse(text)
    assert parsed.problems == [] and [t.problems for t in parsed.tasks] == [[], []]
    assert [(r.name, r.title, r.falsifier) for r in parsed.routes] == [("r1", "Route one", "no gain")]
    one, two = (t.data() for t in parsed.tasks)
    assert one == {**t1, "command": "python3 -c 'print('\"'\"'a b'\"'\"')'"}  # argv comes back as its text
    assert two == {**t2, "route": "r1"}
