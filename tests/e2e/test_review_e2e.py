"""Review lenses and arbitration through the installed command, on a real git repository, with a
scripted reviewer (tests/fakes/reviewer.py, run by the `command` adapter) on a model per lens:
all accept -> merged; a reject with evidence -> a failed round with the findings; accept against
reject -> an arbiter shown anonymised positions, whose A, B or escalate decides; an arbiter that
fails leaves the task blocked; a reviewer's edits are discarded; a second arbitration escalates."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support import (
    FAKES,
    PY,
    entries,
    events,
    git,
    make_repo,
    queue,
    recount_agrees,
    set_gate,
    task_json,
    where,
)

from control_room import errors
from control_room.room.layout import Room


class Reviewers:
    """The script the fake reviewers follow (one entry per model) and what each was shown."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.file = folder / "script.json"
        self.set()

    def set(self, **plans: dict[str, object]) -> None:
        self.file.write_text(json.dumps(plans))

    def shown(self, model: str) -> str:
        return (self.folder / f"{model}.prompt.md").read_text()


def lens(room: Room, name: str, model: str, sees: str = "[diff, spec]", wall: int = 60) -> None:
    (room.root / "agents" / "lenses" / f"{name}.md").write_text(
        f"---\nsees: {sees}\nadapter: command\nmodel: {model}\nmax_cost_usd: 0.1\nwall_clock_s: {wall}\n---\n"
        f"# Lens: {name}\n\nLook at it through {name}.\n"
    )


@pytest.fixture
def reviewers(tmp_path: Path, room: Room, cr) -> Reviewers:
    """A repository named in CONTROL.md, route r1, lenses `style` (model m-style) and `safety`
    (model m-safety), an arbiter on model m-judge, all run by the fake reviewer."""
    make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    set_gate(room, "repo", "../repo")
    set_gate(room, "auto_integrate", "true")
    folder = tmp_path / "reviewers"
    folder.mkdir()
    r = Reviewers(folder)
    argv = [PY, str(FAKES / "reviewer.py"), "--model", "{model}", "--script", str(r.file)]
    set_gate(room, "command_argv", json.dumps(argv))
    lens(room, "style", "m-style")
    lens(room, "safety", "m-safety", sees="[history]")
    lens(room, "arbiter", "m-judge", sees="[positions, spec]")
    assert cr("route", "add", "r1", "--title", "route r1").returncode == 0
    return r


WORK = [PY, "-c", "open('b.txt', 'w').write('b')"]


def passed_with_reviews(cr, room: Room) -> None:
    queue(room, "t1", route="r1", command=WORK, review=["style", "safety"])
    done = cr("cycle")
    assert done.returncode == errors.PASSED, done.stdout + done.stderr
    assert done.stdout.endswith("; waits for 2 reviews: review-style-t1, review-safety-t1\n")
    assert where(room, "t1") == ["passed"]


