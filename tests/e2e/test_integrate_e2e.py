"""The merge queue through the installed command, on real git repositories: `integrate` rebases a
passed task's branch onto the base, re-runs its validator, fast-forwards the base and moves the
task to swarm/to-test/; refusals (a main tree that is dirty, mid-rebase or on another branch, a
diff outside `owns`, a megafile), conflicts with and without a resolver, `auto_integrate` and
the `merge` gate; `done` from to-test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import PY, events, git, make_repo, queue, recount_agrees, set_gate, task_json, where

from control_room import errors
from control_room.room.layout import Room

LINES = "".join(f"line {k}\n" for k in range(1, 21))  # shared.txt: two edits far apart rebase cleanly


def write(name: str, text: str) -> list[str]:
    """An agent (the probe's command) that writes ``text`` to ``name`` in its work dir."""
    return [PY, "-c", f"import pathlib; p = pathlib.Path({name!r}); "
                      "p.parent.mkdir(parents=True, exist_ok=True); "
                      f"p.write_text({text!r})"]  # fmt: skip


def edit_line(k: int, text: str) -> list[str]:
    """An agent that replaces line ``k`` (1-based) of shared.txt."""
    return [PY, "-c", "import pathlib; p = pathlib.Path('shared.txt'); l = p.read_text().splitlines(); "
                      f"l[{k - 1}] = {text!r}; p.write_text(chr(10).join(l) + chr(10))"]  # fmt: skip


def absent(name: str) -> list[str]:
    return [PY, "-c", f"import os, sys; sys.exit(1 if os.path.exists({name!r}) else 0)"]


def present(*names: str) -> list[str]:
    return [PY, "-c", f"import os, sys; sys.exit(0 if all(map(os.path.exists, {list(names)!r})) else 1)"]


@pytest.fixture
def repo(tmp_path: Path, room: Room, cr) -> Path:
    """A repository beside the room, with shared.txt on `main`, named in CONTROL.md; routes r1-r4."""
    path = make_repo(tmp_path / "repo", {"shared.txt": LINES})
    set_gate(room, "repo", "../repo")
    for r in ("r1", "r2", "r3", "r4"):
        assert cr("route", "add", r, "--title", f"route {r}").returncode == 0
    return path


def integrated(room: Room) -> list[str]:
    return [e for e in events(room.ledger) if e == "integrate"]


def test_a_passed_task_is_rebased_checked_again_and_fast_forwarded(cr, room: Room, repo: Path) -> None:
    queue(room, "t1", route="r1", command=write("src/a.py", "A = 1\n"), validator=present("src/a.py"))
    done = cr("cycle")
    assert done.returncode == errors.PASSED, done.stdout + done.stderr
    assert "waits in swarm/passed/ for `control-room integrate`" in done.stdout
    assert where(room, "t1") == ["passed"] and git(repo, "log", "--format=%s") == "first"
    git(repo, "commit", "-q", "--allow-empty", "-m", "a person's commit on main meanwhile")
    merged = cr("integrate")
    assert merged.returncode == errors.OK, merged.stdout + merged.stderr
    head = git(repo, "rev-parse", "HEAD")
    assert merged.stdout == (
        f"merged: t1 (route/r1 onto main: 1 file; validator passed after the rebase; main fast-forwarded to "
        f"{head[:12]}); in swarm/to-test/\n")  # fmt: skip
    assert (repo / "src" / "a.py").read_text() == "A = 1\n"
    assert (
        git(repo, "log", "--format=%s") == "t1: objective of t1\na person's commit on main meanwhile\nfirst"
    )
    assert git(repo, "rev-list", "--merges", "main") == ""  # linear: fast-forwards only
    assert git(repo, "status", "--porcelain") == ""
    t = task_json(room, "to-test", "t1")
    assert t["merged_commit"] == head and t["merged_at"] >= t["passed_at"]
    assert (room.swarm / "results" / "t1" / "post-rebase.stdout.txt").exists()
    # route r1 has nothing left to run: its worktree and branch are gone, with a line
    assert not (room.cr / "worktrees" / "route-r1").exists()
    assert git(repo, "branch", "--format=%(refname:short)") == "main"
    assert events(room.ledger)[-2:] == ["integrate", "worktree-remove"]
    done = cr("done", "t1", "--by", "tester")
    assert (done.returncode, where(room, "t1")) == (0, ["done"])
    assert task_json(room, "done", "t1")["done_by"] == "tester"
    assert cr("ledger", "verify").returncode == 0


def test_done_refuses_a_task_that_passed_but_is_not_merged(cr, room: Room, repo: Path) -> None:
    queue(room, "t1", route="r1", command=write("a.txt", "a"))
    assert cr("cycle").returncode == errors.PASSED
    done = cr("done", "t1")
    assert (done.returncode, done.stderr) == (errors.CONFLICT, (
        "Error: cannot mark Done t1: it passed but is not merged yet (swarm/passed/); "
        "`control-room integrate t1` first\n"))  # fmt: skip


def test_a_pass_that_changed_nothing_has_nothing_to_merge(cr, room: Room, repo: Path) -> None:
    queue(room, "look", route="r1")  # the probe's default agent only prints
    done = cr("cycle")
    assert done.returncode == errors.PASSED
    assert done.stdout.endswith("; nothing to merge: its branch holds no change against the base\n")
    assert where(room, "look") == ["done"] and not (room.cr / "worktrees" / "route-r1").exists()
    assert git(repo, "branch", "--format=%(refname:short)") == "main"


def test_a_route_waits_while_its_task_waits_for_the_merge_queue(cr, room: Room, repo: Path) -> None:
    queue(room, "t1", route="r1", command=write("a.txt", "a"), priority=1)
    queue(room, "t2", route="r1", command=write("b.txt", "b"))
    assert cr("cycle").returncode == errors.PASSED
    second = cr("cycle")
    assert (second.returncode, second.stdout) == (errors.OK, (
        "nothing to do: 1 queued task not ready: t2 waits for t1 to be merged (`control-room integrate t1`): "
        "route r1 has one worktree\n"))  # fmt: skip
    assert cr("integrate", "t1").returncode == errors.OK
    assert (room.cr / "worktrees" / "route-r1").exists()  # t2 is still to run on it
    assert cr("cycle").returncode == errors.PASSED


def test_auto_integrate_merges_in_the_same_cycle(cr, room: Room, repo: Path) -> None:
    set_gate(room, "auto_integrate", "true")
    queue(room, "t1", route="r1", command=write("a.txt", "a"))
    done = cr("cycle")
    assert done.returncode == errors.PASSED, done.stdout + done.stderr
    assert done.stdout.startswith("passed: t1 (") and "; merged: t1 (route/r1 onto main" in done.stdout
    assert where(room, "t1") == ["to-test"] and (repo / "a.txt").read_text() == "a"


def test_a_merge_gate_lets_the_task_run_but_holds_its_merge(cr, room: Room, repo: Path) -> None:
    set_gate(room, "auto_integrate", "true")
    queue(room, "t1", route="r1", command=write("a.txt", "a"), gate=["merge"])
    done = cr("cycle")
    assert done.returncode == errors.PASSED and where(room, "t1") == ["passed"]
    assert cr("integrate").stdout == "t1 waits for gate merge: `control-room approve t1`\n"
    refused = cr("integrate", "t1")
    assert (refused.returncode, refused.stderr) == (
        errors.CONFLICT,
        "Error: cannot integrate t1: it waits for gate merge: `control-room approve t1`\n",
    )
    assert cr("approve", "t1").returncode == 0
    assert cr("integrate", "t1").returncode == errors.OK and where(room, "t1") == ["to-test"]


@pytest.mark.parametrize("spoil, says", [
    ("dirty", "has uncommitted changes (notes.txt); commit or stash them first (nothing was merged)"),
    ("branch", "has other checked out, not the base branch main; `git -C {repo} switch main` first "
               "(nothing was merged)"),
    ("rebase", "is in the middle of a rebase; finish or abort it there (no worktree is made or touched until "
               "then); nothing was merged"),
])  # fmt: skip
def test_a_main_tree_unfit_for_a_merge_is_refused_and_nothing_moves(
    cr, room: Room, repo: Path, spoil: str, says: str
) -> None:
    queue(room, "t1", route="r1", command=write("a.txt", "a"))
    assert cr("cycle").returncode == errors.PASSED
    if spoil == "dirty":
        (repo / "notes.txt").write_text("a person's unfinished work")
    elif spoil == "branch":
        git(repo, "switch", "-q", "-c", "other")
    else:
        (repo / ".git" / "rebase-merge").mkdir()
    before, head = room.ledger.read_bytes(), git(repo, "rev-parse", "HEAD")
    refused = cr("integrate")
    assert (refused.returncode, refused.stderr) == (
        errors.ROOM_INVALID,
        f"Error: room invalid: {repo} {says.format(repo=repo)}\n",
    )
    assert where(room, "t1") == ["passed"] and room.ledger.read_bytes() == before
    assert git(repo, "rev-parse", "HEAD") == head


def test_the_rooms_own_files_inside_the_repository_do_not_make_it_dirty(cr, tmp_path: Path) -> None:
    repo = tmp_path / "project"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "code.py").write_text("x = 1\n")
    git(repo, "add", "code.py")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "first")
    assert cr("init", str(repo)).returncode == 0
    room = Room(repo)
    set_gate(room, "repo", ".")
    queue(room, "t1", route=None, command=write("code.py", "x = 2\n"))
    inside = {"CONTROL_ROOM": str(repo)}
    assert cr("cycle", extra_env=inside).returncode == errors.PASSED  # the ledger changed: the room's
    merged = cr("integrate", extra_env=inside)
    assert merged.returncode == errors.OK, merged.stderr
    assert (repo / "code.py").read_text() == "x = 2\n" and where(room, "t1") == ["to-test"]
    assert not (repo / "control-room" / "worktrees" / "task-t1").exists()


