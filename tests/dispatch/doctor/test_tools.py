"""dispatch.doctor.tools: the checks of what the room runs with (the adapters it names,
their versions, git, the repo and its worktrees, the disk, the schedule, the merge drivers), their
exact findings, and the worktrees' repair (``git worktree prune``)."""

from __future__ import annotations

import shutil
from collections import namedtuple
from collections.abc import Callable
from pathlib import Path

import pytest
from support import entries, git, make_repo, set_gate

from control_room import adapters
from control_room.dispatch.doctor import checks, tools
from control_room.dispatch.doctor.finding import FAIL, OK, WARN, Context, Finding
from control_room.dispatch.schedule import install
from control_room.ledger import append, events
from control_room.room import gitmerge
from control_room.room.layout import Room

NOT_CHECKED = "not checked: CONTROL.md does not parse (see the settings check)"
NOON = "2026-01-31T12:00:00Z"
NOON_S = 1769860800.0
Usage = namedtuple("Usage", "total used free")


def ctx(room: Room, **kw: bool) -> Context:
    return checks.context(room, **kw)


def script(folder: Path, name: str, body: str) -> Path:
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def bin_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A bin folder alone on PATH: no git, no agent CLI, but what a test puts there."""
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", str(folder))
    return folder


@pytest.fixture
def free(monkeypatch: pytest.MonkeyPatch) -> Callable[[int], None]:
    """Set the bytes free on the room's disk."""

    def set_free(n: int) -> None:
        monkeypatch.setattr(tools.shutil, "disk_usage", lambda _p: Usage(2**40, 0, n))

    return set_free


# adapters ---------------------------------------------------------------------------------------


def test_adapters_are_not_checked_while_control_md_does_not_parse(room: Room) -> None:
    set_gate(room, "max_parallel", "lots")
    assert tools.adapter_checks(ctx(room)) == [Finding("adapters", WARN, NOT_CHECKED)]


def test_an_adapter_named_twice_is_checked_once_with_both_places(room: Room) -> None:
    set_gate(room, "orchestrator_adapter", "probe")
    assert tools.adapter_checks(ctx(room)) == [
        Finding(
            "adapter probe",
            OK,
            "built in: runs each task's own command (named by CONTROL.md default_adapter, "
            "CONTROL.md orchestrator_adapter)",
        )
    ]


def test_a_role_naming_no_adapter_is_sent_to_its_own_file(room: Room) -> None:
    scout = room.root / "agents" / "scout.md"
    scout.write_text(scout.read_text().replace("adapter:\n", "adapter: nope\n", 1))
    found = tools.adapter_checks(ctx(room))
    assert found[1] == Finding(
        "adapter nope",
        FAIL,
        f"agents/scout.md names 'nope', which is not an adapter (known: {', '.join(adapters.names())})",
        "fix agents/scout.md",
    )


def test_a_role_file_that_cannot_be_read_is_a_fail_of_its_own(room: Room) -> None:
    (room.root / "agents" / "analyst.md").write_text("---\nadapter: [\n---\nbody\n")
    assert tools.adapter_checks(ctx(room))[0] == Finding(
        "role analyst",
        FAIL,
        "agents/analyst.md: line 2: front matter is not valid YAML: expected the node content, but found "
        "'<stream end>'",
        "fix agents/analyst.md",
    )


def test_a_person_s_command_is_found_but_never_run_to_ask_its_version(room: Room, bin_path: Path) -> None:
    ran = room.root / "ran"
    agent = script(bin_path, "my-agent", f"touch {ran}")
    set_gate(room, "default_adapter", "command")
    set_gate(room, "command_argv", '["my-agent", "--brief", "{brief}"]')
    assert tools.adapter_checks(ctx(room)) == [
        Finding("adapter command", OK, f"{agent} (named by CONTROL.md default_adapter)")
    ]
    assert not ran.exists()


def test_the_command_adapter_without_its_argv_fails_with_what_it_needs(room: Room) -> None:
    set_gate(room, "default_adapter", "command")
    assert tools.adapter_checks(ctx(room)) == [
        Finding(
            "adapter command",
            FAIL,
            'the command adapter needs command_argv (a list such as ["my-agent", "--brief", "{brief}"]) in '
            "CONTROL.md or the role's front matter",
        )
    ]


def test_a_built_in_adapter_gets_no_hello(room: Room) -> None:
    assert tools.adapter_checks(ctx(room, hello=True)) == tools.adapter_checks(ctx(room))
    assert entries(room, "adapter-check") == []


# versions ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ('echo "claude 2.0.1"; echo second line', ("claude 2.0.1", "")),
        ('echo "  v1.2 on stderr  " >&2', ("v1.2 on stderr", "")),  # stderr when stdout is empty
        ("true", ("(it printed nothing)", "")),
        (f"echo {'x' * 100}", ("x" * 80, "")),
        ("exit 3", (None, "exited 3")),
        ("echo 'error: no such flag' >&2; exit 2", (None, "exited 2: error: no such flag")),
    ],
)
def test_version_is_the_first_line_printed_or_what_went_wrong(
    tmp_path: Path, body: str, said: tuple[str | None, str]
) -> None:
    assert tools._version(str(script(tmp_path, "cli", body)), tmp_path) == said