def test_all_accept_and_it_integrates(cr, room: Room, reviewers: Reviewers, tmp_path: Path) -> None:
    reviewers.set(**{"m-style": {"decision": "accept"}, "m-safety": {"decision": "accept"}})
    passed_with_reviews(cr, room)
    assert (
        "passed    t1  waits for its reviews: review-style-t1 (queue), review-safety-t1 (queue)\n"
        in cr("status").stdout
    )
    refused = cr("integrate", "t1")
    assert (refused.returncode, refused.stderr) == (errors.CONFLICT, (
        "Error: cannot integrate t1: it waits for its reviews "
        "(review-style-t1, review-safety-t1)\n"))  # fmt: skip
    first = cr("cycle")
    assert first.returncode == errors.PASSED and first.stdout.endswith(
        "; t1 waits for review-style-t1 (queue)\n"
    )
    second = cr("cycle")
    assert second.returncode == errors.PASSED, second.stdout + second.stderr
    assert (
        "; t1 accepted (all 2 reviews accept); it may integrate; merged: t1 (route/r1 onto main"
        in second.stdout
    )
    assert where(room, "t1") == ["to-test"] and (tmp_path / "repo" / "b.txt").read_text() == "b"
    # what each lens was shown: style the diff and the spec; safety the history, not the diff
    style, safety = reviewers.shown("m-style"), reviewers.shown("m-safety")
    assert "review-safety-t1" not in style and "m-safety" not in style  # the first verdict is not shown
    assert "## The change" in style and "+b" in style and "objective: objective of t1" in style
    assert "## The change" not in safety and "## The executor's history: its report" in safety
    assert (
        "You were not shown: the task's objective and falsifier; the change (the diff); the executor's "
        "prompt; the room's context and digest; other reviews and their verdicts." in safety
    )
    assert (
        "You review: you judge work others did, by evidence. You never edit a file. "
        "You run on command, model m-safety." in safety
    )
    assert "reviewers never edit" not in room.ledger.read_text()  # no reviewer changed anything
    got = [e for e in events(room.ledger) if e in ("review-queued", "review", "integrate")]
    assert got == ["review-queued", "review", "review", "review", "integrate"]
    meta = json.loads((room.swarm / "results" / "review-safety-t1" / "meta.json").read_text())
    assert (meta["adapter"], meta["model"]) == ("command", "m-safety")


def test_a_reject_with_evidence_is_a_failed_round_with_the_findings(
    cr, room: Room, reviewers: Reviewers
) -> None:
    reviewers.set(**{"m-style": {"decision": "reject", "why": "b.txt breaks the rules, says m-style",
                                 "confirmed": "b.txt has no newline at its end (`tail -c1 b.txt`)"},
                     "m-safety": {"decision": "reject", "confirmed": "b.txt is world-writable"}})  # fmt: skip
    passed_with_reviews(cr, room)
    cr("cycle")
    last = cr("cycle")
    assert last.returncode == errors.PASSED
    assert "t1 rejected by review (every review rejects); back in the queue for round 2 of 2" in last.stdout
    t = task_json(room, "queue", "t1")
    assert t["last_failure"] == (
        "review: every review rejects:\n"
        "review 1: b.txt breaks the rules, says [withheld]\n"
        "  - CONFIRMED: b.txt has no newline at its end (`tail -c1 b.txt`)\n"
        "review 2: the [withheld] reviewer decided reject\n"
        "  - CONFIRMED: b.txt is world-writable")  # fmt: skip
    assert git(room.root.parent / "repo", "log", "--format=%s") == "first"
    recount_agrees(cr)  # the rejection counted as a failed run of r1


def test_a_reject_without_confirmed_evidence_is_not_a_review(cr, room: Room, reviewers: Reviewers) -> None:
    reviewers.set(**{"m-style": {"decision": "accept"}, "m-safety": {"decision": "reject"}})
    passed_with_reviews(cr, room)
    bad = cr("cycle")  # review-safety-t1 runs first (same priority: by name)
    assert bad.returncode == errors.FAILED
    assert (
        "a review that rejects must give at least one CONFIRMED evidence item; this one gives none"
        in bad.stdout
    )
    assert where(room, "review-safety-t1") == ["queue"] and where(room, "t1") == ["passed"]


def disagree(cr, room: Room, reviewers: Reviewers) -> dict[str, object]:
    """style accepts, safety rejects: the arbiter is queued; its task file."""
    reviewers.set(**{"m-style": {"decision": "accept", "why": "m-style likes it (style lens)"},
                     "m-safety": {"decision": "reject", "why": "the safety lens on m-safety says no",
                                  "confirmed": "b.txt holds a key (`cat b.txt`)"}})  # fmt: skip
    passed_with_reviews(cr, room)
    cr("cycle")
    queued = cr("cycle")
    assert "t1's reviews disagree (1 accept, 1 reject); queued arbitrate-t1" in queued.stdout
    return task_json(room, "queue", "arbitrate-t1")