def test_a_diff_outside_owns_is_a_failed_round_naming_the_paths(cr, room: Room, repo: Path) -> None:
    agent = [PY, "-c", "import os; os.makedirs('src', exist_ok=True); open('src/a.py', 'w').write('a'); "
                       "open('setup.cfg', 'w').write('b')"]  # fmt: skip
    queue(room, "t1", route="r1", command=agent, owns=["src"])
    assert cr("cycle").returncode == errors.PASSED
    failed = cr("integrate")
    assert failed.returncode == errors.FAILED
    assert failed.stdout == (
        "not merged: t1 (its diff touches paths outside its owns: setup.cfg); back in the queue for round 2 "
        "of 2\n")  # fmt: skip
    t = task_json(room, "queue", "t1")
    assert (t["rounds"], t["last_failure"]) == (
        1,
        "integration: its diff touches paths outside its owns: setup.cfg",
    )
    assert git(repo, "log", "--format=%s") == "first"
    assert integrated(room) == ["integrate"]
    recount_agrees(cr)  # the refusal counted as a failed run of r1


def test_a_megafile_is_refused_and_one_decompose_task_is_queued(cr, room: Room, repo: Path) -> None:
    set_gate(room, "megafile_lines", "30")
    grow = [PY, "-c", "open('shared.txt', 'a').write(''.join(f'more {k}\\n' for k in range(15)))"]
    queue(room, "t1", route="r1", command=grow, priority=2)
    queue(room, "t2", route="r2", command=grow, priority=1)
    assert cr("cycle").returncode == errors.PASSED
    assert cr("cycle").returncode == errors.PASSED
    refused = cr("integrate")
    assert refused.returncode == errors.FAILED
    assert refused.stdout == (
        "not merged: t1 (it grows shared.txt (20 -> 35 lines) past megafile_lines 30); queued "
        "decompose-shared.txt, and t1 waits for it\n"
        "not merged: t2 (it grows shared.txt (20 -> 35 lines) past megafile_lines 30); queued "
        "decompose-shared.txt, and t2 waits for it\n")  # fmt: skip
    assert events(room.ledger).count("megafile") == 2
    d = task_json(room, "queue", "decompose-shared.txt")
    assert (d["role"], d["owns"], d["route"], d["for_task"]) == ("engineer", ["shared.txt"], "r1", "t1")
    assert d["objective"].startswith("Split shared.txt (35 lines, over the room's megafile_lines 30)")
    for tid in ("t1", "t2"):  # no round used; each waits for the one decompose task
        t = task_json(room, "queue", tid)
        assert (t.get("rounds", 0), t["deps"]) == (0, ["decompose-shared.txt"])
    assert sorted(p.name for p in room.state_dir("queue").glob("*.json")) == [
        "decompose-shared.txt.json", "t1.json", "t2.json"]  # fmt: skip
    recount_agrees(cr)  # waiting for a decompose task is no failed run


