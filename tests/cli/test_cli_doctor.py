"""control-room doctor: each check's broken fixture and its exact line; --fix repairs only the
safe ones (folders, the ledger's header, dead claims, dead worktrees), each with a doctor-fix
ledger line; exit 15 on any FAIL; --json."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import namedtuple
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from support import entries, events, git, make_repo, queue, set_gate, snapshot, where

from control_room import errors
from control_room.adapters import adapter_class
from control_room.dispatch.round import claims
from control_room.ledger.line import HEADER
from control_room.room import scaffold, swarm
from control_room.room.layout import Room

Run = Callable[..., Result]
FAKES = Path(__file__).parent.parent / "fakes"
GIT = shutil.which("git")
FOLDERS = sum(1 for item in scaffold.plan() if item.is_dir)
Usage = namedtuple("Usage", "total used free")


def git_version() -> str:
    assert GIT is not None, "git is needed by these tests"
    return subprocess.run([GIT, "--version"], capture_output=True, text=True, check=True).stdout.strip()


FRESH = {
    "layout": f"OK   layout  all {FOLDERS} folders of a room are there; the cycle's are writable",
    "settings": "OK   settings  control-room/CONTROL.md parses and its values are valid",
    "ledger": "OK   ledger  control-room/LEDGER.md has its header; its hash chain holds",
    "claims": "OK   claims  no dead claims (0 tasks running)",
    "rejected": "OK   rejected  no rejected files waiting",
    "lenses": "OK   lenses  no lens is named (CONTROL.md review is empty; no queued task names one)",
    "graveyard": "OK   graveyard  no tombstones in graveyard/",
    "adapter probe": (
        "OK   adapter probe  built in: runs each task's own command (named by CONTROL.md default_adapter)"
    ),
    "git": f"OK   git  {git_version()} at {GIT}",
    "repo": "OK   repo  none (CONTROL.md repo: is empty): agents work in the work dir",
    "worktrees": "OK   worktrees  none to check (no repo)",
    "disk": "OK   disk  100.0 GiB free on the room's disk",
    "schedule": "OK   schedule  none installed for this room (cycles by hand or `run`); no cycle has run yet",
    "merge-drivers": "OK   merge-drivers  the room is in no git work tree: nothing to merge",
    "reviewers": "OK   reviewers  no lens reviews this room's tasks",
    "shared": "OK   shared  not shared: CONTROL.md sets no remote (one machine)",
}


@pytest.fixture(autouse=True)
def disk(monkeypatch: pytest.MonkeyPatch) -> Callable[[float], None]:
    """The room's disk has 100 GiB free, unless a test says otherwise."""

    def free(gib: float) -> None:
        monkeypatch.setattr(
            "control_room.dispatch.doctor.tools.shutil.disk_usage",
            lambda _p: Usage(2**40, 0, int(gib * 2**30)),
        )

    free(100)
    return free


def lines(result: Result) -> dict[str, list[str]]:
    """The output's lines by check, in order."""
    out: dict[str, list[str]] = {}
    for line in result.stdout.splitlines():
        if line.startswith("fixed "):
            continue
        check = line[5:].split("  ")[0]
        out.setdefault(check, []).append(line)
    return out


def expect(result: Result, code: int, **changed: str | list[str]) -> None:
    """Exactly the fresh room's lines, but for ``changed`` (check -> its line or lines)."""
    want = {k: [v] for k, v in FRESH.items()}
    for key, value in changed.items():
        want[key.replace("_", " ")] = [value] if isinstance(value, str) else value
    assert (result.exit_code, result.stderr) == (code, "")
    assert lines(result) == want


def fixed(result: Result) -> list[str]:
    return [line for line in result.stdout.splitlines() if line.startswith("fixed ")]


def doctor_fixes(room: Room) -> list[tuple[str, str]]:
    return [(e.outcome, e.detail) for e in entries(room, "doctor-fix")]


