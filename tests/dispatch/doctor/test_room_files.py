"""dispatch.doctor.room_files: the checks of the room's own files (layout, settings, ledger,
dead claims, rejected files), their exact findings, and the repairs of layout, ledger and claims."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from support import data_lines, entries, queue, set_gate, snapshot, where

from control_room.dispatch.doctor import checks, room_files
from control_room.dispatch.doctor.finding import FAIL, OK, WARN, Context, Finding
from control_room.dispatch.round import claims
from control_room.ledger.line import HEADER
from control_room.room import scaffold, swarm
from control_room.room.layout import Room

FOLDERS = sum(1 for item in scaffold.plan() if item.is_dir)
FIX_FOLDERS = "control-room doctor --fix recreates them (as `control-room init` does)"
NOT_CHECKED = "not checked: CONTROL.md does not parse (see the settings check)"


def ctx(room: Room) -> Context:
    return checks.context(room)


def unwritable(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    """``path`` refuses writes as a folder or file without write permission would (the tests run
    as any user, root included, for whom chmod refuses nothing)."""
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if Path(p) == path else real(p, mode, **kw))


def dead_claim(room: Room, tid: str) -> str:
    queue(room, tid)
    swarm.move(room, tid, "queue", "running")
    claims.write_claim(room, tid, {"pid": 999_999_999, "host": claims.host(room), "slot": 0, "deadline": 0})
    return f"its cycle (pid 999999999 on {claims.host(room)}) is gone"


def drop_header(room: Room) -> None:
    text = room.ledger.read_text()
    room.ledger.write_text(
        "\n".join(ln for ln in text.split("\n") if ln != HEADER and not ln.startswith("|---"))
    )


# layout -----------------------------------------------------------------------------------------


def test_layout_of_a_fresh_room_is_one_ok(room: Room) -> None:
    assert room_files.layout(ctx(room)) == [
        Finding("layout", OK, f"all {FOLDERS} folders of a room are there; the cycle's are writable")
    ]


def test_layout_names_five_missing_folders_and_counts_the_rest(room: Room) -> None:
    for name in ("swarm/outbox", "swarm/results", "agents/lenses", "skills", "intelligence", "graveyard"):
        shutil.rmtree(room.root / name)
    shutil.rmtree(room.swarm / "to-test")
    assert room_files.layout(ctx(room)) == [
        Finding(
            "layout",
            FAIL,  # the cycle writes in swarm/outbox/ and swarm/results/
            "swarm/to-test/, swarm/outbox/, swarm/results/, skills/, intelligence/ and 2 more are missing",
            FIX_FOLDERS,
            fixable=True,
        )
    ]


def test_missing_folders_no_cycle_writes_in_are_a_warning(room: Room) -> None:
    shutil.rmtree(room.root / "skills")
    shutil.rmtree(room.root / "graveyard")
    (found,) = room_files.layout(ctx(room))
    assert (found.status, found.detail, found.fixable) == (WARN, "skills/, graveyard/ are missing", True)


def test_the_merge_queues_folders_are_needed_with_a_repo(room: Room) -> None:
    shutil.rmtree(room.swarm / "to-test")
    assert room_files.layout(ctx(room))[0].status == WARN
    set_gate(room, "repo", "../proj")
    assert room_files.layout(ctx(room))[0].status == FAIL


def test_make_folders_recreates_the_missing_folders_and_nothing_else(room: Room) -> None:
    shutil.rmtree(room.swarm / "results")
    shutil.rmtree(room.root / "agents" / "lenses")  # its lens files are not doctor's to write
    room.routes.unlink()
    assert room_files.make_folders(ctx(room)) == ["recreated swarm/results/, agents/lenses/"]
    assert (room.swarm / "results").is_dir() and list((room.root / "agents" / "lenses").iterdir()) == []
    assert not room.routes.exists()
    assert room_files.make_folders(ctx(room)) == []
    assert room_files.layout(ctx(room))[0].status == WARN  # only the file is left missing


def test_a_file_where_a_folder_belongs_is_not_fixable(room: Room) -> None:
    shutil.rmtree(room.swarm / "outbox")
    (room.swarm / "outbox").write_text("mine\n")
    assert room_files.layout(ctx(room)) == [
        Finding(
            "layout",
            FAIL,
            "swarm/outbox is a file where the room needs a folder",
            "move it away, then control-room doctor --fix recreates the folder",
        )
    ]
    assert room_files.make_folders(ctx(room)) == []
    assert (room.swarm / "outbox").read_text() == "mine\n"


def test_a_folder_the_cycle_cannot_write_in_fails(room: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    unwritable(monkeypatch, room.state_dir("queue"))
    assert room_files.layout(ctx(room)) == [
        Finding("layout", FAIL, "swarm/queue/ is not writable", "give this user write permission on it")
    ]


def test_missing_files_commands_read_are_a_warning_init_repairs(room: Room) -> None:
    room.routes.unlink()
    room.digest.unlink()
    (room.root / "agents" / "engineer.md").unlink()
    assert room_files.layout(ctx(room)) == [
        Finding(
            "layout",
            WARN,
            "control-room/ROUTES.md, control-room/DIGEST.md, agents/engineer.md are missing",
            "`control-room init` writes missing files again (it never replaces one)",
        )
    ]


# settings ---------------------------------------------------------------------------------------


def test_settings_of_a_fresh_room_are_ok(room: Room) -> None:
    assert room_files.settings(ctx(room)) == [
        Finding("settings", OK, "control-room/CONTROL.md parses and its values are valid")
    ]


def test_a_missing_control_md_says_how_to_restore_it(room: Room) -> None:
    room.control.unlink()
    assert room_files.settings(ctx(room)) == [
        Finding(
            "settings",
            FAIL,
            "control-room/CONTROL.md is missing: the gate is gone, so nothing runs",
            "restore it (git checkout) or run `control-room init` to write a default one",
        )
    ]


def test_a_control_md_that_does_not_parse_is_shown_whole_with_where_to_fix_it(room: Room) -> None:
    room.control.write_text("no front matter\n")
    assert room_files.settings(ctx(room)) == [
        Finding(
            "settings",
            FAIL,
            "control-room/CONTROL.md: no front matter: the limits (max_parallel, daily_budget_usd, ...) "
            "belong between --- lines at the top; `control-room init` writes a default one",
            "fix it in control-room/CONTROL.md",
        )
    ]


def test_the_work_dir_must_exist_unless_agents_work_in_a_repo(room: Room) -> None:
    set_gate(room, "workdir", "nowhere")
    assert room_files.settings(ctx(room)) == [
        Finding(
            "settings",
            FAIL,
            f"CONTROL.md: workdir {room.root / 'nowhere'} does not exist",
            "create it or fix workdir in control-room/CONTROL.md",
        )
    ]
    set_gate(room, "repo", "../proj")  # worktrees of the repo are the work dirs then
    assert [f.status for f in room_files.settings(ctx(room))] == [OK]


# ledger -----------------------------------------------------------------------------------------


def test_a_fresh_ledger_is_ok(room: Room) -> None:
    assert room_files.ledger(ctx(room)) == [
        Finding("ledger", OK, "control-room/LEDGER.md has its header; its hash chain holds")
    ]


def test_an_empty_or_headless_ledger_is_fixable_a_missing_one_is_not(room: Room) -> None:
    fix = "control-room doctor --fix restores it"
    drop_header(room)
    assert room_files.ledger(ctx(room)) == [
        Finding("ledger", FAIL, "control-room/LEDGER.md has no table header", fix, fixable=True)
    ]
    room.ledger.write_text("")
    assert room_files.ledger(ctx(room)) == [
        Finding("ledger", FAIL, "control-room/LEDGER.md is empty", fix, fixable=True)
    ]
    room.ledger.unlink()
    assert room_files.ledger(ctx(room)) == [
        Finding(
            "ledger",
            FAIL,
            "control-room/LEDGER.md is missing",
            "restore it (git checkout), or `control-room init` starts a new one",
        )
    ]


def test_a_ledger_that_cannot_be_written_fails(room: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    unwritable(monkeypatch, room.ledger)
    assert room_files.ledger(ctx(room)) == [
        Finding(
            "ledger", FAIL, "control-room/LEDGER.md is not writable", "give this user write permission on it"
        )
    ]


def test_a_ledger_that_is_a_link_fails_it_is_never_written_through(room: Room) -> None:
    moved = room.ledger.with_name("LEDGER.md.moved")
    room.ledger.rename(moved)
    room.ledger.symlink_to(moved)  # as an agent's run left it (to a file outside the room, often)
    fix = "put the room's own ledger in its place"
    assert room_files.ledger(ctx(room)) == [
        Finding("ledger", FAIL, f"control-room/LEDGER.md is a link (to {moved})", fix)
    ]


def test_a_torn_last_line_is_a_warning(room: Room) -> None:
    with open(room.ledger, "a", encoding="utf-8") as f:
        f.write("| 2026-01-31T12:00:00Z | half")
    assert room_files.ledger(ctx(room)) == [
        Finding(
            "ledger",
            WARN,
            "the last line of control-room/LEDGER.md has no newline (being written, or torn)",
            "`control-room ledger verify` says which",
        )
    ]


def test_restore_puts_the_header_back_above_every_line(room: Room) -> None:
    assert room_files.restore(ctx(room)) == []  # nothing to do
    lines = data_lines(room.ledger)
    drop_header(room)
    assert room_files.restore(ctx(room)) == [
        "put the table header back into control-room/LEDGER.md, above its 1 line"
    ]
    assert data_lines(room.ledger) == lines
    assert room_files.ledger(ctx(room))[0].status == OK


# claims -----------------------------------------------------------------------------------------


def test_claims_are_not_checked_while_control_md_does_not_parse(room: Room) -> None:
    set_gate(room, "max_parallel", "lots")
    assert room_files.dead_claims(ctx(room)) == [Finding("claims", WARN, NOT_CHECKED)]


def test_dead_claims_are_listed_each_with_why(room: Room) -> None:
    assert room_files.dead_claims(ctx(room)) == [Finding("claims", OK, "no dead claims (0 tasks running)")]
    why1, why2 = dead_claim(room, "t1"), dead_claim(room, "t2")
    assert room_files.dead_claims(ctx(room)) == [
        Finding(
            "claims",
            WARN,
            f"2 dead claims in swarm/running/: t1 ({why1}); t2 ({why2})",
            "control-room doctor --fix recovers them as the next cycle would",
            fixable=True,
        )
    ]


def test_recover_puts_a_dead_claims_task_back_in_the_queue_with_a_ledger_line(room: Room) -> None:
    why = dead_claim(room, "t1")
    assert room_files.recover(ctx(room)) == [
        f"recovered t1: {why}; back in the queue, no round used (dispatcher death 1 of 3)"
    ]
    assert where(room, "t1") == ["queue"] and not claims.claim_path(room, "t1").exists()
    assert [e.task for e in entries(room, "recover")] == ["t1"]
    assert room_files.dead_claims(ctx(room))[0].status == OK
    before = snapshot(room.root)
    assert room_files.recover(ctx(room)) == []
    assert snapshot(room.root) == before


# rejected files ---------------------------------------------------------------------------------


def test_rejected_files_are_counted_without_their_reasons(room: Room) -> None:
    assert room_files.rejected(ctx(room)) == [Finding("rejected", OK, "no rejected files waiting")]
    folder = room.state_dir("rejected")
    (folder / "a.json").write_text("{}")
    (folder / "b.json").write_text("{}")
    (folder / "b.json.reason").write_text("not valid\n")
    assert room_files.rejected(ctx(room)) == [
        Finding(
            "rejected",
            WARN,
            "2 rejected files waiting in swarm/rejected/",
            "`control-room task list --state rejected` says why; then `task retry ID` or `task cancel ID`",
        )
    ]


def test_the_checks_and_their_repairs() -> None:
    assert [(c.name, c.repair) for c in room_files.CHECKS] == [
        ("layout", room_files.make_folders),
        ("settings", None),
        ("ledger", room_files.restore),
        ("claims", room_files.recover),
        ("rejected", None),
        ("lenses", None),
        ("graveyard", None),
    ]


# lenses and the graveyard -------------------------------------------------------------------------

KNOWN = "(lenses here: arbiter, claims, correctness, falsifier, security)"


def test_lenses_of_a_fresh_room_name_none(room: Room) -> None:
    assert room_files.lenses(ctx(room)) == [
        Finding("lenses", OK, "no lens is named (CONTROL.md review is empty; no queued task names one)")
    ]


def test_every_lens_named_must_read_in_control_md_and_in_the_queue(room: Room) -> None:
    set_gate(room, "review", "{r1: [security, nosuch], '*': [claims]}")
    queue(room, "t1", review=["claims", "typo"])
    queue(room, "t2", review=["security"])
    found = room_files.lenses(ctx(room))
    assert [(f.status, f.detail) for f in found] == [
        (FAIL, "control-room/CONTROL.md: review: lens 'nosuch' has no file: agents/lenses/nosuch.md is "
               f"missing {KNOWN}"),
        (FAIL, f"swarm/queue/t1.json: review: lens 'typo' has no file: agents/lenses/typo.md is missing "
               f"{KNOWN}"),
    ]  # fmt: skip
    assert found[0].fix == "fix review in CONTROL.md or the lens's file"
    set_gate(room, "review", "[security]")
    (room.state_dir("queue") / "t1.json").unlink()
    assert room_files.lenses(ctx(room)) == [
        Finding(
            "lenses", OK, "every lens named reads (1 lens in CONTROL.md review; 1 queued task naming some)"
        )
    ]


def test_graveyard_counts_the_tombstones_and_names_one_that_does_not_read(room: Room) -> None:
    assert room_files.tombstones(ctx(room)) == [Finding("graveyard", OK, "no tombstones in graveyard/")]
    (room.root / "graveyard" / "a.md").write_text("---\ncandidate: a\nstate: killed\n---\n# a\n")
    (room.root / "graveyard" / "b.md").write_text("---\ncandidate: b\nverdict: 'open\n---\n# b\n")
    assert [f.line() for f in room_files.tombstones(ctx(room))] == [
        "FAIL graveyard  graveyard/b.md: line 3: front matter is not valid YAML: found unexpected end of "
        "stream; fix its front matter (valid YAML between the --- lines) or move it away"
    ]  # fmt: skip
    (room.root / "graveyard" / "b.md").unlink()
    assert room_files.tombstones(ctx(room)) == [
        Finding("graveyard", OK, "1 tombstone in graveyard/, each reads back")
    ]
