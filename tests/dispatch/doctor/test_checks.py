"""dispatch.doctor.checks: the registry of checks and repairs, the context, and diagnose: every
check once, --fix's repairs (the ledger's first), one doctor-fix line each, the repaired checks run
again and marked fixed, a repair that fails or whose line cannot be written."""

from __future__ import annotations

import errno
import shutil
from collections import namedtuple
from pathlib import Path

import pytest
from support import entries, set_gate, snapshot

from control_room import errors
from control_room.dispatch.doctor import checks, reviewers, room_files, shared_room, tools
from control_room.dispatch.doctor.finding import FAIL, OK, Check, Context, Finding
from control_room.ledger.line import HEADER
from control_room.room.layout import Room

Usage = namedtuple("Usage", "total used free")
NAMES = ["layout", "settings", "ledger", "claims", "rejected", "lenses", "graveyard", "adapters", "git",
         "repo", "worktrees", "disk", "schedule", "merge-drivers", "reviewers", "shared"]  # fmt: skip


@pytest.fixture(autouse=True)
def disk(monkeypatch: pytest.MonkeyPatch) -> None:
    """The room's disk has 100 GiB free, whatever this machine's has."""
    monkeypatch.setattr(tools.shutil, "disk_usage", lambda _p: Usage(2**40, 0, 100 * 2**30))


def drop_header(room: Room) -> None:
    lines = room.ledger.read_text().split("\n")
    room.ledger.write_text("\n".join(ln for ln in lines if ln != HEADER and not ln.startswith("|---")))


def files(room: Room) -> dict[Path, bytes]:
    """The room's files but its disposable caches (which a read may write)."""
    return {p: b for p, b in snapshot(room.root).items() if room.cache not in p.parents}


def fixes(room: Room) -> list[tuple[str, str]]:
    return [(e.outcome, e.detail) for e in entries(room, "doctor-fix")]


def test_the_registry_runs_the_room_checks_then_the_tools_then_the_shared_room() -> None:
    assert (*room_files.CHECKS, *tools.CHECKS, *reviewers.CHECKS, *shared_room.CHECKS) == checks.CHECKS
    assert [c.name for c in checks.CHECKS] == NAMES
    # --fix repairs only these: missing folders, the ledger's header, dead claims, dead worktrees
    assert [c.name for c in checks.CHECKS if c.repair is not None] == [
        "layout",
        "ledger",
        "claims",
        "worktrees",
    ]


def test_context_holds_the_settings_or_why_there_are_none(room: Room) -> None:
    ctx = checks.context(room, hello=True, timeout_s=5.0)
    assert ctx.settings is not None and ctx.settings.default_adapter == "probe"
    assert (ctx.room, ctx.settings_error, ctx.hello, ctx.timeout_s) == (room, None, True, 5.0)
    set_gate(room, "max_parallel", "lots")
    broken = checks.context(room)
    assert broken.settings is None
    assert broken.settings_error == (f"{room.control}: max_parallel must be a positive integer (got 'lots')")


def test_examine_runs_each_check_once_in_order(room: Room) -> None:
    seen: list[str] = []

    def one(name: str) -> Check:
        def run(ctx: Context) -> list[Finding]:
            seen.append(name)
            return [Finding(name, OK, "fine")]

        return Check(name, run)

    a, b = one("a"), one("b")
    assert checks.examine(checks.context(room), (a, b)) == [
        (a, [Finding("a", OK, "fine")]),
        (b, [Finding("b", OK, "fine")]),
    ]
    assert seen == ["a", "b"]


def test_a_fresh_room_has_one_finding_per_check_and_nothing_failed(room: Room) -> None:
    found = checks.diagnose(room)
    assert [f.check for f in found.findings] == [*NAMES[:7], "adapter probe", *NAMES[8:]]
    assert {f.status for f in found.findings} == {OK}
    assert (found.failed, found.repairs) == (False, [])


def test_without_fix_nothing_is_touched(room: Room) -> None:
    shutil.rmtree(room.swarm / "results")
    drop_header(room)
    before = files(room)
    found = checks.diagnose(room)
    assert found.failed and found.repairs == []
    assert [f.status for f in found.findings[:3]] == [FAIL, OK, FAIL]
    assert not any(f.fixed for f in found.findings)
    assert files(room) == before