def test_the_arbiter_sees_anonymised_positions_and_its_choice_of_the_accepting_side_merges(
    cr, room: Room, reviewers: Reviewers
) -> None:
    arbiter = disagree(cr, room, reviewers)
    accepting = next(k for k, v in arbiter["meaning"].items() if v == "accept")
    reviewers.set(**{"m-judge": {"decision": accepting, "confirmed": "b.txt holds no key (`cat b.txt`)"}})
    done = cr("cycle")
    assert done.returncode == errors.PASSED, done.stdout + done.stderr
    assert "merged: t1" in done.stdout and where(room, "t1") == ["to-test"]
    shown = reviewers.shown("m-judge")
    assert "## Position A" in shown and "## Position B" in shown and "b.txt holds a key" in shown
    for name in ("style", "safety", "m-style", "m-safety", "review-style-t1", "review-safety-t1"):
        assert name not in shown, name  # anywhere in the arbiter's whole brief
    assert "## Current context" not in shown and "## Digest" not in shown
    assert "You were not shown: who wrote each position, on which adapter and model." in shown
    assert [e for e in events(room.ledger) if e == "arbitration"] == ["arbitration", "arbitration"]
    # the scorecard's split by role equals a hand count of the result lines' roles
    from control_room.ledger.line import Col, parse

    cells = [parse(ln) for ln in room.ledger.read_text().splitlines() if ln.startswith("| 20")]
    roles = [json.loads(c[Col.DETAIL].replace("\\|", "|"))["role"] for c in cells if c[Col.EVENT] == "result"]
    assert sorted(roles) == ["arbiter", "engineer", "reviewer", "reviewer"]
    card = json.loads(cr("scorecard", "--json").stdout)
    assert {r["role"]: (r["runs"], r["passed"]) for r in card["by_role"]} == {
        "arbiter": (1, 1), "engineer": (1, 1), "reviewer": (2, 2)}  # fmt: skip
    assert {(m["adapter"], m["model"]): m["runs"] for m in card["by_model"]} == {
        ("command", "m-judge"): 1, ("command", "m-safety"): 1, ("command", "m-style"): 1,
        ("probe", "default"): 1}  # fmt: skip


def test_the_arbiters_choice_of_the_rejecting_side_is_a_failed_round(
    cr, room: Room, reviewers: Reviewers
) -> None:
    arbiter = disagree(cr, room, reviewers)
    rejecting = next(k for k, v in arbiter["meaning"].items() if v == "reject")
    reviewers.set(**{"m-judge": {"decision": rejecting, "why": "the accepting side checked nothing",
                                 "confirmed": "b.txt holds a key"}})  # fmt: skip
    done = cr("cycle")
    assert done.returncode == errors.PASSED
    assert where(room, "t1") == ["queue"]
    assert task_json(room, "queue", "t1")["last_failure"].startswith(
        "review: the arbiter arbitrate-t1 chose the rejecting side: the accepting side checked nothing:\n"
        "review 1: the [withheld] lens on [withheld] says no"
    )


def test_escalate_parks_the_task_with_both_positions(cr, room: Room, reviewers: Reviewers) -> None:
    disagree(cr, room, reviewers)
    reviewers.set(**{"m-judge": {"decision": "escalate", "why": "both sides cite files I cannot read"}})
    assert cr("cycle").returncode == errors.PASSED
    assert where(room, "t1") == ["parked"]
    reason = (room.state_dir("parked") / "t1.reason").read_text()
    assert "the arbiter escalated: both sides cite files I cannot read" in reason
    assert "## Position A" in reason and "## Position B" in reason and "b.txt holds a key" in reason
    assert "escalated" in events(room.ledger)
    found = cr("findings")
    assert found.stdout.endswith(
        "escalated to a person (reviews disagree): 1\n  t1  both positions in swarm/parked/t1.reason\n"
    )