def test_a_fresh_room_is_all_ok_and_exits_0(run: Run, inside: Room) -> None:
    result = run("doctor")
    assert result.stdout == "".join(line + "\n" for line in FRESH.values())
    expect(result, 0)


def test_json_is_a_list_of_check_status_detail_fix_fixed(run: Run, inside: Room) -> None:
    shutil.rmtree(inside.swarm / "results")
    result = run("doctor", "--json")
    assert result.exit_code == 15
    found = json.loads(result.stdout)
    assert [f["check"] for f in found] == list(FRESH)
    assert all(set(f) == {"check", "status", "detail", "fix", "fixed"} for f in found)
    assert found[0] == {
        "check": "layout",
        "status": "FAIL",
        "detail": "swarm/results/ is missing",
        "fix": "control-room doctor --fix recreates it (as `control-room init` does)",
        "fixed": False,
    }
    after = json.loads(run("doctor", "--json", "--fix").stdout)
    assert after[0] == {
        "check": "layout",
        "status": "OK",
        "detail": f"all {FOLDERS} folders of a room are there; the cycle's are writable",
        "fix": "",
        "fixed": True,
    }
    assert [f["fixed"] for f in after[1:]] == [False] * (len(FRESH) - 1)


# layout -----------------------------------------------------------------------------------------


def test_missing_folders_fail_and_fix_recreates_them_with_a_ledger_line(run: Run, inside: Room) -> None:
    shutil.rmtree(inside.swarm / "results")
    shutil.rmtree(inside.root / "agents" / "lenses")
    missing = "FAIL layout  swarm/results/, agents/lenses/ are missing; control-room doctor --fix recreates them (as `control-room init` does)"  # noqa: E501
    expect(run("doctor"), 15, layout=missing)
    result = run("doctor", "--fix")
    assert fixed(result) == ["fixed layout: recreated swarm/results/, agents/lenses/"]
    expect(result, 0)
    assert (inside.swarm / "results").is_dir() and (inside.root / "agents" / "lenses").is_dir()
    assert doctor_fixes(inside) == [("fixed", "layout: recreated swarm/results/, agents/lenses/")]
    expect(run("doctor"), 0)


def test_a_folder_no_cycle_needs_is_a_warning(run: Run, inside: Room) -> None:
    shutil.rmtree(inside.swarm / "to-test")  # the merge queue's: needed only with repo:
    warn = "WARN layout  swarm/to-test/ is missing; control-room doctor --fix recreates it (as `control-room init` does)"  # noqa: E501
    expect(run("doctor"), 0, layout=warn)


def test_a_file_where_a_folder_belongs_fails_and_fix_leaves_it(run: Run, inside: Room) -> None:
    shutil.rmtree(inside.swarm / "outbox")
    (inside.swarm / "outbox").write_text("mine\n")
    line = "FAIL layout  swarm/outbox is a file where the room needs a folder; move it away, then control-room doctor --fix recreates the folder"  # noqa: E501
    expect(run("doctor"), 15, layout=line)
    before = snapshot(inside.root)
    result = run("doctor", "--fix")
    expect(result, 15, layout=line)
    assert fixed(result) == [] and snapshot(inside.root) == before


def test_a_missing_room_file_is_a_warning_init_repairs(run: Run, inside: Room) -> None:
    inside.routes.unlink()
    warn = "WARN layout  control-room/ROUTES.md is missing; `control-room init` writes missing files again (it never replaces one)"  # noqa: E501
    expect(run("doctor"), 0, layout=warn)
    expect(run("doctor", "--fix"), 0, layout=warn)  # not doctor's to write
    assert not inside.routes.exists()


# settings ---------------------------------------------------------------------------------------


