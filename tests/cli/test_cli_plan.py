"""control-room plan import / export: a markdown plan into routes and tasks through admission,
all or nothing, idempotently; the queue back into a plan that imports as it is."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import Result
from support import entries, error, ok, task_json, unsealed, where

from control_room import errors
from control_room.room import scaffold
from control_room.room.layout import Room

Run = Callable[..., Result]
NOTHING = "; nothing was written"
VIBE = "(a task that cannot state its falsifier is a vibe, not a task)"


def fields(tid: str, **over: str) -> str:
    base = {
        "objective": f"do {tid}",
        "falsifier": f"{tid} shows no gain",
        "validator": "python3 check.py",
        "max_cost_usd": "1",
        "wall_clock_s": "10m",
        "kill_condition": "two rounds without gain",
        "command": "true",
        **over,
    }
    return "\n".join(f"{k}: {v}" for k, v in base.items() if v)


def twenty() -> str:
    """A plan of 20 tasks: 4 of no route, then 8 on each of two routes; deps chain each route
    and reach across; each route task owns its own paths; each task has a brief."""
    parts = ["# Plan: a faster parser", "", "What we want and why.", ""]
    for i in range(4):
        deps = f"\ndeps: prep-{i - 1}" if i else ""
        parts += [f"### prep-{i}", fields(f"prep-{i}") + deps, "", f"Brief of prep-{i}.", ""]
    for route, title in (("parse", "A faster parser"), ("cache", "Cache the parsed config")):
        parts += [f"## {route} — {title}", f"Falsifier: {route} brings no gain over 3 runs", ""]
        for i in range(8):
            tid = f"{route}-{i}"
            deps = f"{route}-{i - 1}" if i else "prep-3"
            parts += [f"### {tid}", "- " + fields(tid).replace("\n", "\n- "), f"- deps: {deps}",
                      f"- owns: src/{tid}.py, tests/test_{tid}.py", "",
                      f"Brief of {tid}:", "", "- keep it small", ""]  # fmt: skip
    return "\n".join(parts)


def write(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


def room_files(root: Path) -> dict[Path, bytes]:
    """Every file of the room but caches and locks (hidden names), and their bytes."""
    files = (p for p in root.rglob("*") if p.is_file())
    return {p: p.read_bytes() for p in files if not any(s.startswith(".") for s in p.relative_to(root).parts)}


def queued(room: Room) -> dict[str, dict[str, Any]]:
    return {p.stem: json.loads(p.read_text()) for p in room.state_dir("queue").glob("*.json")}


def test_a_twenty_task_plan_with_deps_owns_and_two_routes_imports(run: Run, inside: Room) -> None:
    result = run("plan", "import", write(inside.root / "PLAN.md", twenty()))
    assert (result.exit_code, result.stderr) == (0, "")
    lines = result.stdout.splitlines()
    assert lines[0] == "PLAN.md: 20 tasks on 2 routes"
    assert lines[1] == "(no route)"
    assert lines[6] == "## parse — A faster parser  (new route)"
    assert lines[7] == "  parse-0  add        do parse-0  [after prep-3]"
    assert lines[15] == "## cache — Cache the parsed config  (new route)"
    assert lines[-1] == "20 added, 0 updated, 0 unchanged, 0 kept as they are"
    tasks = queued(inside)
    assert len(tasks) == 20
    t = unsealed(tasks["cache-3"])
    assert {k: v for k, v in t.items() if k not in ("created", "plan_hash")} == {
        "id": "cache-3",
        "objective": "do cache-3",
        "falsifier": "cache-3 shows no gain",
        "validator": "python3 check.py",
        "max_cost_usd": 1.0,
        "wall_clock_s": 600.0,
        "kill_condition": "two rounds without gain",
        "route": "cache",
        "deps": ["cache-2"],
        "owns": ["src/cache-3.py", "tests/test_cache-3.py"],
        "command": "true",
        "brief": "Brief of cache-3:\n\n- keep it small",
        "plan": "PLAN.md",
    }
    assert len(t["plan_hash"]) == 16
    assert tasks["prep-0"].get("route") is None and tasks["prep-0"]["brief"] == "Brief of prep-0."
    routes = (inside.cr / "ROUTES.md").read_text()
    assert "| parse | untested | A faster parser |" in routes
    assert "parse brings no gain over 3 runs" in routes
    assert [e.route for e in entries(inside, "route-add")] == ["parse", "cache"]
    added = [e.task for e in entries(inside, "task-add")]
    assert len(added) == 20 and added.index("parse-0") > added.index("prep-3")
    assert [e.detail for e in entries(inside, "plan-import")] == [
        "PLAN.md: 20 added, 0 updated, 0 unchanged, 0 kept as they are"
    ]
    listed = run("task", "list", "--state", "queue")
    assert "ready" in listed.stdout and "prep-0" in listed.stdout  # the queue scan keeps them all
    assert "PROBLEM" not in listed.stdout


def test_the_dry_run_shows_the_tree_and_writes_nothing(run: Run, inside: Room) -> None:
    plan = write(inside.root.parent / "PLAN.md", twenty())
    before = room_files(inside.root)
    result = run("plan", "import", plan, "--dry-run")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout.splitlines()[-1] == (
        "dry run: 20 to add, 0 to update, 0 unchanged, 0 kept as they are; nothing was written"
    )
    assert "  prep-1   add        do prep-1  [after prep-0]" in result.stdout.splitlines()
    assert room_files(inside.root) == before
    as_json = json.loads(run("plan", "import", plan, "--dry-run", "--json").stdout)
    assert as_json["counts"] == {"add": 20, "update": 0, "unchanged": 0, "kept": 0}
    assert as_json["routes"] == [
        {"route": "parse", "title": "A faster parser", "new": True},
        {"route": "cache", "title": "Cache the parsed config", "new": True},
    ]
    assert as_json["tasks"][4] == {"id": "parse-0", "route": "parse", "action": "add", "why": ""}
    assert room_files(inside.root) == before


def test_a_plan_with_three_vague_tasks_is_refused_naming_all_three(run: Run, inside: Room) -> None:
    plan = "\n".join([
        "## loose — Loose ideas", "Falsifier: nothing improves", "",
        "### fine", fields("fine"), "",
        "### vague-1", fields("vague-1", falsifier=""), "",
        "### vague-2", "objective: make it better", "",
        "### vague-3", fields("vague-3", falsifier="", kill_condition=""), "",
    ])  # fmt: skip
    path = write(inside.root / "PLAN.md", plan)
    before = room_files(inside.root)
    result = run("plan", "import", path)
    error(
        result,
        errors.INVALID,
        "plan refused: PLAN.md: 3 problems: "
        f"task vague-1 (PLAN.md:13): missing falsifier {VIBE}; "
        "task vague-2 (PLAN.md:21): missing falsifier, validator, max_cost_usd, wall_clock_s, "
        f"kill_condition {VIBE}; "
        f"task vague-3 (PLAN.md:24): missing falsifier, kill_condition {VIBE}{NOTHING}",
    )
    assert room_files(inside.root) == before


def test_every_problem_is_listed_cycles_unknown_deps_fields_and_routes(run: Run, inside: Room) -> None:
    plan = "\n".join([
        "### a", fields("a"), "deps: b", "",
        "### b", fields("b"), "deps: a", "",
        "### c", fields("c", max_cost_usd="cheap", wall_clock_s="soon"), "colour: red", "",
        "### d", fields("d"), "deps: nope", "",
        "## new-route — Without a falsifier", "",
        "### e", fields("e"), "",
        "### e", fields("e"), "",
        "### Bad_Id", fields("x"), "",
    ])  # fmt: skip
    path = write(inside.root / "PLAN.md", plan)
    before = room_files(inside.root)
    result = run("plan", "import", path)
    assert (result.exit_code, result.stdout) == (errors.INVALID, "")
    assert result.stderr == (
        "Error: plan refused: PLAN.md: 9 problems: "
        "PLAN.md:52: task e is in the plan twice (also line 43); "
        "task c (PLAN.md:21): max_cost_usd 'cheap' is not a number (USD); "
        "task c (PLAN.md:21): wall_clock_s: not a duration: 'soon' (try 90, 90s, 30m, 1h); "
        "task c (PLAN.md:21): colour is not a task field (a plan sets: objective, falsifier, validator, "
        "max_cost_usd, wall_clock_s, kill_condition, role, adapter, model, fallback, deps, owns, gate, "
        "priority, max_turns, extra_args, command, review); "
        "task d (PLAN.md:31): deps names nope, which is not a task in any swarm folder: it could never be "
        "ready; "
        "task Bad_Id (PLAN.md:61): the id after ### must match [a-z0-9][a-z0-9._-]{0,63}: 'Bad_Id'; "
        "route new-route (PLAN.md:41): not in ROUTES.md, and no `Falsifier:` line under its heading: a new "
        "route needs one; "
        "task a: deps form a cycle: a -> b -> a (no task in it could ever be ready); "
        "task b: deps form a cycle: b -> a -> b (no task in it could ever be ready)"
        f"{NOTHING}\n"
    )
    assert room_files(inside.root) == before


ADD = ["--objective", "o", "--falsifier", "f", "--validator", "true", "--max-cost", "1",
       "--wall-clock", "60", "--kill-condition", "k", "--command", "true"]  # fmt: skip


def small(objectives: dict[str, str], extra: str = "") -> str:
    parts = ["## work — The work", "Falsifier: the work is useless", ""]
    for tid, objective in objectives.items():
        parts += [f"### {tid}", fields(tid, objective=objective), ""]
    return "\n".join(parts) + extra


def test_re_import_after_an_edit_changes_only_untouched_queued_tasks(run: Run, inside: Room) -> None:
    first = {"t1": "one", "t2": "two", "t3": "three", "t4": "four", "t5": "five"}
    plan = inside.root / "PLAN.md"
    assert run("plan", "import", write(plan, small(first))).exit_code == 0
    assert run("task", "add", "--id", "t6", "--route", "work", *ADD).exit_code == 0  # not imported
    q = inside.state_dir("queue")
    edited = json.loads((q / "t2.json").read_text())
    edited["objective"] = "two, as a person put it"
    (q / "t2.json").write_text(json.dumps(edited))  # a person's edit
    ran = json.loads((q / "t3.json").read_text())
    (q / "t3.json").write_text(json.dumps({**ran, "rounds": 1, "last_failure": "validator exited 1"}))
    assert run("task", "park", "t4").exit_code == 0
    parked = (inside.state_dir("parked") / "t4.json").read_bytes()
    t5 = (q / "t5.json").read_bytes()

    second = {k: v + " (v2)" for k, v in first.items()} | {"t5": "five", "t6": "six", "t7": "seven"}
    result = run("plan", "import", write(plan, small(second)))
    ok(
        result,
        "PLAN.md: 7 tasks on 1 route\n"
        "## work — The work\n"
        "  t1  update     one (v2)\n"
        "  t2  kept       edited or run since it was imported: left as it is\n"
        "  t3  kept       edited or run since it was imported: left as it is\n"
        "  t4  kept       in swarm/parked/: it ran; the plan's version is not applied\n"
        "  t5  unchanged  five\n"
        "  t6  kept       queued, but not by a plan import: left as it is\n"
        "  t7  add        seven\n"
        "1 added, 1 updated, 1 unchanged, 4 kept as they are\n",
    )
    now = queued(inside)
    assert now["t1"]["objective"] == "one (v2)" and now["t7"]["objective"] == "seven"
    assert now["t2"]["objective"] == "two, as a person put it"
    assert now["t3"]["objective"] == "three" and now["t3"]["rounds"] == 1
    assert now["t6"]["objective"] == "o"
    assert (q / "t5.json").read_bytes() == t5
    assert (inside.state_dir("parked") / "t4.json").read_bytes() == parked
    assert where(inside, "t4") == ["parked"]
    assert [e.detail for e in entries(inside, "plan-import")][-1] == (
        "PLAN.md: 1 added, 1 updated (t1), 1 unchanged, 4 kept as they are: "
        "t2 (edited or run since it was imported: left as it is); "
        "t3 (edited or run since it was imported: left as it is); "
        "t4 (in swarm/parked/: it ran; the plan's version is not applied); "
        "t6 (queued, but not by a plan import: left as it is)"
    )
    # t1, updated, is untouched again: the next import may update it again
    third = run("plan", "import", write(plan, small({"t1": "one (v3)"})))
    assert (third.exit_code, task_json(inside, "queue", "t1")["objective"]) == (0, "one (v3)")


def test_export_then_import_round_trips(run: Run, inside: Room, tmp_path: Path) -> None:
    assert run("plan", "import", write(inside.root / "PLAN.md", twenty())).exit_code == 0
    out = tmp_path / "exported.md"
    result = run("plan", "export", "--out", str(out))
    ok(result, f"wrote 20 tasks on 2 routes to {out}\n")
    text = out.read_text()
    assert text.startswith("# Plan\n")
    assert "## parse — A faster parser\nFalsifier: parse brings no gain over 3 runs\n" in text
    assert run("plan", "export").stdout == text  # stdout by default

    # into a fresh room: the same tasks, and the same export
    other = Room(tmp_path / "other")
    scaffold.init(other.root)
    assert run("--room", str(other.root), "plan", "import", str(out)).exit_code == 0
    assert run("--room", str(other.root), "plan", "export").stdout == text
    mine = {k: v for k, v in queued(inside).items()}
    theirs = queued(other)
    skip = ("created", "plan", "plan_hash", "seal")  # the hashes cover `created`, the time of each import
    assert {k: {f: v for f, v in t.items() if f not in skip} for k, t in theirs.items()} == {
        k: {f: v for f, v in t.items() if f not in skip} for k, t in mine.items()
    }
    # into the room it came from: nothing to do
    again = run("plan", "import", str(out))
    assert again.stdout.splitlines()[-1] == "0 added, 0 updated, 20 unchanged, 0 kept as they are"


def test_import_of_a_missing_file_and_onto_a_killed_route(run: Run, inside: Room) -> None:
    error(run("plan", "import", "nope.md"), errors.NOT_FOUND, "no plan file nope.md")
    plan = inside.root / "PLAN.md"
    assert run("route", "add", "dead", "--title", "A dead end").exit_code == 0
    assert run("route", "kill", "dead", "--verdict", "slower", "--reopen-if", "never").exit_code == 0
    result = run("plan", "import", write(plan, "## dead\n\n### d1\n" + fields("d1") + "\n"))
    assert result.exit_code == errors.INVALID
    assert result.stderr.startswith(
        "Error: plan refused: PLAN.md: 1 problem: task d1 (PLAN.md:3): route dead is killed"
    )


def test_the_installed_command_imports_and_exports(
    cr: Callable[..., Any], room: Room, tmp_path: Path
) -> None:
    plan = write(tmp_path / "PLAN.md", small({"a1": "first", "a2": "second"}))
    dry = cr("plan", "import", plan, "--dry-run", "--json")
    assert (dry.returncode, dry.stderr) == (0, "")
    assert json.loads(dry.stdout)["counts"] == {"add": 2, "update": 0, "unchanged": 0, "kept": 0}
    assert where(room, "a1") == []
    done = cr("plan", "import", plan)
    assert (done.returncode, done.stdout.splitlines()[-1]) == (
        0,
        "2 added, 0 updated, 0 unchanged, 0 kept as they are",
    )
    exported = cr("plan", "export")
    assert (
        exported.returncode == 0 and "## work — The work\nFalsifier: the work is useless\n" in exported.stdout
    )
    refused = cr("plan", "import", write(tmp_path / "BAD.md", "### b1\nobjective: vague\n"))
    assert refused.returncode == errors.INVALID and refused.stderr.startswith(
        "Error: plan refused: BAD.md: 1 problem:"
    )
