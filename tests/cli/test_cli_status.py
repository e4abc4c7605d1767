"""control-room status"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from support import ADD_ARGS, data_lines, git, lineno, no_room_error, queue, set_gate

from control_room import errors
from control_room.dispatch.round import claims
from control_room.dispatch.worktrees import worktree
from control_room.ledger.line import HEADER, PREAMBLE
from control_room.room import scaffold
from control_room.room import settings as settings_file
from control_room.room.layout import Room
from control_room.views import status

Run = Callable[..., Result]
PY = sys.executable
FAKES = Path(__file__).parent.parent / "fakes"


def test_status_on_one_screen(run: Run, inside: Room) -> None:
    result = run("status")
    assert (result.exit_code, result.stderr) == (0, "")
    lines = result.stdout.split("\n")
    assert lines[:8] == [
        f"room      {inside.root}",
        "STOP      no",
        "tasks     queue 0 · running 0 · done 0 · parked 0 · rejected 0 · cancelled 0",
        "routes    none yet",
        "spend     $0.00 today of $10.00 daily budget (0%)",
        "findings  0",
        "ledger    1 line; last:",
        lines[7],
    ]
    plan = scaffold.plan()
    n_files, n_dirs = sum(not i.is_dir for i in plan), sum(i.is_dir for i in plan)
    assert lines[7].startswith("  20")
    assert lines[7].endswith(f"  init  ok  created {n_files} files, {n_dirs} folders")
    assert lines[8:] == [""]


def test_status_json(run: Run, inside: Room) -> None:
    run("task", "add", "--id", "t1", *ADD_ARGS)
    run("stop", "--reason", "checking")
    result = run("status", "--json")
    assert (result.exit_code, result.stderr) == (0, "")
    data = json.loads(result.stdout)
    assert list(data) == ["room", "stop", "ledger_error", "warnings", "tasks", "routes", "daily_budget_usd",
                          "control_error", "spend_today_usd", "ledger_lines", "history", "findings", "held",
                          "waiting", "running", "merging", "cooling", "last"]  # fmt: skip
    assert data["room"] == str(inside.root)
    assert data["stop"].startswith("STOP created ") and data["stop"].endswith(" by tester reason: checking")
    assert data["tasks"] == {"queue": 1, "running": 0, "passed": 0, "to-test": 0, "done": 0, "parked": 0,
                             "rejected": 0, "cancelled": 0}  # fmt: skip
    assert (data["routes"], data["daily_budget_usd"], data["control_error"]) == ({}, 10.0, None)
    assert (data["spend_today_usd"], data["ledger_lines"], data["findings"]) == (0.0, 3, 0)
    assert data["waiting"] == []  # t1 is ready
    assert [(e["event"], e["task"], e["outcome"], e["writer"]) for e in data["last"]] == [
        ("init", "", "ok", "tester"),
        ("task-add", "t1", "queued", "tester"),
        ("stop", "", "stopped", "tester"),
    ]


def test_status_when_stopped(run: Run, inside: Room) -> None:
    (inside.root / "STOP").write_text("gone fishing\n")
    result = run("status")
    assert result.exit_code == 0
    assert result.stdout.split("\n")[1] == "STOP      YES - every cycle halts: gone fishing"


def test_status_with_a_broken_gate_still_shows_the_room(run: Run, inside: Room) -> None:
    inside.control.write_text("---\nmax_parallel: many\n---\n")
    result = run("status")
    assert result.exit_code == 0
    lines = result.stdout.split("\n")
    assert lines[4] == "spend     $0.00 today"
    assert lines[5] == (
        f"gate      BROKEN: {inside.control}: max_parallel must be a positive integer (got 'many')"
    )


def test_status_outside_a_room(run: Run, tmp_path: Path) -> None:
    result = run("status")
    assert (result.exit_code, result.stdout, result.stderr) == (3, "", no_room_error(tmp_path))


def test_status_of_a_folder_that_is_not_a_room(run: Run, tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    result = run("status", "--room", "plain")
    assert (result.exit_code, result.stdout) == (3, "")
    assert result.stderr == (
        "Error: plain: not a control room (no control-room/ folder); "
        "create one with `control-room init plain`\n"
    )


@pytest.mark.parametrize(
    "args",
    [["--room", "room", "status"], ["status", "--room", "room"]],
    ids=["before", "after"],
)
def test_room_option_before_and_after_the_command(run: Run, room: Room, args: list[str]) -> None:
    result = run(*args)
    assert (result.exit_code, result.stdout.split("\n")[0]) == (0, f"room      {room.root}")


def test_room_from_the_environment(run: Run, room: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONTROL_ROOM", str(room.root))
    result = run("status")
    assert (result.exit_code, result.stdout.split("\n")[0]) == (0, f"room      {room.root}")


def test_status_from_a_nested_folder(run: Run, room: Room) -> None:
    os.chdir(room.root / "swarm" / "queue")
    assert run("status").stdout.split("\n")[0] == f"room      {room.root}"


# a running task and its claim (a fault of the room is never the task's: what a person sees) --


def test_a_running_task_counts_once_and_its_claim_is_no_task(
    run: Run, exe: str, inside: Room, tmp_path: Path
) -> None:
    """A real cycle claims a task (running/slow6.json and running/slow6.claim); status and task
    list see one running task and no `.claim` row."""
    pidfile, ready = tmp_path / "grandchild.pid", tmp_path / "ready"
    queue(inside, "slow6", command=[PY, str(FAKES / "sleeper.py"), "--pidfile", str(pidfile),
                                    "--ready", str(ready)], priority=1)  # fmt: skip
    queue(inside, "next", deps=["slow6"])
    env = {**os.environ, "CONTROL_ROOM": str(inside.root)}
    proc = subprocess.Popen([exe, "cycle"], cwd=inside.root, env=env, stdout=subprocess.PIPE, text=True)
    try:
        end = time.monotonic() + 60
        while not ready.exists():
            assert proc.poll() is None, "the cycle ended before its agent was ready"
            assert time.monotonic() < end, "the agent never became ready"
            time.sleep(0.05)
        assert sorted(os.listdir(inside.state_dir("running"))) == ["slow6.claim", "slow6.json"]
        shown = run("status")
        assert (shown.exit_code, shown.stderr) == (0, "")
        claimed = json.loads((inside.state_dir("running") / "slow6.claim").read_text())["started"]
        assert shown.stdout.split("\n")[2:7] == [
            "tasks     queue 1 · running 1 · done 0 · parked 0 · rejected 0 · cancelled 0",
            f"running   slow6  on {claims.host(inside)}, since {claimed}",
            "waiting   1 of 1 queued:",
            "  next  waits for dep slow6 (running)",
            "routes    none yet",
        ]
        assert json.loads(run("status", "--json").stdout)["tasks"]["running"] == 1
        listed = run("task", "list")
        assert (listed.exit_code, listed.stderr) == (0, "")
        waits = "waits for dep slow6 (running)"
        w = len(waits)
        assert listed.stdout == (
            f"{'state':<9} {'id':<32} {'pri':>4}  {'route':<16} {'ready':<{w}}  objective\n"
            f"{'queue':<9} {'next':<32} {0:>4}  {'-':<16} {waits}  objective of next\n"
            f"{'running':<9} {'slow6':<32} {1:>4}  {'-':<16} {'-':<{w}}  objective of slow6\n"
        )
        rows = json.loads(run("task", "list", "--state", "running", "--json").stdout)
        assert [(r["state"], r["file"], r["id"]) for r in rows] == [("running", "slow6.json", "slow6")]
    finally:
        inside.stop.write_text("")
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == errors.STOPPED, out


# why queued tasks wait -------------------------------------------------------------------------


def test_status_names_why_each_queued_task_waits(run: Run, inside: Room) -> None:
    queue(inside, "base", gate=["gpu"], priority=9)
    queue(inside, "pricey", max_cost_usd=11, priority=8)
    queue(inside, "free", priority=7)
    for k in range(4):
        queue(inside, f"w{k}", deps=["base"], priority=5 - k)
    result = run("status")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout.split("\n")[2:10] == [
        "tasks     queue 7 · running 0 · done 0 · parked 0 · rejected 0 · cancelled 0",
        "waiting   6 of 7 queued:",
        "  base    waits for gate gpu: `control-room approve base`",
        "  pricey  waits for the daily budget: $0.00 used or reserved + $11.00 > $10.00",
        "  w0      waits for dep base (queue)",
        "  w1      waits for dep base (queue)",
        "  w2      waits for dep base (queue)",
        "  and 1 more: control-room task list --state queue",
    ]
    data = json.loads(run("status", "--json").stdout)
    assert [(w["id"], w["kind"]) for w in data["waiting"]] == [
        ("base", "gate"), ("pricey", "budget"), ("w0", "dep"), ("w1", "dep"), ("w2", "dep"), ("w3", "dep"),
    ]  # fmt: skip
    assert data["waiting"][5]["why"] == "waits for dep base (queue)"
    assert run("cycle").stdout.startswith("passed: free ")  # the one status did not name
    assert json.loads(run("status", "--json").stdout)["waiting"] == data["waiting"]


def test_status_task_list_and_the_cycle_agree_on_a_worktree_left_mid_rebase(
    run: Run, inside: Room, repo: Path
) -> None:
    run("route", "add", "r1", "--title", "a route")
    tree = worktree.workdir(inside, settings_file.load(inside), {"id": "t0", "route": "r1"})
    (Path(git(tree, "rev-parse", "--absolute-git-dir")) / "rebase-merge").mkdir()  # a person's rebase
    queue(inside, "t1", route="r1")
    why = "waits for its worktree route-r1: in the middle of a rebase; finish or abort it there"
    assert run("status").stdout.split("\n")[3:5] == ["waiting   1 of 1 queued:", f"  t1  {why}"]
    row = f"{'queue':<9} {'t1':<32} {0:>4}  {'r1':<16} {why}  objective of t1"
    assert run("task", "list").stdout.split("\n")[1] == row
    assert run("cycle").stdout == f"nothing to do: 1 queued task not ready: t1 {why}\n"


def test_status_moves_nothing_and_names_what_the_next_cycle_rejects(run: Run, inside: Room) -> None:
    queue(inside, "a", deps=["b"])
    queue(inside, "b", deps=["a"])
    (inside.state_dir("queue") / "notes.txt").write_text("hello")
    ledger = inside.ledger.read_bytes()
    data = json.loads(run("status", "--json").stdout)
    assert sorted((w["id"], w["kind"], w["why"]) for w in data["waiting"]) == [
        ("a", "refused", "refused: deps form a cycle: a -> b -> a (no task in it could ever be ready)"),
        ("b", "refused", "refused: deps form a cycle: b -> a -> b (no task in it could ever be ready)"),
        ("notes.txt", "refused", "refused: not a task file: task files are named <id>.json"),
    ]
    assert inside.ledger.read_bytes() == ledger
    assert sorted(os.listdir(inside.state_dir("queue"))) == ["a.json", "b.json", "notes.txt"]
    run("cycle")  # the queue scan rejects all three
    assert sorted(os.listdir(inside.state_dir("rejected"))) == [
        "a.json", "a.json.reason", "b.json", "b.json.reason", "notes.txt", "notes.txt.reason",
    ]  # fmt: skip


def test_status_leaves_a_long_queue_to_task_list(
    run: Run, inside: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(status, "WAITING_MAX", 2)
    for k in range(3):
        queue(inside, f"t{k}", gate=["gpu"])
    result = run("status")
    assert result.stdout.split("\n")[3] == (
        "waiting   not checked here: 3 queued tasks, more than 2; "
        "control-room task list --state queue says why each waits"
    )
    assert json.loads(run("status", "--json").stdout)["waiting"] is None


def test_status_with_a_broken_gate_names_no_waiting_task(run: Run, inside: Room) -> None:
    queue(inside, "t1", gate=["gpu"])
    set_gate(inside, "max_parallel", "many")
    result = run("status")
    assert result.exit_code == 0
    assert result.stdout.split("\n")[2:4] == [
        "tasks     queue 1 · running 0 · done 0 · parked 0 · rejected 0 · cancelled 0",
        "routes    none yet",
    ]
    assert json.loads(run("status", "--json").stdout)["waiting"] is None


# a damaged ledger is flagged where people look ------------------------------------------------

NO_HEADER = (
    "control-room/LEDGER.md has no ledger header (the table header under its preamble): none of its "
    "lines is read; run `control-room init` to put the header back, keeping every line"
)


def warnings(run: Run) -> tuple[list[str], list[str]]:
    """The warning lines of `status`, and the warnings of `status --json`."""
    text = [ln[10:] for ln in run("status").stdout.split("\n") if ln.startswith("warning   ")]
    return text, json.loads(run("status", "--json").stdout)["warnings"]


def test_a_sound_ledger_gives_no_warning(run: Run, inside: Room) -> None:
    assert warnings(run) == ([], [])


def test_an_empty_ledger_is_a_warning_naming_the_file_and_the_fix(run: Run, inside: Room) -> None:
    inside.ledger.write_bytes(b"")
    text = (
        "control-room/LEDGER.md is empty: its header is gone and no line can be read; restore it "
        "(`git checkout control-room/LEDGER.md`), or run `control-room init` to write its header again"
    )
    assert warnings(run) == ([text], [text])
    assert run("status").stdout.split("\n")[2] == f"warning   {text}"  # right under STOP


def test_a_ledger_without_its_header_is_a_warning(run: Run, inside: Room) -> None:
    inside.ledger.write_text(inside.ledger.read_text().replace(HEADER + "\n", ""))
    assert warnings(run) == ([NO_HEADER], [NO_HEADER])


def test_a_broken_chain_is_a_warning_and_verify_agrees(run: Run, inside: Room) -> None:
    for k in range(3):
        assert run("stop", "--reason", f"r{k}").exit_code == 0
        assert run("resume").exit_code == 0
    assert warnings(run) == ([], [])  # checked once: the checkpoint is now at the end
    lines = data_lines(inside.ledger)
    assert "| stop |" in lines[3] and "| r1 |" in lines[3]
    lines[3] = lines[3].replace("| r1 |", "| r9 |")  # an edit by hand: same length, same place,
    saved = inside.ledger.with_name("LEDGER.md.new")  # saved as an editor does: a new file renamed
    saved.write_text(PREAMBLE + "".join(f"{ln}\n" for ln in lines))
    os.replace(saved, inside.ledger)
    stored = lines[3].split(" | ")[-1].rstrip(" |")
    assert run("stop", "--reason", "again").exit_code == 0  # and the ledger grows past the edit
    text, as_json = warnings(run)
    expected = (
        f"control-room/LEDGER.md:{lineno(4)}: edited: its content does not match its hash {stored}; "
        "`control-room ledger verify` lists every bad line"
    )
    assert (text, as_json) == ([expected], [expected])
    verified = run("ledger", "verify")
    assert verified.exit_code == errors.LEDGER_BAD
    assert verified.stderr.startswith(f"control-room/LEDGER.md:{lineno(4)}: edited: its content does not")
