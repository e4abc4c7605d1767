"""Files the room cannot read back (issue #24, item 9), through the installed command: a kill
verdict holding front matter markers makes a tombstone that reads back exactly, and doctor names
a tombstone that does not (file and line); a lens misspelt in CONTROL.md or in a queued task's
`review` is found by doctor, and a cycle claims nothing for it (no claim-requeue loop)."""

from __future__ import annotations

import json
from typing import Any

from support import events, probe_task, queue, set_gate, where, written

from control_room import errors
from control_room.room.layout import Room

VERDICT = "no gain\n---\nreopen_if: forged\n...\nstill the verdict"
REOPEN = "---\ninputs grow past 50 MB"
FIELDS = ["--falsifier", "f", "--validator", "true", "--max-cost", "0", "--wall-clock", "60",
          "--kill-condition", "k", "--command", "true"]  # fmt: skip


def test_a_kill_verdict_with_marker_lines_reads_back_exactly(cr: Any, room: Room) -> None:
    assert cr("route", "add", "r1", "--title", "a route").returncode == 0
    killed = cr("route", "kill", "r1", "--verdict", VERDICT, "--reopen-if", REOPEN)
    assert (killed.returncode, killed.stdout) == (0, "route r1 killed: graveyard/r1.md\n"), killed.stderr
    [tomb] = json.loads(cr("graveyard", "list", "--json").stdout)
    assert (tomb["state"], tomb["verdict"], tomb["reopen_if"]) == ("killed", VERDICT, REOPEN)
    refused = cr("task", "add", "--id", "t1", "--route", "r1", "--objective", "o", *FIELDS)
    assert refused.returncode == errors.INVALID
    assert refused.stderr.startswith("Error: task refused: route r1 is killed: see graveyard/r1.md (verdict:")
    doctor = cr("doctor")
    assert "OK   graveyard  1 tombstone in graveyard/, each reads back\n" in doctor.stdout, doctor.stdout
    reopened = cr("route", "reopen", "r1", "--because", "---\nthe inputs grew\n---")
    assert (reopened.returncode, reopened.stderr) == (0, "")
    assert cr("task", "add", "--id", "t1", "--route", "r1", "--objective", "o", *FIELDS).returncode == 0
    again = cr("route", "kill", "r1", "--verdict", "...\n---", "--reopen-if", REOPEN)
    assert again.returncode == 0, again.stderr
    [tomb] = json.loads(cr("graveyard", "list", "--json").stdout)
    assert (tomb["state"], tomb["verdict"]) == ("killed", "...\n---")


def test_doctor_names_a_tombstone_that_does_not_read_back(cr: Any, room: Room) -> None:
    (room.root / "graveyard" / "r2.md").write_text("---\ncandidate: r2\nverdict: [unclosed\n---\n# r2\n")
    doctor = cr("doctor")
    assert doctor.returncode == errors.ROOM_INVALID
    [line] = [ln for ln in doctor.stdout.splitlines() if "graveyard" in ln]
    assert line == (
        "FAIL graveyard  graveyard/r2.md: line 3: front matter is not valid YAML: expected ',' or ']', "
        "but got '<stream end>'; fix its front matter (valid YAML between the --- lines) or move it away"
    )


def test_a_lens_misspelt_in_control_md_is_a_room_fault_before_any_claim(cr: Any, room: Room) -> None:
    set_gate(room, "review", "[corectness]")
    queue(room, "t1")
    doctor = cr("doctor")
    assert doctor.returncode == errors.ROOM_INVALID
    known = "arbiter, claims, correctness, falsifier, security"
    assert (
        "FAIL lenses  control-room/CONTROL.md: review: lens 'corectness' has no file: "
        f"agents/lenses/corectness.md is missing (lenses here: {known}); fix review in CONTROL.md or "
        "the lens's file\n"
    ) in doctor.stdout
    for _ in range(2):
        cycle = cr("cycle")
        assert (cycle.returncode, cycle.stdout) == (errors.ROOM_INVALID, "")
        assert cycle.stderr == (
            f"Error: room invalid: {room.control}: review: lens 'corectness' has no file: "
            f"{room.root}/agents/lenses/corectness.md is missing (lenses here: {known}); fix review in "
            "CONTROL.md or the lens's file; nothing was claimed\n"
        )
    assert where(room, "t1") == ["queue"]
    assert "claim" not in events(room.ledger) and "requeue" not in events(room.ledger)
    set_gate(room, "review", "[correctness]")
    ok = "OK   lenses  every lens named reads (1 lens in CONTROL.md review; 0 queued tasks naming some)\n"
    assert ok in cr("doctor").stdout


def test_a_queued_task_naming_an_unknown_lens_is_a_doctor_error(cr: Any, room: Room) -> None:
    queue(room, "t1", review=["corectness"])
    doctor = cr("doctor")
    assert doctor.returncode == errors.ROOM_INVALID
    [line] = [ln for ln in doctor.stdout.splitlines() if ln.startswith("FAIL lenses")]
    assert line == (
        "FAIL lenses  swarm/queue/t1.json: review: lens 'corectness' has no file: "
        "agents/lenses/corectness.md is missing (lenses here: arbiter, claims, correctness, falsifier, "
        "security); name a lens that exists in its review (or `task cancel` it), or add the lens's file"
    )
    cycle = cr("cycle")  # refused before its claim, with the same words: never claimed and put back
    assert (cycle.returncode, cycle.stdout) == (0, "nothing to do: 1 rejected (see swarm/rejected/)\n")
    reason = (room.state_dir("rejected") / "t1.json.reason").read_text()
    assert "- lens 'corectness' has no file: " in reason and "(lenses here: arbiter, claims," in reason
    assert "claim" not in events(room.ledger)


def test_a_review_task_whose_lens_is_gone_is_refused_before_its_claim(cr: Any, room: Room) -> None:
    written(room, "queue", probe_task("review-gone-t1", reviews="t1", lens="gone"))
    [line] = [ln for ln in cr("doctor").stdout.splitlines() if ln.startswith("FAIL lenses")]
    assert line.startswith("FAIL lenses  swarm/queue/review-gone-t1.json: lens: lens 'gone' has no file: ")
    for _ in range(2):  # before: claimed, then put back as the room's fault, every cycle
        cycle = cr("cycle")
        assert cycle.returncode == 0, cycle.stderr
    assert where(room, "review-gone-t1") == ["rejected"]
    reason = (room.state_dir("rejected") / "review-gone-t1.json.reason").read_text()
    assert "- lens 'gone' has no file: " in reason and "(lenses here: arbiter, claims," in reason
    assert "claim" not in events(room.ledger) and "requeue" not in events(room.ledger)
