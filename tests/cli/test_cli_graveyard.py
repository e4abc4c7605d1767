"""control-room graveyard list / show: every tombstone, its state and verdict, and one printed whole."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from click.testing import Result
from support import BROKEN_TOMB, events, no_room_error, ok, tomb

from control_room.room.layout import Room

Run = Callable[..., Result]


def kill(run: Run, room: Room, route: str, verdict: str) -> str:
    """Kill ``route`` through the CLI; its tombstone's killed_at."""
    ok(run("route", "kill", route, "--verdict", verdict, "--reopen-if", "inputs grow"),
       f"route {route} killed: graveyard/{route}.md\n")  # fmt: skip
    found = re.search(r"^killed_at: '(.+)'$", tomb(room, route).read_text(), re.MULTILINE)
    assert found is not None
    return found.group(1)


def test_an_empty_graveyard(run: Run, inside: Room) -> None:
    assert (inside.root / "graveyard" / "README.md").exists()  # the folder's guide is no tombstone
    ok(run("graveyard"), "the graveyard is empty\n")
    ok(run("graveyard", "list"), "the graveyard is empty\n")
    ok(run("graveyard", "list", "--json"), "[]\n")


def test_list_after_kills_and_a_reopen(run: Run, inside: Room) -> None:
    at = kill(run, inside, "parse-cache", "no gain over 3 runs")
    ghost_at = kill(run, inside, "ghost", "never worked")
    listing = (
        f"ghost                    killed    {ghost_at[:10]}  never worked\n"
        f"parse-cache              killed    {at[:10]}  no gain over 3 runs\n"
    )
    ok(run("graveyard"), listing)
    ok(run("graveyard", "list"), listing)

    run("route", "reopen", "parse-cache", "--because", "inputs grew")
    ok(run("graveyard", "list"), (
        f"ghost                    killed    {ghost_at[:10]}  never worked\n"
        f"parse-cache              reopened  {at[:10]}  no gain over 3 runs\n"
    ))  # fmt: skip
    result = run("graveyard", "list", "--json")
    assert (result.exit_code, result.stderr) == (0, "")
    stones = json.loads(result.stdout)
    reopened_at = stones[1].pop("reopened_at")
    assert f"\nreopened_at: '{reopened_at}'\n" in tomb(inside, "parse-cache").read_text()
    assert stones == [
        {"candidate": "ghost", "state": "killed", "killed_at": ghost_at, "verdict": "never worked",
         "reopen_if": "inputs grow", "evidence": []},
        {"candidate": "parse-cache", "state": "reopened", "killed_at": at, "verdict": "no gain over 3 runs",
         "reopen_if": "inputs grow", "evidence": []},
    ]  # fmt: skip
    assert events(inside.ledger) == ["init", "route-kill", "route-kill", "route-reopen"]


def test_an_unreadable_tombstone_is_listed_with_its_problem(run: Run, inside: Room) -> None:
    at = kill(run, inside, "faster", "no gain")
    tomb(inside, "broke").write_text(BROKEN_TOMB)
    problem = (
        f"{tomb(inside, 'broke')}: line 2: front matter is not valid YAML: expected ',' or ']', "
        "but got '<stream end>'"
    )
    ok(run("graveyard", "list"), (
        f"broke                    unreadable   {problem}\n"
        f"faster                   killed    {at[:10]}  no gain\n"
    ))  # fmt: skip
    result = run("graveyard", "list", "--json")
    assert (result.exit_code, result.stderr) == (0, "")
    assert json.loads(result.stdout)[0] == {"candidate": "broke", "state": "unreadable", "problem": problem}


def test_show_prints_the_tombstone_exactly(run: Run, inside: Room) -> None:
    kill(run, inside, "faster", "no gain")
    with tomb(inside, "faster").open("a") as f:
        f.write("\nA note added by hand: the profile is in bench/out/.\n")
    ok(run("graveyard", "show", "faster"), tomb(inside, "faster").read_text())
    tomb(inside, "broke").write_text(BROKEN_TOMB)
    ok(run("graveyard", "show", "broke"), BROKEN_TOMB)  # printed as it is, even unreadable


def test_show_a_route_without_a_tombstone(run: Run, inside: Room) -> None:
    result = run("graveyard", "show", "nope")
    assert (result.exit_code, result.stdout, result.stderr) == (
        7, "", "Error: route nope has no tombstone (graveyard/nope.md)\n",
    )  # fmt: skip
    result = run("graveyard", "show", "Bad Id")
    assert (result.exit_code, result.stdout, result.stderr) == (
        4, "", "Error: 'Bad Id' is not a route id (ids match [a-z0-9][a-z0-9._-]{0,63})\n",
    )  # fmt: skip


def test_outside_a_room(run: Run, tmp_path: Path) -> None:
    for args in (("graveyard",), ("graveyard", "show", "x")):
        result = run(*args)
        assert (result.exit_code, result.stdout, result.stderr) == (3, "", no_room_error(tmp_path))


def test_a_tombstone_of_any_shape_is_listed_under_its_files_name(run: Run, inside: Room) -> None:
    """Found by the fuzz tests: `candidate: null` (or a state that is a list) made `graveyard`
    die on a format string, and a date in a list made `--json` die; the file names the route."""
    tomb(inside, "r1").write_text("---\ncandidate: null\nstate: [1]\nevidence: [2024-01-02]\n---\n")
    ok(run("graveyard"), f"{'r1':<24} {'[1]':<9}   \n")
    listed = run("graveyard", "list", "--json")
    assert listed.exit_code == 0
    assert json.loads(listed.stdout) == [{"state": [1], "evidence": ["2024-01-02"], "candidate": "r1"}]