def test_a_decompose_task_that_does_nothing_does_not_merge_the_megafile(cr, room: Room, repo: Path) -> None:
    """The megafile check holds for every merge, a helper's too: a decompose task whose agent runs
    `true` carries the served task's 35-line file and is refused, a failed round of its own,
    with no second decompose task queued; nothing reaches main."""
    set_gate(room, "megafile_lines", "30")
    set_gate(room, "auto_integrate", "true")
    grow = [PY, "-c", "open('shared.txt', 'a').write(''.join(f'more {k}\\n' for k in range(15)))"]
    queue(room, "t1", route="r1", command=grow)
    assert cr("cycle").returncode == errors.FAILED  # passed, then refused by the merge queue
    path = room.state_dir("queue") / "decompose-shared.txt.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "command": ["true"], "adapter": "probe"}))
    done = cr("cycle")
    assert done.returncode == errors.FAILED, done.stdout + done.stderr
    assert done.stdout.endswith(
        "not merged: decompose-shared.txt (it grows shared.txt (20 -> 35 lines) past megafile_lines 30); "
        "back in the queue for round 2 of 2\n")  # fmt: skip
    assert (repo / "shared.txt").read_text() == LINES and git(repo, "log", "--format=%s") == "first"
    assert where(room, "decompose-shared.txt") == ["queue"] and where(room, "t1") == ["queue"]
    assert task_json(room, "queue", "decompose-shared.txt")["last_failure"] == (
        "integration: it grows shared.txt (20 -> 35 lines) past megafile_lines 30"
    )
    assert sorted(p.name for p in room.state_dir("queue").glob("*.json")) == [
        "decompose-shared.txt.json", "t1.json"]  # fmt: skip
    assert events(room.ledger).count("megafile") == 2  # t1's, then the decompose task's
    recount_agrees(cr)