def test_a_broken_control_md_fails_and_stays_broken_after_fix(run: Run, inside: Room) -> None:
    set_gate(inside, "max_parallel", "lots")
    not_checked = "not checked: CONTROL.md does not parse (see the settings check)"
    broken = {
        "settings": "FAIL settings  control-room/CONTROL.md: max_parallel must be a positive integer "
        "(got 'lots'); fix it in control-room/CONTROL.md",
        "claims": f"WARN claims  {not_checked}",
        "adapter_probe": [f"WARN adapters  {not_checked}"],
        "repo": f"WARN repo  {not_checked}",
        "worktrees": "OK   worktrees  none to check (the repo is not usable)",
        "disk": f"WARN disk  {not_checked}",
        "reviewers": f"WARN reviewers  {not_checked}",
        "shared": f"WARN shared  {not_checked}",
    }
    result = run("doctor")
    assert result.stdout.splitlines()[1] == broken["settings"]
    assert lines(result)["adapters"] == broken.pop("adapter_probe")
    want = {k: [v] for k, v in FRESH.items() if k != "adapter probe"}
    want |= {k: [v] for k, v in broken.items()}
    want["adapters"] = [f"WARN adapters  {not_checked}"]
    assert (result.exit_code, lines(result)) == (15, want)
    text = inside.control.read_bytes()
    again = run("doctor", "--fix")
    assert (again.exit_code, lines(again), fixed(again)) == (15, want, [])
    assert inside.control.read_bytes() == text and doctor_fixes(inside) == []


def test_a_missing_work_dir_fails(run: Run, inside: Room) -> None:
    set_gate(inside, "workdir", "nowhere")
    line = f"FAIL settings  CONTROL.md: workdir {inside.root / 'nowhere'} does not exist; create it or fix workdir in control-room/CONTROL.md"  # noqa: E501
    expect(run("doctor"), 15, settings=line)


# ledger -----------------------------------------------------------------------------------------


def drop_header(room: Room) -> None:
    text = room.ledger.read_text()
    room.ledger.write_text(
        "\n".join(ln for ln in text.split("\n") if ln != HEADER and not ln.startswith("|---"))
    )


def test_a_ledger_without_its_header_fails_and_fix_restores_it(run: Run, inside: Room, cr) -> None:  # type: ignore[no-untyped-def]
    drop_header(inside)
    line = "FAIL ledger  control-room/LEDGER.md has no table header; control-room doctor --fix restores it"
    expect(run("doctor"), 15, ledger=line)
    result = run("doctor", "--fix")
    assert fixed(result) == [
        "fixed ledger: put the table header back into control-room/LEDGER.md, above its 1 line"
    ]
    expect(result, 0)
    assert HEADER in inside.ledger.read_text().split("\n")
    assert events(inside.ledger) == ["init", "doctor-fix"]
    assert cr("ledger", "verify").returncode == 0


def test_a_broken_chain_fails_and_fix_leaves_the_ledger_alone(run: Run, inside: Room) -> None:
    text = inside.ledger.read_text()
    inside.ledger.write_text(text.replace("created 32 files", "created 33 files"))
    result = run("doctor")
    (line,) = lines(result)["ledger"]
    assert line.startswith("FAIL ledger  control-room/LEDGER.md has 1 bad line (line ")
    assert line.endswith(
        "edited, its content does not match its hash "
        f"{text.rstrip().rstrip(' |').split(' | ')[-1]}); `control-room ledger verify` lists them; "
        "restore the ledger from git"
    )
    before = inside.ledger.read_bytes()
    assert (run("doctor", "--fix").exit_code, inside.ledger.read_bytes()) == (15, before)


# claims and rejected files ----------------------------------------------------------------------


def dead_claim(room: Room, tid: str) -> str:
    queue(room, tid)
    swarm.move(room, tid, "queue", "running")
    claims.write_claim(room, tid, {"pid": 999_999_999, "host": claims.host(room), "slot": 0, "deadline": 0})
    return f"its cycle (pid 999999999 on {claims.host(room)}) is gone"