@pytest.mark.parametrize("arbiter_plan", [{"broken": True}, {"sleep": 30}])
def test_an_arbiter_that_fails_leaves_the_task_blocked(
    cr, room: Room, reviewers: Reviewers, arbiter_plan: dict[str, object]
) -> None:
    lens(room, "arbiter", "m-judge", sees="[positions, spec]", wall=2)
    disagree(cr, room, reviewers)
    reviewers.set(**{"m-judge": arbiter_plan})
    assert cr("cycle").returncode == errors.FAILED
    assert cr("cycle").returncode == errors.FAILED  # max_rounds 2: the arbiter is parked
    assert where(room, "arbitrate-t1") == ["parked"] and where(room, "t1") == ["passed"]
    held = cr("integrate")  # the parked arbiter is what it waits for, not its reviews (done)
    assert (held.returncode, held.stdout) == (0, "t1 waits for its arbiter arbitrate-t1 (parked)\n")
    held = cr("integrate", "t1")
    assert (held.returncode, held.stderr) == (
        errors.CONFLICT,
        "Error: cannot integrate t1: it waits for its arbiter arbitrate-t1 (parked)\n",
    )
    status = cr("status").stdout
    assert "passed    t1  waits for its arbiter arbitrate-t1 (parked)\n" in status
    assert git(room.root.parent / "repo", "log", "--format=%s") == "first"  # never merged by default


def test_a_reviewers_edits_are_discarded(cr, room: Room, reviewers: Reviewers, tmp_path: Path) -> None:
    reviewers.set(**{"m-style": {"decision": "accept"}, "m-safety": {"decision": "accept", "edit": "b.txt"}})
    passed_with_reviews(cr, room)
    assert cr("cycle").returncode == errors.PASSED  # review-safety-t1 first: it edits b.txt
    tree = room.cr / "worktrees" / "route-r1"
    assert (tree / "b.txt").read_text() == "b" and git(tree, "status", "--porcelain") == ""
    assert (
        "the review changed the worktree (b.txt); discarded: reviewers never edit" in room.ledger.read_text()
    )
    assert cr("cycle").returncode == errors.PASSED
    assert (tmp_path / "repo" / "b.txt").read_text() == "b"


def test_a_second_arbitration_escalates(cr, room: Room, reviewers: Reviewers) -> None:
    arbiter = disagree(cr, room, reviewers)
    rejecting = next(k for k, v in arbiter["meaning"].items() if v == "reject")
    reviewers.set(**{"m-judge": {"decision": rejecting, "confirmed": "b.txt holds a key"}})
    assert cr("cycle").returncode == errors.PASSED  # t1 back in the queue for round 2
    disagree_again = {"m-style": {"decision": "accept"},
                      "m-safety": {"decision": "reject", "confirmed": "b.txt still holds a key"}}  # fmt: skip
    reviewers.set(**disagree_again)
    assert cr("cycle").returncode == errors.PASSED  # t1 passes again: two new reviews
    cr("cycle")
    last = cr("cycle")
    assert (
        "t1 escalated to a person (a second arbitration was needed); parked with both positions"
        in last.stdout
    )
    assert where(room, "t1") == ["parked"]