def test_a_post_rebase_validator_failure_is_a_failed_round_with_its_tail(cr, room: Room, repo: Path) -> None:
    queue(room, "flag", route="r1", command=write("flag.txt", "x"), priority=2)
    check = [PY, "-c", "import os, sys; print('flag.txt is here' if os.path.exists('flag.txt') else 'ok'); "
                       "sys.exit(os.path.exists('flag.txt'))"]  # fmt: skip
    queue(room, "t2", route="r2", command=write("b.txt", "b"), validator=check, priority=1)
    assert cr("cycle").returncode == errors.PASSED
    assert cr("cycle").returncode == errors.PASSED  # before the rebase, no flag.txt: it passes
    assert cr("integrate", "flag").returncode == errors.OK
    failed = cr("integrate", "t2")
    assert failed.returncode == errors.FAILED
    assert failed.stdout == (
        "not merged: t2 (after the rebase onto main, validator exited 1: flag.txt is here); "
        "back in the queue for round 2 of 2\n")  # fmt: skip
    assert "flag.txt is here" in (room.swarm / "results" / "t2" / "post-rebase.stdout.txt").read_text()
    assert task_json(room, "queue", "t2")["last_failure"].startswith(
        "integration: after the rebase onto main"
    )
    assert (room.cr / "worktrees" / "route-r2").exists()  # kept: the route has its task to run again
    recount_agrees(cr)