def test_a_dead_claim_warns_and_fix_recovers_it_as_a_cycle_would(run: Run, inside: Room) -> None:
    why = dead_claim(inside, "t1")
    warn = f"WARN claims  1 dead claim in swarm/running/: t1 ({why}); control-room doctor --fix recovers it as the next cycle would"  # noqa: E501
    expect(run("doctor"), 0, claims=warn)
    result = run("doctor", "--fix")
    assert fixed(result) == [
        f"fixed claims: recovered t1: {why}; back in the queue, no round used (dispatcher death 1 of 3)"
    ]
    expect(result, 0)
    assert where(inside, "t1") == ["queue"] and not claims.claim_path(inside, "t1").exists()
    assert events(inside.ledger)[-2:] == ["recover", "doctor-fix"]


def test_a_live_claim_is_left_alone(run: Run, inside: Room) -> None:
    queue(inside, "t1")
    swarm.move(inside, "t1", "queue", "running")
    claims.write_claim(
        inside, "t1", {"pid": os.getpid(), "host": claims.host(inside), "slot": 0, "deadline": 2e9}
    )
    fd = claims.take_slot(inside, 1)
    assert fd is not None
    try:
        result = run("doctor", "--fix")
        expect(result, 0, claims="OK   claims  no dead claims (1 task running)")
        assert where(inside, "t1") == ["running"]
    finally:
        os.close(fd[1])


def test_rejected_files_warn_with_where_to_look(run: Run, inside: Room) -> None:
    (inside.state_dir("rejected") / "bad.json").write_text("{}")
    warn = "WARN rejected  1 rejected file waiting in swarm/rejected/; `control-room task list --state rejected` says why; then `task retry ID` or `task cancel ID`"  # noqa: E501
    expect(run("doctor"), 0, rejected=warn)
    expect(run("doctor", "--fix"), 0, rejected=warn)
    assert (inside.state_dir("rejected") / "bad.json").exists()


# adapters ---------------------------------------------------------------------------------------


@pytest.fixture
def bin_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A bin folder first on PATH, then only the system's (no agent CLI of this machine)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    path = os.pathsep.join([str(folder), "/usr/bin", "/bin"])
    monkeypatch.setenv("PATH", path)
    for name in ("claude", "codex"):
        assert shutil.which(name, path=os.pathsep.join(["/usr/bin", "/bin"])) is None, name
    return folder


def script(folder: Path, name: str, body: str) -> Path:
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def test_each_adapter_named_is_found_with_its_version_or_fails_with_how_to_install(
    run: Run, inside: Room, bin_path: Path
) -> None:
    claude = script(bin_path, "claude", 'echo "2.0.1 (Claude Code)"')
    set_gate(inside, "default_adapter", "claude")
    scout = inside.root / "agents" / "scout.md"
    scout.write_text(scout.read_text().replace("adapter:\n", "adapter: codex\n", 1))
    result = run("doctor")
    assert result.exit_code == 15
    assert lines(result)["adapter claude"] == [
        f"OK   adapter claude  {claude}, 2.0.1 (Claude Code) (named by CONTROL.md default_adapter)"
    ]
    assert lines(result)["adapter codex"] == [
        f"FAIL adapter codex  codex is not on the PATH agents get (named by agents/scout.md); {adapter_class('codex').install}"  # noqa: E501
    ]
    script(bin_path, "codex", "echo 'error: no such flag' >&2; exit 2")
    assert lines(run("doctor"))["adapter codex"] == [
        f"WARN adapter codex  {bin_path / 'codex'} found, but `codex --version` exited 2: "
        "error: no such flag (named by agents/scout.md); run `codex --version` to see why"
    ]


def test_an_unknown_adapter_fails(run: Run, inside: Room) -> None:
    set_gate(inside, "default_adapter", "nope")
    result = run("doctor")
    (line,) = lines(result)["adapter nope"]
    assert result.exit_code == 15
    assert line.startswith(
        "FAIL adapter nope  CONTROL.md default_adapter names 'nope', which is not an adapter (known: "
    )
    assert line.endswith("); fix control-room/CONTROL.md")