def test_fix_restores_the_ledger_first_then_the_rest_each_with_its_line(room: Room) -> None:
    shutil.rmtree(room.swarm / "results")
    drop_header(room)
    heard: list[str] = []
    found = checks.diagnose(room, fix=True, say=heard.append)
    done = [
        "ledger: put the table header back into control-room/LEDGER.md, above its 1 line",
        "layout: recreated swarm/results/",
    ]
    assert found.repairs == heard == done
    assert fixes(room) == [("fixed", line) for line in done]
    assert not found.failed
    assert [(f.check, f.status, f.fixed) for f in found.findings[:4]] == [
        ("layout", OK, True),
        ("settings", OK, False),
        ("ledger", OK, True),
        ("claims", OK, False),
    ]


def test_fix_with_nothing_fixable_repairs_nothing_and_writes_nothing(room: Room) -> None:
    set_gate(room, "max_parallel", "lots")
    before = files(room)
    found = checks.diagnose(room, fix=True)
    assert found.failed and found.repairs == []
    assert not any(f.fixed for f in found.findings)
    assert files(room) == before


def test_a_repair_whose_ledger_line_cannot_be_written_says_so(room: Room) -> None:
    shutil.rmtree(room.swarm / "results")
    room.ledger.unlink()
    found = checks.diagnose(room, fix=True)
    assert found.repairs == [
        "layout: recreated swarm/results/ (its ledger line could not be written: "
        f"{room.ledger} is missing; restore it (git checkout) or run `control-room init` to start a new one)"
    ]
    assert (room.swarm / "results").is_dir()
    assert [(f.check, f.status, f.fixed) for f in found.findings[:3]] == [
        ("layout", OK, True),
        ("settings", OK, False),
        ("ledger", FAIL, False),  # a missing ledger is not doctor's to make
    ]


@pytest.mark.parametrize(
    ("exc", "said"),
    [
        (PermissionError(errno.EACCES, "Permission denied", "/r/swarm/results"),
         "/r/swarm/results: Permission denied"),
        (OSError(errno.ENOSPC, "No space left on device"), "No space left on device"),
        (errors.ConflictError("control-room/.worktrees.lock was not free in time"),
         "control-room/.worktrees.lock was not free in time"),
    ],
)  # fmt: skip
def test_a_repair_that_fails_is_one_failed_line(room: Room, exc: Exception, said: str) -> None:
    def repair(ctx: Context) -> list[str]:
        raise exc

    check = Check("layout", lambda ctx: [Finding("layout", FAIL, "missing", fixable=True)], repair)
    assert checks._repair(room, checks.context(room), check) == [f"layout: could not repair: {said}"]
    assert fixes(room) == [("failed", f"layout: could not repair: {said}")]


def test_a_repair_that_did_several_things_writes_a_line_for_each(room: Room) -> None:
    check = Check("claims", lambda ctx: [], lambda ctx: ["recovered t1: gone", "recovered t2: gone"])
    assert checks._repair(room, checks.context(room), check) == [
        "claims: recovered t1: gone",
        "claims: recovered t2: gone",
    ]
    assert fixes(room) == [("fixed", "claims: recovered t1: gone"), ("fixed", "claims: recovered t2: gone")]


def test_a_check_that_cannot_run_is_one_fail_and_the_checks_after_it_still_run(room: Room) -> None:
    shutil.rmtree(room.root / "agents")
    (room.root / "agents").write_text("not a folder\n", encoding="utf-8")
    found = {f.check: f for f in checks.diagnose(room).findings if f.status == FAIL}
    assert found["adapters"].detail == f"could not check: {room.root}/agents/engineer.md: Not a directory"
    assert found["layout"].detail == "agents is a file where the room needs a folder"  # what says why
    assert [c.name for c, _ in checks.examine(checks.context(room))] == NAMES


def test_a_check_raising_a_room_error_is_a_fail_naming_it(room: Room) -> None:
    def broken(_ctx: Context) -> list[Finding]:
        raise errors.InvalidError("x.md: line 2: front matter is not valid YAML")

    check = Check("broken", broken)
    [(_, findings)] = checks.examine(checks.context(room), (check,))
    assert [f.line() for f in findings] == [
        "FAIL broken  could not check: x.md: line 2: front matter is not valid YAML"
    ]