def test_review_when_always_reviews_a_failed_round_and_its_findings_join_the_next_brief(
    cr, room: Room, reviewers: Reviewers
) -> None:
    set_gate(room, "review_when", "always")
    reviewers.set(**{"m-style": {"decision": "accept", "edit": "b.txt"},
                     "m-safety": {"decision": "reject",
                                  "why": "the validator looks for c.txt, nothing makes it",
                                  "confirmed": "`ls` shows b.txt only"}})  # fmt: skip
    fails = [PY, "-c", "import os, sys; sys.exit(0 if os.path.exists('c.txt') else 1)"]
    queue(room, "t1", route="r1", command=WORK, review=["style", "safety"], validator=fails)
    done = cr("cycle")
    assert done.returncode == errors.FAILED
    assert done.stdout.endswith(
        "back in the queue for round 2 of 2; it waits for 2 reviews of this round: review-style-t1, "
        "review-safety-t1\n")  # fmt: skip
    t = task_json(room, "queue", "t1")
    assert t["deps"] == ["review-style-t1", "review-safety-t1"] and t["reviewed_state"]
    tree = room.cr / "worktrees" / "route-r1"
    assert cr("cycle").returncode == errors.PASSED  # safety: rejects
    assert cr("cycle").returncode == errors.PASSED  # style: accepts, and edits b.txt: undone
    assert (tree / "b.txt").read_text() == "b"  # the failed round's own (uncommitted) work is back
    assert git(tree, "status", "--porcelain") == "?? b.txt"
    assert "the review changed the worktree (b.txt); discarded" in room.ledger.read_text()
    t = task_json(room, "queue", "t1")
    assert t["last_failure"].endswith(
        "What the reviews of that round found:\n"
        "review 1: the validator looks for c.txt, nothing makes it\n"
        "  - CONFIRMED: `ls` shows b.txt only")  # fmt: skip
    assert "review_tasks" not in t
    shown = reviewers.shown("m-style")
    assert "Review the failed round of task t1" in shown and "+b" in shown  # the uncommitted work's diff
    recount_agrees(cr)  # the reviews of a failed round count no second failure


def test_control_md_names_lenses_per_route(cr, room: Room, reviewers: Reviewers) -> None:
    set_gate(room, "review", "{r1: [style], '*': []}")
    assert cr("route", "add", "r2", "--title", "route r2").returncode == 0
    queue(room, "t1", route="r1", command=WORK, priority=1)
    queue(room, "t2", route="r2", command=[PY, "-c", "open('c.txt', 'w').write('c')"])
    assert cr("cycle").stdout.endswith("; waits for 1 review: review-style-t1\n")
    assert "merged: t1" in cr("cycle").stdout  # the review runs first (its priority is above)
    assert "merged: t2" in cr("cycle").stdout  # r2: no lens, merged at once


def test_a_reviewers_confirmed_claim_is_checked_by_its_lens_check(
    cr, room: Room, reviewers: Reviewers
) -> None:
    """A review task's validator re-runs the lens's check (else the reviewed task's validator) in
    the reviewed worktree: a reviewer claiming `CONFIRMED: check.py exits 0` while it exits 1 is
    flagged as an executor is (the result line, findings, the scorecard), and the review's round
    is not failed by it: its verdict is its report."""
    (room.root / "agents" / "lenses" / "style.md").write_text(
        "---\nsees: [diff, spec]\nadapter: command\nmodel: m-style\nmax_cost_usd: 0.1\nwall_clock_s: 60\n"
        f"check: [{json.dumps(PY)}, check.py]\n---\n# Lens: style\n\nLook at it through style.\n"
    )
    reviewers.set(**{"m-style": {"decision": "accept", "confirmed": "`python check.py` exits 0"},
                     "m-safety": {"decision": "accept"}})  # fmt: skip
    check = "import sys; print('b.txt is wrong'); sys.exit(1)"
    work = [PY, "-c", f"open('b.txt', 'w').write('b'); open('check.py', 'w').write({check!r})"]
    queue(room, "t1", route="r1", command=work, review=["style", "safety"])
    assert cr("cycle").returncode == errors.PASSED
    assert task_json(room, "queue", "review-style-t1")["validator"] == [PY, "check.py"]
    assert (
        task_json(room, "queue", "review-safety-t1")["validator"]
        == task_json(room, "passed", "t1")["validator"]
    )
    assert cr("cycle").returncode == errors.PASSED  # review-safety-t1
    style = cr("cycle")  # review-style-t1: its check exits 1, its report says it exits 0
    assert style.returncode == errors.PASSED, style.stdout + style.stderr
    assert "validator exited 1" in style.stdout
    results = room.swarm / "results" / "review-style-t1"
    assert (results / "validator.stdout.txt").read_text() == "b.txt is wrong\n"
    assert json.loads((results / "meta.json").read_text())["unsupported_claim"] is True
    found = cr("findings")
    assert found.returncode == 0
    assert "unsupported CONFIRMED claims: 1\n" in found.stdout
    assert found.stdout.rstrip().endswith(
        "  review-style-t1  r1  report says CONFIRMED success; validator exited 1"
    )
    safety = json.loads((room.swarm / "results" / "review-safety-t1" / "meta.json").read_text())
    assert safety["unsupported_claim"] is False and safety["validator"]["exit_code"] == 0
    card = json.loads(cr("scorecard", "--json").stdout)
    roles = {r["role"]: r["unsupported_claims"] for r in card["by_role"]}
    assert roles == {"engineer": {"count": 0, "of": 1}, "reviewer": {"count": 1, "of": 2}}