def conflict(room: Room) -> None:
    queue(room, "t1", route="r1", command=edit_line(5, "one"), priority=2)
    queue(room, "t2", route="r2", command=edit_line(5, "two"), priority=1)


def test_a_conflicting_rebase_is_a_failed_round_and_is_undone(cr, room: Room, repo: Path) -> None:
    conflict(room)
    assert cr("cycle").returncode == errors.PASSED and cr("cycle").returncode == errors.PASSED
    out = cr("integrate")
    assert out.returncode == errors.FAILED
    assert out.stdout.splitlines()[1] == (
        "not merged: t2 (rebasing route/r2 onto main conflicted in shared.txt; the rebase was undone. "
        "Rebase route/r2 onto main in the worktree and resolve them); "
        "back in the queue for round 2 of 2")  # fmt: skip
    tree = room.cr / "worktrees" / "route-r2"
    assert (
        git(tree, "status", "--porcelain") == ""
        and not (repo / ".git" / "worktrees" / "route-r2" / "rebase-merge").exists()
    )
    assert (repo / "shared.txt").read_text().splitlines()[4] == "one"
    recount_agrees(cr)


RESOLVE = [PY, "-c", """
import pathlib, subprocess
subprocess.run(["git", "rebase", "main"], capture_output=True)  # stops at the conflict
p = pathlib.Path("shared.txt")
p.write_text("".join(l + "\\n" for l in p.read_text().splitlines() \
if not l.startswith(("<<<<<<<", "=======", ">>>>>>>"))))
subprocess.run(["git", "add", "shared.txt"], check=True)
subprocess.run(["git", "-c", "core.editor=true", "rebase", "--continue"], check=True)
"""]  # fmt: skip


def test_a_conflict_with_a_resolver_queues_it_and_its_result_is_checked_again(
    cr, room: Room, repo: Path
) -> None:
    set_gate(room, "conflict_resolver", "engineer")
    conflict(room)
    assert cr("cycle").returncode == errors.PASSED and cr("cycle").returncode == errors.PASSED
    waits = cr("integrate")
    assert waits.returncode == errors.FAILED
    assert waits.stdout.endswith(
        "not merged: t2 (rebasing route/r2 onto main conflicted in shared.txt); "
        "queued resolve-t2, and t2 waits for it\n")  # fmt: skip
    r = task_json(room, "queue", "resolve-t2")
    assert (r["role"], r["route"], r["for_task"], r["validator"]) == (
        "engineer",
        "r2",
        "t2",
        task_json(room, "queue", "t2")["validator"],
    )
    assert task_json(room, "queue", "t2")["deps"] == ["resolve-t2"] and "rounds" not in task_json(
        room, "queue", "t2"
    )
    recount_agrees(cr)  # waiting for a resolver is no failed run
    # the resolver's agent: a probe command that finishes the rebase in t2's worktree
    path = room.state_dir("queue") / "resolve-t2.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "command": RESOLVE, "adapter": "probe"}))
    set_gate(room, "auto_integrate", "true")
    done = cr("cycle")
    assert done.returncode == errors.PASSED, done.stdout + done.stderr
    assert done.stdout.endswith("; t2 merged with it; in swarm/to-test/\n")
    assert where(room, "resolve-t2") == ["to-test"] and where(room, "t2") == ["to-test"]
    text = (repo / "shared.txt").read_text().splitlines()
    assert "one" in text and "two" in text and git(repo, "rev-list", "--merges", "main") == ""
    assert (room.swarm / "results" / "resolve-t2" / "post-rebase.stdout.txt").exists()
    assert not (room.cr / "worktrees" / "route-r2").exists()