def test_a_version_that_never_comes_or_cannot_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tools, "VERSION_TIMEOUT_S", 0.1)
    hangs = script(tmp_path, "hangs", "exec sleep 30")
    assert tools._version(str(hangs), tmp_path) == (None, "did not answer within 0.1s")
    plain = tmp_path / "plain"
    plain.write_text("not a program\n")  # not executable
    assert tools._version(str(plain), tmp_path) == (
        None,
        f"could not run ({plain}: command not found on PATH)",
    )


# git and the repo -------------------------------------------------------------------------------


def test_git_missing_is_a_warning_without_a_repo_and_a_fail_with_one(room: Room, bin_path: Path) -> None:
    assert tools.git_check(ctx(room)) == [
        Finding(
            "git", WARN, "git is not installed (needed only with repo: or a room kept in git)", "install git"
        )
    ]
    set_gate(room, "repo", "../proj")
    assert tools.git_check(ctx(room)) == [
        Finding("git", FAIL, "git is not installed (CONTROL.md names a repo)", "install git")
    ]


def test_a_git_that_cannot_say_its_version(room: Room, bin_path: Path) -> None:
    broken = script(bin_path, "git", "echo 'git: cannot load libcurl' >&2; exit 127")
    assert tools.git_check(ctx(room)) == [
        Finding(
            "git", WARN, f"{broken}: `git --version` exited 127: git: cannot load libcurl", "reinstall git"
        )
    ]


def test_git_ok_says_its_version_and_where(room: Room, bin_path: Path) -> None:
    script(bin_path, "git", 'echo "git version 9.9.9"')
    assert tools.git_check(ctx(room)) == [Finding("git", OK, f"git version 9.9.9 at {bin_path / 'git'}")]


def test_repo_without_a_base_branch_says_what_is_checked_out(room: Room, tmp_path: Path) -> None:
    assert tools.repo_check(ctx(room)) == [
        Finding("repo", OK, "none (CONTROL.md repo: is empty): agents work in the work dir")
    ]
    repo = make_repo(tmp_path / "proj")
    set_gate(room, "repo", "../proj")
    first = "(base_branch is empty: the first worktree sets it to the current branch)"
    assert tools.repo_check(ctx(room)) == [Finding("repo", OK, f"{repo} is a git repository on main {first}")]
    git(repo, "switch", "-q", "--detach")
    assert tools.repo_check(ctx(room)) == [
        Finding("repo", OK, f"{repo} is a git repository with no branch checked out {first}")
    ]


def test_repo_is_not_checked_while_control_md_does_not_parse(room: Room) -> None:
    set_gate(room, "max_parallel", "lots")
    assert tools.repo_check(ctx(room)) == [Finding("repo", WARN, NOT_CHECKED)]
    assert tools.worktree_check(ctx(room)) == [
        Finding("worktrees", OK, "none to check (the repo is not usable)")
    ]


def test_prune_drops_the_dead_worktree_and_keeps_the_live_one(room: Room, tmp_path: Path) -> None:
    assert tools.worktree_check(ctx(room)) == [Finding("worktrees", OK, "none to check (no repo)")]
    repo = make_repo(tmp_path / "proj")
    set_gate(room, "repo", "../proj")
    set_gate(room, "base_branch", "main")
    top = room.cr / "worktrees"
    git(repo, "worktree", "add", "-q", "-b", "route/r1", str(top / "route-r1"), "main")
    git(repo, "worktree", "add", "-q", "-b", "route/r2", str(top / "route-r2"), "main")
    shutil.rmtree(top / "route-r1")
    assert tools.worktree_check(ctx(room)) == [
        Finding(
            "worktrees",
            WARN,
            "1 dead worktree (registered with git, folder gone): control-room/worktrees/route-r1",
            "control-room doctor --fix prunes it (`git worktree prune`)",
            fixable=True,
        )
    ]
    assert tools.prune(ctx(room)) == [
        f"pruned control-room/worktrees/route-r1 (`git worktree prune` in {repo})"
    ]
    assert tools.worktree_check(ctx(room)) == [
        Finding("worktrees", OK, "1 worktree, each registered with git and present")
    ]
    assert git(repo, "branch", "--list", "route/r1") == "route/r1"  # its branch and work stay
    assert entries(room, "doctor-fix") == []  # the line is doctor's, once the repair returns


# disk -------------------------------------------------------------------------------------------


def test_disk_at_exactly_min_free_mb_is_enough(room: Room, free: Callable[[int], None]) -> None:
    set_gate(room, "min_free_gb", "0")
    free(64 * 2**20)
    assert tools.disk(ctx(room)) == [Finding("disk", OK, "0.1 GiB free on the room's disk")]
    free(64 * 2**20 - 1)
    (found,) = tools.disk(ctx(room))
    assert (found.status, found.detail) == (
        FAIL,
        "64.0 MiB free on the room's disk, below CONTROL.md min_free_mb 64",
    )