def test_an_adapter_setup_the_adapter_refuses_fails(run: Run, inside: Room) -> None:
    set_gate(inside, "adapters", json.dumps({"probe": {"model": "m1"}}))
    line = (
        "FAIL adapter probe  CONTROL.md: adapters.probe: the probe adapter does not act on model (it takes: "
        "none); fix CONTROL.md"
    )
    result = run("doctor")
    assert (result.exit_code, lines(result)["adapter probe"]) == (15, [line])


def test_check_says_hello_through_each_adapter_and_logs_it(
    run: Run, inside: Room, bin_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude = script(
        bin_path,
        "claude",
        f'[ "$1" = --version ] && echo "2.0.1" && exit 0\nexec {sys.executable} {FAKES / "claude"} "$@"',
    )
    set_gate(inside, "default_adapter", "claude")
    set_gate(inside, "adapters", json.dumps({"claude": {"base_url": "http://127.0.0.1:9", "isolated": True}}))
    set_gate(inside, "env_allow", "[FAKE_AGENT_MODE]")  # the fake's own variable reaches it
    named = "named by CONTROL.md default_adapter, CONTROL.md adapters"
    ok = run("doctor", "--check", "--timeout", "20s")
    assert ok.exit_code == 0
    assert lines(ok)["adapter claude"] == [
        f"OK   adapter claude  {claude}, 2.0.1 ({named}); hello: answered in "
        + lines(ok)["adapter claude"][0].split("answered in ")[1]
    ]
    assert lines(ok)["adapter claude"][0].endswith(
        ", tokens 1200/345: Done; here is my report. DECISION: fake claude finished task"
    )
    monkeypatch.setenv("FAKE_AGENT_MODE", "down")
    down = run("doctor", "--check", "--timeout", "20s")
    assert down.exit_code == 15
    assert lines(down)["adapter claude"] == [
        f"FAIL adapter claude  {claude}, 2.0.1 ({named}); hello: claude exited 1 (API "
        "error or max turns reached): API Error: Connection refused; `control-room adapters --check claude` "
        "tries again; see docs/adapters.md"
    ]
    assert [e.outcome for e in entries(inside, "adapter-check")] == ["ok", "fail"]


# git, the repo and its worktrees (real git) -----------------------------------------------------


@pytest.fixture
def repo(tmp_path: Path, inside: Room) -> Path:
    path = make_repo(tmp_path / "proj")
    set_gate(inside, "repo", "../proj")
    set_gate(inside, "base_branch", "main")
    return path


def test_a_repo_on_its_base_branch_is_ok(run: Run, inside: Room, repo: Path) -> None:
    expect(
        run("doctor"),
        0,
        repo=f"OK   repo  {repo} is a git repository on its base branch main",
        worktrees="OK   worktrees  0 worktrees, each registered with git and present",
    )


def test_a_repo_that_is_missing_not_git_or_mid_rebase_fails(
    run: Run, inside: Room, repo: Path, tmp_path: Path
) -> None:
    (repo / ".git" / "rebase-merge").mkdir()
    none = "OK   worktrees  none to check (the repo is not usable)"
    mid = f"FAIL repo  {repo} is in the middle of a rebase; finish or abort it there (no worktree is made or touched until then)"  # noqa: E501
    expect(run("doctor"), 15, repo=mid, worktrees=none)
    set_gate(inside, "repo", "../gone")
    gone = (
        f"FAIL repo  control-room/CONTROL.md: repo {tmp_path / 'gone'} does not exist; fix repo in CONTROL.md"
    )
    expect(run("doctor"), 15, repo=gone, worktrees=none)
    (tmp_path / "plain").mkdir()
    set_gate(inside, "repo", "../plain")
    (line,) = lines(run("doctor"))["repo"]
    assert line.startswith(
        f"FAIL repo  control-room/CONTROL.md: repo {tmp_path / 'plain'} is not a git repository ("
    )


def test_a_repo_off_its_base_branch_warns(run: Run, inside: Room, repo: Path) -> None:
    git(repo, "switch", "-q", "-c", "feature")
    warn = f"WARN repo  {repo} has feature checked out, not the base branch main; `git -C {repo} switch main` (the merge queue waits until then)"  # noqa: E501
    expect(
        run("doctor"),
        0,
        repo=warn,
        worktrees="OK   worktrees  0 worktrees, each registered with git and present",
    )


def test_a_dead_worktree_warns_and_fix_prunes_it_but_leaves_a_stray_folder(
    run: Run, inside: Room, repo: Path
) -> None:
    top = inside.cr / "worktrees"
    git(repo, "worktree", "add", "-q", "-b", "route/r1", str(top / "route-r1"), "main")
    git(repo, "worktree", "add", "-q", "-b", "route/r2", str(top / "route-r2"), "main")
    shutil.rmtree(top / "route-r1")
    (top / "route-odd").mkdir()
    (top / "route-odd" / "notes.txt").write_text("mine\n")
    repo_ok = f"OK   repo  {repo} is a git repository on its base branch main"
    stray = "WARN worktrees  control-room/worktrees/route-odd is not a worktree git knows; look inside, and remove it by hand if nothing there is needed"  # noqa: E501
    dead = "WARN worktrees  1 dead worktree (registered with git, folder gone): control-room/worktrees/route-r1; control-room doctor --fix prunes it (`git worktree prune`)"  # noqa: E501
    expect(run("doctor"), 0, repo=repo_ok, worktrees=[dead, stray])
    result = run("doctor", "--fix")
    assert fixed(result) == [
        f"fixed worktrees: pruned control-room/worktrees/route-r1 (`git worktree prune` in {repo})"
    ]
    expect(result, 0, repo=repo_ok, worktrees=[stray])
    listed = git(repo, "worktree", "list", "--porcelain")
    assert str(top / "route-r2") in listed and "route-r1" not in listed
    assert (top / "route-odd" / "notes.txt").read_text() == "mine\n"
    assert git(repo, "branch", "--list", "route/r1") == "route/r1"  # the branch and its work stay
    assert doctor_fixes(inside) == [
        ("fixed", f"worktrees: pruned control-room/worktrees/route-r1 (`git worktree prune` in {repo})")
    ]


# disk -------------------------------------------------------------------------------------------


def test_low_disk_fails_below_min_free_mb_and_warns_below_min_free_gb(
    run: Run, inside: Room, disk: Callable[[float], None]
) -> None:
    disk(0.5)
    warn = "WARN disk  0.5 GiB free on the room's disk, below CONTROL.md min_free_gb 1; `control-room cleanup` removes finished tasks' results, oldest first"  # noqa: E501
    expect(run("doctor"), 0, disk=warn)
    disk(32 / 1024)
    fail = "FAIL disk  32.0 MiB free on the room's disk, below CONTROL.md min_free_mb 64; free some space (`control-room cleanup` removes finished tasks' results); cycles claim nothing until then"  # noqa: E501
    expect(run("doctor"), 15, disk=fail)


# through the installed command ------------------------------------------------------------------


def test_the_installed_command_finds_and_fixes_a_broken_room(cr, room: Room) -> None:  # type: ignore[no-untyped-def]
    shutil.rmtree(room.swarm / "running")
    drop_header(room)
    done = cr("doctor")
    assert done.returncode == 15 and done.stderr == ""
    assert done.stdout.splitlines()[0] == (
        "FAIL layout  swarm/running/ is missing; "
        "control-room doctor --fix recreates it (as `control-room init` does)"
    )
    assert done.stdout.splitlines()[2] == (
        "FAIL ledger  control-room/LEDGER.md has no table header; control-room doctor --fix restores it"
    )
    fixed_run = cr("doctor", "--fix")
    assert fixed_run.stdout.splitlines()[:2] == [
        "fixed ledger: put the table header back into control-room/LEDGER.md, above its 1 line",
        "fixed layout: recreated swarm/running/",
    ]
    assert "FAIL" not in fixed_run.stdout
    assert (fixed_run.returncode, cr("ledger", "verify").returncode) == (0, 0)
    assert events(room.ledger) == ["init", "doctor-fix", "doctor-fix"]


def test_a_schedule_that_stopped_firing_is_a_warning(
    run: Run, inside: Room, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import time

    monkeypatch.setenv("HOME", str(tmp_path))  # where the launchd plist goes (no launchctl here)
    assert run("schedule", "--launchd", "--every", "1h", "--install").exit_code == 0
    queue(inside, "t1")
    assert run("cycle").exit_code == errors.PASSED
    (ok,) = lines(run("doctor"))["schedule"]
    assert ok.startswith("OK   schedule  launchd every 1h installed; a cycle last ran at 20")
    later = time.time() + 4 * 3600  # four periods on, and no cycle since
    monkeypatch.setattr("control_room.dispatch.doctor.tools.time.time", lambda: later)
    (warn,) = lines(run("doctor"))["schedule"]
    assert warn.startswith("WARN schedule  launchd every 1h installed, but a cycle last ran at 20")
    assert warn.endswith(
        "more than three periods ago; check that the scheduler runs (`systemctl status cron`, "
        "`launchctl list`, `systemctl --user list-timers`) and read control-room/cycle.log"
    )


def test_a_clone_without_the_merge_drivers_is_a_warning(cr, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_repo(tmp_path / "project")
    room = Room(root)
    scaffold.init(root)  # the library's init: the files, no driver registered
    env = {**cr.env, "CONTROL_ROOM": str(root)}

    def merge_line() -> str:
        done = subprocess.run(
            [cr.exe, "doctor"], env=env, cwd=root, capture_output=True, text=True, timeout=120
        )
        return next(ln for ln in done.stdout.splitlines() if " merge-drivers " in ln)

    assert merge_line() == (
        "WARN merge-drivers  this clone's git config lacks control-room-ledger, control-room-routes, "
        "control-room-view: a pull where both sides changed those files conflicts; `control-room init` "
        "registers them (once per clone: git does not copy its config)")  # fmt: skip
    assert (
        subprocess.run([cr.exe, "init", str(root)], env=env, capture_output=True, timeout=120).returncode == 0
    )
    assert merge_line() == (
        "OK   merge-drivers  LEDGER.md, ROUTES.md and the views merge with control-room-ledger, "
        "control-room-routes, control-room-view")  # fmt: skip
    git(root, "config", "--unset", "merge.control-room-view.driver")
    assert merge_line().startswith("WARN merge-drivers  this clone's git config lacks control-room-view: ")
    # a room made before the routes and view drivers: its .gitattributes names only the ledger's
    (room.cr / ".gitattributes").write_text("LEDGER.md merge=control-room-ledger\n")
    assert merge_line() == (
        "WARN merge-drivers  control-room/.gitattributes lacks `ROUTES.md merge=control-room-routes`, "
        "`CURRENT_CONTEXT.md merge=control-room-view`, `DIGEST.md merge=control-room-view` "
        "(a room made before the drivers: git's text merge conflicts, or `merge=union` duplicates lines); "
        "delete control-room/.gitattributes and run `control-room init` again")  # fmt: skip
    (room.cr / ".gitattributes").unlink()  # the fix it names
    assert (
        subprocess.run([cr.exe, "init", str(root)], env=env, capture_output=True, timeout=120).returncode == 0
    )
    assert merge_line().startswith("OK   merge-drivers  ")