def test_a_reviewer_on_the_adapter_and_model_of_the_work_is_warned_of_loudly(
    cr, room: Room, reviewers: Reviewers
) -> None:
    """A review that runs on the adapter and model the reviewed work ran on gets a warning line
    and says so in the cycle's line; doctor warns of a lens in use that runs where the room's
    executing roles run (no model on either side: the adapter's same default)."""
    (room.root / "agents" / "lenses" / "safety.md").write_text(
        "---\nsees: [diff]\nadapter: probe\nmodel:\n---\n# Lens: safety\n\nLook at it through safety.\n"
    )
    reviewers.set(**{"m-style": {"decision": "accept", "edit": "b.txt"}})
    queue(
        room, "t1", route="r1", adapter="command", model="m-style", command=None, review=["style", "safety"]
    )
    done = cr("cycle")
    assert done.returncode == errors.PASSED, done.stdout + done.stderr
    said = (
        "review-style-t1 runs on command, model m-style, as the work of t1 did: not an independent review; "
        "give the lens another adapter or model (agents/lenses/style.md)"
    )
    assert done.stdout.endswith(
        f"; waits for 2 reviews: review-style-t1, review-safety-t1; warning: {said}\n"
    )
    [line] = [ln for ln in room.ledger.read_text().splitlines() if "not an independent review" in ln]
    assert "| warning | review-style-t1 |" in line and f"| {said} |" in line
    doctor = cr("doctor")
    assert [ln for ln in doctor.stdout.splitlines() if " reviewers " in ln] == [
        "WARN reviewers  lens safety runs on probe, model default, where the work it reviews runs (role "
        "analyst, dissector, engineer, orchestrator, scout): its reviews are not independent; set adapter "
        "and model in agents/lenses/safety.md"
    ]


def test_review_runs_are_counted_apart_from_the_routes_own(cr, room: Room, reviewers: Reviewers) -> None:
    """Three failed runs of a review on route r1 (a broken report each time) are no death loop of
    r1; `route list` counts r1's own run (t1) and its 4 review runs apart; DIGEST.md's best is
    t1's; ROUTES.md agrees with the ledger."""
    set_gate(room, "max_rounds", "3")
    reviewers.set(**{"m-style": {"decision": "accept"}, "m-safety": {"broken": True}})
    passed_with_reviews(cr, room)
    for _ in range(3):  # review-safety-t1 (first by name), three times: then parked
        assert cr("cycle").returncode == errors.FAILED
    assert where(room, "review-safety-t1") == ["parked"]
    style = cr("cycle")
    assert style.returncode == errors.PASSED, style.stdout + style.stderr
    assert "death-loop" not in events(room.ledger) and cr("findings").stdout == "no findings\n"
    listed = cr("route", "list")
    day = task_json(room, "passed", "t1")["passed_at"][:10]
    assert listed.stdout == (
        f"route                    verdict    runs  reviews  spend     last result{' ' * 22}title\n"
        f"r1                       alive         1        4  $0        {'pass t1 ' + day:<32} route r1\n"
    )
    data = json.loads(cr("route", "list", "--json").stdout)
    assert data["reviews"] == {"r1": {"runs": 4, "spend_usd": 0.0}} and data["held"] == []
    digest = (room.cr / "DIGEST.md").read_text()
    [line] = [ln for ln in digest.splitlines() if ln.startswith("- **r1**")]
    assert line.startswith(
        "- **r1**: 1 attempt, 1 passed, 0 failed, $0.00 (and 4 review runs of its tasks, $0.00); best: t1 ("
    )
    recount_agrees(cr)


