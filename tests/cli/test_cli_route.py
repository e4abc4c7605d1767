"""control-room route add / list / show / kill / reopen / resume: the board, tombstones and holds."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from support import (
    ADD_ARGS,
    BROKEN_TOMB,
    FAIL,
    data_lines,
    entries,
    error,
    events,
    hold,
    ok,
    queue,
    set_gate,
    tomb,
)

from control_room import errors
from control_room.ledger.line import parse
from control_room.room.layout import Room

Run = Callable[..., Result]
PY = sys.executable
YAML_ERROR = "line 2: front matter is not valid YAML: expected ',' or ']', but got '<stream end>'"


def line_of(path: Path, text: str) -> int:
    """The 1-based line number of the line that is exactly ``text``."""
    return path.read_text().split("\n").index(text) + 1


def killed_at(text: str) -> str:
    found = re.search(r"^killed_at: '(.+)'$", text, re.MULTILINE)
    assert found is not None, text
    return found.group(1)


# add ----------------------------------------------------------------------------------------


def test_add_puts_an_untested_row_on_the_board_and_logs_it(run: Run, inside: Room) -> None:
    ok(run("route", "add", "faster", "--title", "Make it faster", "--falsifier", "no gain"),
       "route faster added (untested)\n")  # fmt: skip
    assert inside.routes.read_text().endswith(
        "|---|---|---|---|---|---|---|\n| faster | untested | Make it faster | 0 | 0 |  | no gain |\n"
    )
    assert events(inside.ledger) == ["init", "route-add"]
    added = entries(inside, "route-add")[0]
    assert (added.route, added.outcome, added.detail) == ("faster", "untested", "Make it faster")


def test_add_refuses_a_route_that_exists_and_a_bad_id(run: Run, inside: Room) -> None:
    ok(run("route", "add", "faster", "--title", "Make it faster"), "route faster added (untested)\n")
    board = inside.routes.read_text()
    n = line_of(inside.routes, "| faster | untested | Make it faster | 0 | 0 |  |  |")
    error(run("route", "add", "faster", "--title", "again"), 4,
          f"route faster exists already (control-room/ROUTES.md:{n})")  # fmt: skip
    error(run("route", "add", "Bad Id", "--title", "x"), 4,
          "'Bad Id' is not a route id (ids match [a-z0-9][a-z0-9._-]{0,63})")  # fmt: skip
    assert inside.routes.read_text() == board
    assert events(inside.ledger) == ["init", "route-add"]


def test_add_needs_a_title(run: Run, inside: Room) -> None:
    result = run("route", "add", "faster")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.endswith("Error: Missing option '--title'.\n")
    assert events(inside.ledger) == ["init"]


# list ---------------------------------------------------------------------------------------


def test_list_an_empty_board(run: Run, inside: Room) -> None:
    ok(run("route", "list"), "no routes yet (control-room route add ID --title ...)\n")
    ok(run("route"), "no routes yet (control-room route add ID --title ...)\n")
    ok(
        run("route", "list", "--json"),
        '{\n  "routes": [],\n  "held": [],\n  "problems": [],\n  "reviews": {}\n}\n',
    )


def test_list_names_a_broken_row_on_stderr_and_lists_the_rest(run: Run, inside: Room) -> None:
    run("route", "add", "faster", "--title", "Make it faster")
    run("route", "add", "slow", "--title", "Slow path", "--falsifier", "no gain")
    with inside.routes.open("a") as f:
        f.write("| bad row | maybe |\n")
    first = line_of(inside.routes, "| faster | untested | Make it faster | 0 | 0 |  |  |")
    bad = line_of(inside.routes, "| bad row | maybe |")
    assert bad == first + 2
    problems = [
        f"control-room/ROUTES.md:{bad}: 2 cells, the header has 7",
        f"control-room/ROUTES.md:{bad}: 'bad row' is not a route id",
        f"control-room/ROUTES.md:{bad}: verdict 'maybe' is not one of "
        "untested, alive, promising, killed, merged",
    ]
    blank = " " * 32  # an empty last_result column
    listing = (
        f"route                    verdict    runs  spend     last result{' ' * 22}title\n"
        f"faster                   untested      0  $0        -{blank}Make it faster\n"
        f"slow                     untested      0  $0        -{blank}Slow path\n"
        f"bad row                  maybe         0  $0        -\n"
    )
    for args in (("route", "list"), ("route",)):
        result = run(*args)
        assert (result.exit_code, result.stdout) == (0, listing)
        assert result.stderr == "".join(f"{p}\n" for p in problems)

    result = run("route", "list", "--json")
    assert (result.exit_code, result.stderr) == (0, "")
    empty = {"last_result": "", "falsifier": ""}
    assert json.loads(result.stdout) == {
        "routes": [
            {"route": "faster", "verdict": "untested", "title": "Make it faster", "attempts": "0",
             "spend_usd": "0", **empty, "line": first},
            {"route": "slow", "verdict": "untested", "title": "Slow path", "attempts": "0",
             "spend_usd": "0", "last_result": "", "falsifier": "no gain", "line": first + 1},
            {"route": "bad row", "verdict": "maybe", "title": "", "attempts": "", "spend_usd": "",
             **empty, "line": bad},
        ],
        "held": [],
        "problems": problems,
        "reviews": {},
    }  # fmt: skip
    assert events(inside.ledger) == ["init", "route-add", "route-add"]  # listing writes nothing


# show ---------------------------------------------------------------------------------------


def test_show_gives_the_row_the_tasks_in_every_state_and_the_history(run: Run, inside: Room) -> None:
    run("route", "add", "faster", "--title", "Make it faster", "--falsifier", "no gain")
    set_gate(inside, "max_rounds", "1")
    queue(inside, "t-pass", route="faster")
    assert run("cycle").exit_code == errors.PASSED
    queue(inside, "t-fail", route="faster", validator=FAIL)
    assert run("cycle").exit_code == errors.FAILED
    queue(inside, "t-wait", route="faster")
    queue(inside, "t-other", route="other")
    passed, failed = entries(inside, "result")
    day = failed.time[:10]
    history = (
        "2 attempts (1 passed, 1 failed), $0.00 spent.\n"
        f"Best: {passed.time[:10]} task t-pass passed: the command exited 0\n"
        f"- {failed.time[:16]} t-fail fail: the command exited 0 (failed: validator exited 1: took 40 ms)\n"
        f"- {passed.time[:16]} t-pass pass: the command exited 0"
    )
    ok(run("route", "show", "faster"), (
        "faster: alive  Make it faster\n"
        f"  attempts 2, spend $0, last fail t-fail {day}\n"
        "  falsifier: no gain\n"
        "tasks: t-wait (queue), t-pass (done), t-fail (parked)\n"
        f"\n{history}\n"
    ))  # fmt: skip

    result = run("route", "show", "faster", "--json")
    assert (result.exit_code, result.stderr) == (0, "")
    row = f"| faster | alive | Make it faster | 2 | 0 | fail t-fail {day} | no gain |"
    assert json.loads(result.stdout) == {
        "route": {"route": "faster", "verdict": "alive", "title": "Make it faster", "attempts": "2",
                  "spend_usd": "0", "last_result": f"fail t-fail {day}", "falsifier": "no gain",
                  "line": line_of(inside.routes, row)},
        "tasks": [["queue", "t-wait"], ["done", "t-pass"], ["parked", "t-fail"]],
        "history": history,
        "tombstone": None,
        "tombstone_problem": None,
    }  # fmt: skip


def test_show_a_route_with_nothing_yet(run: Run, inside: Room) -> None:
    run("route", "add", "faster", "--title", "Make it faster")
    ok(run("route", "show", "faster"),
       "faster: untested  Make it faster\n  attempts 0, spend $0, last -\ntasks: none\n")  # fmt: skip


def test_show_a_route_known_only_by_its_tombstone(run: Run, inside: Room) -> None:
    tomb(inside, "ghost").write_text(
        "---\ncandidate: ghost\nstate: killed\nverdict: never worked\nreopen_if: never\n---\n\n"
        "# ghost\n\nWritten by hand.\n"
    )
    ok(run("route", "show", "ghost"), (
        "tasks: none\n\nTombstone (graveyard/ghost.md, state killed):\n\n# ghost\n\nWritten by hand.\n"
    ))  # fmt: skip
    result = run("route", "show", "ghost", "--json")
    assert (result.exit_code, result.stderr) == (0, "")
    assert json.loads(result.stdout) == {
        "route": None,
        "tasks": [],
        "history": "Tombstone (graveyard/ghost.md, state killed):\n\n# ghost\n\nWritten by hand.",
        "tombstone": str(tomb(inside, "ghost")),
        "tombstone_problem": None,
    }


def test_show_says_when_the_tombstone_cannot_be_read(run: Run, inside: Room) -> None:
    tomb(inside, "broke").write_text(BROKEN_TOMB)
    ok(
        run("route", "show", "broke"),
        f"tasks: none\ntombstone: unreadable: {tomb(inside, 'broke')}: {YAML_ERROR}\n",
    )
    result = run("route", "show", "broke", "--json")
    assert json.loads(result.stdout)["tombstone_problem"] == f"{tomb(inside, 'broke')}: {YAML_ERROR}"


def test_show_an_unknown_route_or_a_bad_id(run: Run, inside: Room) -> None:
    unknown = "no route nope in control-room/ROUTES.md or graveyard/"
    error(run("route", "show", "nope"), 7, unknown)
    error(run("route", "show", "nope", "--json"), 7, unknown)
    error(run("route", "show", "Bad Id"), 4,
          "'Bad Id' is not a route id (ids match [a-z0-9][a-z0-9._-]{0,63})")  # fmt: skip


# kill ---------------------------------------------------------------------------------------


def test_kill_writes_the_tombstone_marks_the_board_and_refuses_new_tasks(run: Run, inside: Room) -> None:
    run("route", "add", "faster", "--title", "Make it faster", "--falsifier", "no gain over 3 runs")
    queue(inside, "faster-1", route="faster")
    ok(run("route", "kill", "faster", "--verdict", "no gain over 3 runs", "--reopen-if",
           "inputs grow past 50 MB", "--evidence", "faster-1"),
       "route faster killed: graveyard/faster.md\n")  # fmt: skip
    text = tomb(inside, "faster").read_text()
    assert text == (
        "---\ncandidate: faster\nstate: killed\n"
        f"killed_at: '{killed_at(text)}'\n"
        "verdict: no gain over 3 runs\nreopen_if: inputs grow past 50 MB\nevidence:\n- faster-1\n---\n\n"
        "# faster\n\n## What it was\n\nMake it faster\n\nIts falsifier: no gain over 3 runs\n\n"
        "## Why it died\n\nno gain over 3 runs\n\n## Reopen only if\n\ninputs grow past 50 MB\n\n"
        "## Evidence\n\n- task faster-1: swarm/results/faster-1/\n"
    )
    row = "| faster | killed | Make it faster | 0 | 0 |  | no gain over 3 runs |\n"
    assert row in inside.routes.read_text()
    assert events(inside.ledger) == ["init", "route-add", "route-kill"]
    kill = entries(inside, "route-kill")[0]
    assert (kill.route, kill.outcome, kill.detail) == (
        "faster", "killed", "no gain over 3 runs | reopen if: inputs grow past 50 MB",
    )  # fmt: skip

    error(run("task", "add", "--id", "faster-2", "--route", "faster", *ADD_ARGS), 4,
          "task refused: route faster is killed: see graveyard/faster.md (verdict: no gain over 3 runs; "
          "reopen if: inputs grow past 50 MB)")  # fmt: skip
    assert not (inside.state_dir("queue") / "faster-2.json").exists()

    body = text.split("---\n", 2)[2].strip()
    ok(run("route", "show", "faster"), (
        "faster: killed  Make it faster\n  attempts 0, spend $0, last -\n  falsifier: no gain over 3 runs\n"
        f"tasks: faster-1 (queue)\n\nTombstone (graveyard/faster.md, state killed):\n\n{body}\n"
    ))  # fmt: skip


def test_kill_a_route_not_on_the_board_adds_its_row(run: Run, inside: Room) -> None:
    ok(run("route", "kill", "ghost", "--verdict", "never worked", "--reopen-if", "never",
           "--what", "A guess"),
       "route ghost killed: graveyard/ghost.md\n")  # fmt: skip
    assert inside.routes.read_text().endswith("| ghost | killed |  |  |  |  |  |\n")
    assert "## What it was\n\nA guess\n\n## Why it died\n" in tomb(inside, "ghost").read_text()


def test_kill_refusals(run: Run, inside: Room) -> None:
    run("route", "add", "faster", "--title", "Make it faster")
    board = inside.routes.read_text()
    error(run("route", "kill", "faster", "--verdict", "no gain", "--reopen-if", "inputs grow",
              "--evidence", "ghost-9"), 7, f"no task ghost-9 in {inside.swarm}")  # fmt: skip
    error(run("route", "kill", "faster", "--verdict", "no gain", "--reopen-if", "   "), 4,
          "a kill needs both --verdict (why it died) and --reopen-if (what would revive it)")  # fmt: skip
    missing = run("route", "kill", "faster", "--verdict", "no gain")
    assert (missing.exit_code, missing.stdout) == (2, "")
    assert missing.stderr.endswith("Error: Missing option '--reopen-if'.\n")
    assert not tomb(inside, "faster").exists()
    assert inside.routes.read_text() == board
    assert events(inside.ledger) == ["init", "route-add"]


def test_killing_twice_exits_5_and_keeps_the_first_tombstone(run: Run, inside: Room) -> None:
    ok(run("route", "kill", "faster", "--verdict", "no gain", "--reopen-if", "inputs grow"),
       "route faster killed: graveyard/faster.md\n")  # fmt: skip
    first = tomb(inside, "faster").read_text()
    error(run("route", "kill", "faster", "--verdict", "again", "--reopen-if", "never"), 5,
          "route faster is killed already (graveyard/faster.md)")  # fmt: skip
    assert tomb(inside, "faster").read_text() == first
    assert events(inside.ledger) == ["init", "route-kill"]


@pytest.mark.parametrize(
    "args",
    [
        ("route", "kill", "broke", "--verdict", "v", "--reopen-if", "r"),
        ("route", "reopen", "broke", "--because", "b"),
    ],
)
def test_a_broken_tombstone_is_one_error_line_naming_file_and_line(
    run: Run, inside: Room, args: tuple[str, ...]
) -> None:
    tomb(inside, "broke").write_text(BROKEN_TOMB)
    board = inside.routes.read_text()
    result = run(*args)
    assert (result.exit_code, result.stdout) == (4, "")
    assert result.stderr == f"Error: {tomb(inside, 'broke')}: {YAML_ERROR}\n"
    assert "Traceback" not in result.stderr
    assert tomb(inside, "broke").read_text() == BROKEN_TOMB
    assert inside.routes.read_text() == board
    assert events(inside.ledger) == ["init"]


# reopen -------------------------------------------------------------------------------------


def test_reopen_keeps_the_tombstone_and_lets_tasks_in_again(run: Run, inside: Room) -> None:
    run("route", "add", "faster", "--title", "Make it faster")
    run("route", "kill", "faster", "--verdict", "no gain", "--reopen-if", "inputs grow")
    killed = tomb(inside, "faster").read_text()
    ok(run("route", "reopen", "faster", "--because", "inputs grew to 120 MB"),
       "route faster reopened; its tasks run again\n")  # fmt: skip
    text = tomb(inside, "faster").read_text()
    when = entries(inside, "route-reopen")[0]
    found = re.search(r"^reopened_at: '(.+)'$", text, re.MULTILINE)
    assert found is not None
    at = found.group(1)
    head, body = killed.split("\n---\n", 1)
    assert text == (
        head.replace("state: killed", "state: reopened")
        + f"\nreopened_at: '{at}'\n---\n"
        + body.rstrip()
        + f"\n\n## Reopened {at}\n\ninputs grew to 120 MB\n"
    )
    assert "| faster | alive | Make it faster | 0 | 0 |  |  |\n" in inside.routes.read_text()
    assert (when.route, when.outcome, when.detail) == ("faster", "reopened", "inputs grew to 120 MB")
    assert events(inside.ledger) == ["init", "route-add", "route-kill", "route-reopen"]
    assert run("task", "add", "--id", "faster-2", "--route", "faster", *ADD_ARGS).exit_code == 0

    error(run("route", "reopen", "faster", "--because", "again"), 5,
          "route faster is not killed (graveyard/faster.md says it was reopened)")  # fmt: skip
    ok(run("route", "kill", "faster", "--verdict", "still no gain", "--reopen-if", "never"),
       "route faster killed: graveyard/faster.md\n")  # fmt: skip
    again = tomb(inside, "faster").read_text()
    now = killed_at(again)
    assert again.endswith(
        f"## Reopened {at}\n\ninputs grew to 120 MB\n\n## Killed again {now}\n\nstill no gain\n\n"
        "Reopen only if: never\n"
    )
    assert "state: killed\n" in again and "reopened_at" not in again


def test_reopen_refusals(run: Run, inside: Room) -> None:
    error(run("route", "reopen", "nope", "--because", "b"), 7,
          "route nope has no tombstone (graveyard/nope.md)")  # fmt: skip
    run("route", "kill", "faster", "--verdict", "no gain", "--reopen-if", "inputs grow")
    error(run("route", "reopen", "faster", "--because", "  "), 4,
          "a reopen needs --because: which reopen_if condition now holds")  # fmt: skip
    missing = run("route", "reopen", "faster")
    assert (missing.exit_code, missing.stdout) == (2, "")
    assert missing.stderr.endswith("Error: Missing option '--because'.\n")
    assert "state: killed\n" in tomb(inside, "faster").read_text()
    assert events(inside.ledger) == ["init", "route-kill"]


# resume -------------------------------------------------------------------------------------


def test_resume_of_a_route_that_is_not_held(run: Run, inside: Room) -> None:
    run("route", "add", "faster", "--title", "Make it faster")
    error(run("route", "resume", "faster", "--because", "x"), 5, "faster is not held: no death loop on it")
    assert events(inside.ledger) == ["init", "route-add"]


def test_resume_releases_a_death_loop(run: Run, inside: Room) -> None:
    set_gate(inside, "max_rounds", "1")
    hold(run, inside, "memo")
    assert events(inside.ledger).count("death-loop") == 1
    queue(inside, "memo-4", route="memo")
    ok(run("cycle"), "nothing to do: 1 queued task not ready: memo-4 waits for `control-room route resume "
       "memo`: a death loop (3 identical failures)\n")  # fmt: skip

    error(run("route", "resume", "memo", "--because", "  "), 4,
          "releasing a held route needs --because: what changed")  # fmt: skip
    ok(run("route", "resume", "memo", "--because", "memo-4 uses an lru_cache"),
       "memo released; its tasks run again\n")  # fmt: skip
    resumed = parse(data_lines(inside.ledger)[-1])
    assert resumed is not None
    assert (resumed.event, resumed.route, resumed.task, resumed.outcome, resumed.detail) == (
        "route-resume", "memo", "", "released", "memo-4 uses an lru_cache",
    )  # fmt: skip
    error(run("route", "resume", "memo", "--because", "again"), 5, "memo is not held: no death loop on it")
    result = run("cycle")
    assert result.exit_code == errors.PASSED
    assert result.stdout.startswith("passed: memo-4 (round 1; ")


def test_list_shows_a_held_route_as_held_until_it_is_resumed(run: Run, inside: Room) -> None:
    run("route", "add", "memo", "--title", "Memoize it")
    run("route", "add", "sieve", "--title", "Use a sieve")
    hold(run, inside, "memo")
    day = entries(inside, "result")[-1].time[:10]
    head = f"route                    verdict    runs  spend     last result{' ' * 22}title\n"
    sieve = f"sieve                    untested      0  $0        -{' ' * 32}Use a sieve\n"
    memo = f"memo                     {{}}         3  $0        {f'fail memo-3 {day}':<32} Memoize it\n"
    ok(run("route", "list"), head + memo.format("held ") + sieve)
    listed = json.loads(run("route", "list", "--json").stdout)
    assert (listed["held"], listed["routes"][0]["verdict"]) == (["memo"], "alive")  # the file's cell
    run("route", "resume", "memo", "--because", "a new cache key")
    ok(run("route", "list"), head + memo.format("alive") + sieve)
    assert json.loads(run("route", "list", "--json").stdout)["held"] == []


def test_list_with_a_broken_control_md_still_shows_holds(run: Run, inside: Room) -> None:
    """death_loop_n falls back to its default, as in `status`: the board stays readable."""
    hold(run, inside, "memo")
    inside.control.write_text("---\nmax_parallel: [\n---\n")
    result = run("route", "list")
    assert (result.exit_code, result.stdout.splitlines()[1].split()[:2]) == (0, ["memo", "held"])


def test_recount_puts_back_the_cycles_cells_from_the_ledger_and_writes_no_ledger_line(
    run: Run, inside: Room
) -> None:
    assert run("route", "add", "r1", "--title", "first").exit_code == 0
    queue(inside, "t1", route="r1")
    queue(inside, "t2", route="r1", validator=FAIL)
    assert run("cycle").exit_code == errors.PASSED
    assert run("cycle").exit_code == errors.FAILED
    right = inside.routes.read_text()
    ok(run("route", "recount"), "ROUTES.md already agrees with the ledger\n")
    assert inside.routes.read_text() == right
    inside.routes.write_text(
        right.replace("| r1 | alive | first | 2 | 0 | fail t2 ", "| r1 | alive | first | 5 | 3 | pass t9 ")
    )
    lines = data_lines(inside.ledger)
    ok(run("route", "recount"), "recounted from the ledger: r1\n")
    assert inside.routes.read_text() == right
    assert data_lines(inside.ledger) == lines  # a view refresh: no ledger line