def test_min_free_gb_0_never_warns(room: Room, free: Callable[[int], None]) -> None:
    free(2**30 - 1)
    assert tools.disk(ctx(room))[0].status == WARN
    set_gate(room, "min_free_gb", "0")
    assert tools.disk(ctx(room)) == [Finding("disk", OK, "1.0 GiB free on the room's disk")]


def test_disk_is_not_checked_while_control_md_does_not_parse(room: Room) -> None:
    set_gate(room, "max_parallel", "lots")
    assert tools.disk(ctx(room)) == [Finding("disk", WARN, NOT_CHECKED)]


# the schedule -----------------------------------------------------------------------------------


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A home of its own: where a launchd plist goes (no launchctl here)."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    return tmp_path


def a_cycle_ran_at_noon(room: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as m:
        m.setattr("control_room.ledger.write.now_iso", lambda t=None: NOON)
        append(room.ledger, events.CLAIM, task="t1", detail="round 1, slot 0, pid 1")


def test_no_schedule_says_when_a_cycle_last_ran(
    room: Room, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    none = "none installed for this room (cycles by hand or `run`)"
    assert tools.schedule_check(ctx(room)) == [Finding("schedule", OK, f"{none}; no cycle has run yet")]
    a_cycle_ran_at_noon(room, monkeypatch)
    assert tools.schedule_check(ctx(room)) == [Finding("schedule", OK, f"{none}; a cycle last ran at {NOON}")]


def test_a_schedule_is_late_after_three_periods_without_a_cycle(
    room: Room, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install.install_launchd(room, 3600, 1)
    assert tools.schedule_check(ctx(room)) == [
        Finding("schedule", OK, "launchd every 1h installed; no cycle has run yet")
    ]
    a_cycle_ran_at_noon(room, monkeypatch)
    monkeypatch.setattr(tools.time, "time", lambda: NOON_S + 3 * 3600)
    assert tools.schedule_check(ctx(room)) == [
        Finding("schedule", OK, f"launchd every 1h installed; a cycle last ran at {NOON}")
    ]
    monkeypatch.setattr(tools.time, "time", lambda: NOON_S + 3 * 3600 + 1)
    assert tools.schedule_check(ctx(room)) == [
        Finding(
            "schedule",
            WARN,
            f"launchd every 1h installed, but a cycle last ran at {NOON}, more than three periods ago",
            "check that the scheduler runs (`systemctl status cron`, `launchctl list`, "
            "`systemctl --user list-timers`) and read control-room/cycle.log",
        )
    ]


def test_a_schedule_edited_by_hand_is_shown_without_its_period(
    room: Room, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install.install_launchd(room, 3600, 1)
    install.plist_path(room).write_text("edited by hand\n")  # its period can no longer be read
    a_cycle_ran_at_noon(room, monkeypatch)
    monkeypatch.setattr(tools.time, "time", lambda: NOON_S + 30 * 86400)
    assert tools.schedule_check(ctx(room)) == [
        Finding("schedule", OK, f"launchd every ? installed; a cycle last ran at {NOON}")
    ]


# the merge drivers ------------------------------------------------------------------------------


def test_merge_drivers_outside_git_and_in_a_clone_without_and_with_them(room: Room, tmp_path: Path) -> None:
    assert tools.merge_drivers_check(ctx(room)) == [
        Finding("merge-drivers", OK, "the room is in no git work tree: nothing to merge")
    ]
    git(room.root, "init", "-q", "-b", "main")
    assert tools.merge_drivers_check(ctx(room)) == [
        Finding(
            "merge-drivers",
            WARN,
            "this clone's git config lacks control-room-ledger, control-room-routes, control-room-view: "
            "a pull where both sides changed those files conflicts",
            "`control-room init` registers them (once per clone: git does not copy its config)",
        )
    ]
    gitmerge.register(room.root)
    assert tools.merge_drivers_check(ctx(room)) == [
        Finding(
            "merge-drivers",
            OK,
            "LEDGER.md, ROUTES.md and the views merge with control-room-ledger, control-room-routes, "
            "control-room-view",
        )
    ]
    (room.cr / ".gitattributes").write_text("LEDGER.md merge=control-room-ledger\n")  # a room of before
    (found,) = tools.merge_drivers_check(ctx(room))
    assert (found.status, found.fix) == (
        WARN,
        "delete control-room/.gitattributes and run `control-room init` again",
    )
    assert found.detail.startswith(
        "control-room/.gitattributes lacks `ROUTES.md merge=control-room-routes`, "
    )


def test_the_checks_and_their_one_repair() -> None:
    assert [(c.name, c.repair) for c in tools.CHECKS] == [
        ("adapters", None),
        ("git", None),
        ("repo", None),
        ("worktrees", tools.prune),
        ("disk", None),
        ("schedule", None),
        ("merge-drivers", None),
    ]