OBJECTIVE = "Make parse() skip comment lines quickly (canary objective 7781)"
FALSIFIER = "parse() gets slower on files without comments (canary falsifier 7782)"


def referenced(brief: str, *roots: Path) -> dict[Path, str]:
    """Every file the brief names (a path with a folder or a file name with a suffix) that exists
    under one of ``roots``, and its text."""
    found = {}
    for name in set(re.findall(r"[\w.-]*(?:/[\w.-]+)+|[\w-]+\.(?:md|json|txt|py)\b", brief)):
        for root in roots:
            path = (root / name.strip("/")).resolve()
            if path.is_file():
                found[path] = path.read_text(errors="replace")
    return found


def test_what_a_lens_was_not_shown_is_nowhere_in_its_brief_or_the_files_it_names(
    cr, room: Room, reviewers: Reviewers, tmp_path: Path
) -> None:
    """The spec (objective, falsifier) of a task is in no brief of a lens that does not see
    `spec`: not in its role text, not in the executor's history it is shown (its report and
    output quote the objective: withheld), not in any file the brief names; and no brief of a
    review names another review or holds the room's context or digest."""
    lens(room, "style", "m-style", sees="[diff]")  # the change only
    reviewers.set(**{"m-style": {"decision": "accept"}, "m-safety": {"decision": "accept"}})
    work = [
        PY,
        "-c",
        f"print('my task was: {OBJECTIVE}; it fails if {FALSIFIER}'); open('b.txt', 'w').write('b')",
    ]
    queue(
        room,
        "t1",
        route="r1",
        command=work,
        review=["style", "safety"],
        objective=OBJECTIVE,
        falsifier=FALSIFIER,
    )
    assert cr("cycle").returncode == errors.PASSED
    assert OBJECTIVE in (room.swarm / "results" / "t1" / "report.md").read_text()  # the executor quoted it
    assert cr("cycle").returncode == errors.PASSED and cr("cycle").returncode == errors.PASSED
    tree = room.cr / "worktrees" / "route-r1"
    for model, other in (("m-style", "review-safety-t1"), ("m-safety", "review-style-t1")):
        brief = reviewers.shown(model)
        files = referenced(brief, room.root, tree, Path("/"))
        for secret in ("canary objective 7781", "canary falsifier 7782", "skip comment lines", "gets slow"):
            assert secret not in brief, (model, secret)
            assert [p for p, text in files.items() if secret in text] == [], (model, secret)
        assert other not in brief and "## Current context" not in brief and "## Digest" not in brief
        assert "its `objective`, `falsifier`" not in brief  # the role text points nowhere either
    safety = reviewers.shown("m-safety")
    assert (
        "## The executor's history: its report" in safety and "my task was: [withheld]; it fails if" in safety
    )
    assert "## The executor's history: its prompt" not in safety


def arbiter_parked(cr, room: Room, reviewers: Reviewers) -> None:
    """t1 waits in passed/ for its arbiter, parked after max_rounds: only a person moves it on."""
    disagree(cr, room, reviewers)
    reviewers.set(**{"m-judge": {"broken": True}})
    assert [cr("cycle").returncode for _ in range(2)] == [errors.FAILED, errors.FAILED]
    assert where(room, "arbitrate-t1") == ["parked"] and where(room, "t1") == ["passed"]