def claimed_intervals(room: Room) -> dict[str, list[tuple[int, int]]]:
    """Per task, the (claim, result) ledger line numbers of each of its runs."""
    from control_room.ledger.line import Col, parse

    lines = [ln for ln in room.ledger.read_text().splitlines() if ln.startswith("| 20")]
    open_: dict[str, int] = {}
    out: dict[str, list[tuple[int, int]]] = {}
    for n, ln in enumerate(lines):
        cells = parse(ln)
        if cells[Col.EVENT] == "claim":
            open_[cells[Col.TASK]] = n
        elif cells[Col.EVENT] == "result":
            out.setdefault(cells[Col.TASK], []).append((open_.pop(cells[Col.TASK]), n))
    return out


def test_six_tasks_on_five_routes_three_at_a_time_every_merge_checked_again(
    cr, room: Room, repo: Path
) -> None:
    """deps, two tasks owning overlapping paths, a shared file edited by two routes, max_parallel 3,
    and one task whose validator fails only after the rebase (another route changed the base under
    it), retried then parked. Every other task is merged and in to-test; the base is linear; the main
    tree is clean; no worktree or branch is left for finished routes; the ledger verifies."""
    set_gate(room, "max_parallel", "3")
    assert cr("route", "add", "r5", "--title", "route r5").returncode == 0
    no_flag = [PY, "-c", "import os, sys; print('flag.txt is here' if os.path.exists('flag.txt') else 'ok'); "
                         "sys.exit(os.path.exists('flag.txt'))"]  # fmt: skip
    queue(room, "p1", route="r5", command=write("p.txt", "p"), validator=no_flag, priority=5)
    queue(room, "c1", route="r3", command=edit_line(2, "c1 was here"), priority=4)
    queue(room, "d1", route="r4", command=[PY, "-c", "import pathlib; p = pathlib.Path('shared.txt'); "
          "l = p.read_text().splitlines(); l[17] = 'd1 was here'; p.write_text(chr(10).join(l) + chr(10)); "
          "open('flag.txt', 'w').write('d1')"], priority=3)  # fmt: skip
    queue(room, "a1", route="r1", command=write("src/a/one.txt", "1"), owns=["src/a"], priority=2)
    queue(room, "b1", route="r2", command=write("src/b.txt", "b"), owns=["src"], priority=1)
    queue(room, "a2", route="r1", command=write("src/a/two.txt", "2"), owns=["src/a"], deps=["a1"],
          validator=present("src/a/one.txt", "src/a/two.txt"))  # fmt: skip

    # three cycles at a time: p1, c1, d1 first; then a1 and b1, one after the other (their paths overlap)
    run = cr("run", "--every", "0", "--parallel", "3", "--cycles", "3")
    assert run.returncode == 0, run.stdout + run.stderr
    assert sorted(p.stem for p in room.state_dir("passed").glob("*.json")) == ["a1", "b1", "c1", "d1", "p1"]
    spans = claimed_intervals(room)
    (a,), (b,) = spans["a1"], spans["b1"]
    assert a[1] < b[0] or b[1] < a[0]  # never running at once

    # the merge queue: d1 first (it adds flag.txt), then the rest, oldest pass first
    assert cr("integrate", "d1").returncode == errors.OK
    rest = cr("integrate")
    assert rest.returncode == errors.FAILED
    said = sorted(ln.split(" (", 1)[0] for ln in rest.stdout.splitlines())
    assert said == ["merged: a1", "merged: b1", "merged: c1", "not merged: p1"]
    assert task_json(room, "queue", "p1")["last_failure"].startswith(
        "integration: after the rebase onto main, validator exited 1: flag.txt is here"
    )

    # a2 (its dep merged now) and p1's second round, which fails before any rebase now: parked
    again = cr("run", "--every", "0", "--parallel", "3", "--cycles", "1")
    assert again.returncode == 0, again.stdout + again.stderr
    assert where(room, "p1") == ["parked"] and where(room, "a2") == ["passed"]
    assert cr("integrate").returncode == errors.OK

    assert {t: where(room, t) for t in ("a1", "a2", "b1", "c1", "d1", "p1")} == {
        "a1": ["to-test"], "a2": ["to-test"], "b1": ["to-test"], "c1": ["to-test"], "d1": ["to-test"],
        "p1": ["parked"]}  # fmt: skip
    shared = (repo / "shared.txt").read_text().splitlines()
    assert (shared[1], shared[17], len(shared)) == ("c1 was here", "d1 was here", 20)
    assert all((repo / f).exists() for f in ("src/a/one.txt", "src/a/two.txt", "src/b.txt", "flag.txt"))
    assert not (repo / "p.txt").exists()
    assert git(repo, "rev-list", "--merges", "main") == ""  # fast-forwards only: linear
    assert git(repo, "rev-list", "--count", "main") == "6"  # the first commit and five tasks
    assert git(repo, "status", "--porcelain") == ""
    # only the parked task's route keeps its worktree and branch (its work waits for a person)
    assert sorted(p.name for p in (room.cr / "worktrees").iterdir() if p.is_dir()) == ["route-r5"]
    assert git(repo, "branch", "--format=%(refname:short)").split() == ["main", "route/r5"]
    assert events(room.ledger).count("worktree-remove") == 4
    assert cr("ledger", "verify").returncode == 0

    # the scorecard says what a hand count over this ledger says: 7 runs of 6 tasks (p1 twice); six
    # passes, each a task's first round (p1 failed only after its rebase, then before it); one park;
    # the validator re-ran after 6 rebases (d1, a1, b1, c1, p1, a2) and failed once (p1's)
    sc = json.loads(cr("scorecard", "--json").stdout)["total"]
    from control_room.ledger.line import Col, parse

    cells = [parse(ln) for ln in room.ledger.read_text().splitlines() if ln.startswith("| 20")]
    results = [c for c in cells if c[Col.EVENT] == "result"]
    merges = [c for c in cells if c[Col.EVENT] == "integrate"]
    assert (len(results), sum(c[Col.OUTCOME] == "pass" for c in results)) == (7, 6)
    assert [c[Col.OUTCOME] for c in merges].count("failed") == 1 and len(merges) == 6
    assert (sc["tasks"], sc["runs"], sc["passed"], sc["parked"]) == (6, 7, 6, 1)
    assert sc["first_round_pass"] == {"passed": 6, "of": 6}
    assert sc["post_rebase_validator_failures"] == {"count": 1, "of": 6}


def test_a_routes_next_task_starts_from_what_other_routes_merged(cr, room: Room, repo: Path) -> None:
    queue(room, "a1", route="r1", command=write("a.txt", "a"), priority=3)
    queue(room, "b1", route="r2", command=write("b.txt", "b"), priority=2)
    queue(
        room, "a2", route="r1", command=write("c.txt", "c"), deps=["b1"], validator=present("a.txt", "b.txt")
    )
    set_gate(room, "auto_integrate", "true")
    assert cr("cycle").returncode == errors.PASSED  # a1 merged; r1's worktree stays for a2
    assert cr("cycle").returncode == errors.PASSED  # b1 merged from r2
    done = cr("cycle")  # a2 reuses r1's worktree, which first catches up with main (b.txt)
    assert done.returncode == errors.PASSED, done.stdout + done.stderr
    assert where(room, "a2") == ["to-test"] and (repo / "c.txt").exists()