def test_a_person_cancels_a_task_its_parked_arbiter_holds_in_passed(
    cr, room: Room, reviewers: Reviewers
) -> None:
    arbiter_parked(cr, room, reviewers)
    done = cr("task", "cancel", "t1", "--reason", "not worth a third look")
    kept = "its work is kept on branch cancelled/t1; route/r1 is back at main"
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        f"cancelled t1 (was in swarm/passed/); {kept}\n",
        "",
    )
    assert where(room, "t1") == ["cancelled"] and where(room, "arbitrate-t1") == ["cancelled"]
    assert [(e.task, e.outcome, e.detail) for e in entries(room, "cancel")] == [
        ("t1", "cancelled", f"not worth a third look; {kept}"),
        ("arbitrate-t1", "cancelled", "cancelled with t1, which it served"),
    ]
    queue(room, "t2", route="r1", command=[PY, "-c", "open('c.txt', 'w').write('c')"])
    assert "merged: t2" in cr("cycle").stdout  # the route's worktree no longer waits for t1
    assert git(room.root.parent / "repo", "log", "--format=%s") == "t2: objective of t2\nfirst"  # not t1
    assert (
        git(room.root.parent / "repo", "log", "--format=%s", "cancelled/t1") == "t1: objective of t1\nfirst"
    )


def test_a_person_accepts_a_task_its_parked_arbiter_holds_in_passed(
    cr, room: Room, reviewers: Reviewers
) -> None:
    arbiter_parked(cr, room, reviewers)
    assert cr("done", "t1").returncode == errors.CONFLICT  # Done is for merged work, still
    inside = cr("task", "accept", "t1", extra_env={"CONTROL_ROOM_TASK": "t9"})  # an agent cannot decide it
    assert (inside.returncode, where(room, "t1")) == (errors.PERSON_ONLY, ["passed"])
    ok = cr("task", "accept", "t1", "--by", "ann", "--reason", "I read both positions")
    assert (ok.returncode, ok.stderr) == (0, "")
    assert ok.stdout == (
        "t1 accepted (by a person, ann: I read both positions); it may integrate; "
        "`control-room integrate t1` merges it\n"
    )
    assert where(room, "arbitrate-t1") == ["cancelled"] and where(room, "t1") == ["passed"]
    [line] = [e for e in entries(room, "review") if e.outcome == "accepted"]
    assert (line.task, line.detail) == ("t1", "by a person, ann: I read both positions")
    merged = cr("integrate")
    assert merged.returncode == errors.OK and merged.stdout.startswith("merged: t1 (route/r1 onto main")
    assert where(room, "t1") == ["to-test"]
    again = cr("task", "accept", "t1")
    refused = "Error: cannot accept t1: it is in swarm/to-test/, not in swarm/passed/\n"
    assert (again.returncode, again.stderr) == (errors.CONFLICT, refused)


def test_a_person_accepts_an_escalated_task_and_it_merges(cr, room: Room, reviewers: Reviewers) -> None:
    disagree(cr, room, reviewers)
    reviewers.set(**{"m-judge": {"decision": "escalate", "why": "both sides cite files I cannot read"}})
    assert cr("cycle").returncode == errors.PASSED and where(room, "t1") == ["parked"]
    reason = (room.state_dir("parked") / "t1.reason").read_text()
    assert "The verdict may be a person's: `control-room task accept t1` accepts it.\n" in reason
    ok = cr("task", "accept", "t1", "--by", "ann")
    assert (ok.returncode, ok.stderr) == (0, "")
    assert (
        ok.stdout
        == "t1 accepted (by a person, ann); it may integrate; `control-room integrate t1` merges it\n"
    )
    assert where(room, "t1") == ["passed"] and "escalated" not in task_json(room, "passed", "t1")
    merged = cr("integrate", "t1")
    assert merged.returncode == errors.OK and merged.stdout.startswith("merged: t1 (route/r1 onto main")
    assert git(room.root.parent / "repo", "log", "--format=%s") == "t1: objective of t1\nfirst"
