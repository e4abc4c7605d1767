"""dispatch.review.materials: serves, what a lens shows and withholds, positions, anonymise."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support import git, make_repo, task

from control_room.dispatch.review import materials as rm
from control_room.dispatch.worktrees import place
from control_room.room import results, settings, swarm
from control_room.room.layout import Room

NO_REPO = "You run in the room's work dir: do not change anything there."


def lens(room: Room, name: str, sees: str, *, adapter: str = "", model: str = "") -> None:
    (room.root / "agents" / "lenses" / f"{name}.md").write_text(
        f"---\nsees: {sees}\nadapter: {adapter}\nmodel: {model}\n---\n"
        f"# Lens: {name}\n\nLook through {name}.\n"
    )


def put(room: Room, state: str, tid: str, **fields: Any) -> dict[str, Any]:
    t = {**task(tid, **fields), "created": "2024-01-01T00:00:00Z"}
    swarm.task_file(room, state, tid).write_text(swarm.dumps(t))
    return t


def result(room: Room, tid: str, **files: str) -> None:
    """Files in the task's results folder: ``report="..."`` is report.md, ``meta={...}`` meta.json."""
    folder = results.folder(room, tid)
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / ("meta.json" if name == "meta" else f"{name}.md")).write_text(text)


def test_serves_names_the_task_a_review_or_an_arbiter_is_about() -> None:
    assert rm.serves({"id": "r", "reviews": "t1"}) == "t1"
    assert rm.serves({"id": "a", "arbitrates": "t2"}) == "t2"
    assert rm.serves({"id": "t3"}) is None


def test_a_task_that_serves_none_is_shown_nothing(room: Room) -> None:
    assert rm.materials(room, settings.load(room), task("t1")) == ""


def test_a_spec_lens_shows_the_objective_and_falsifier_and_names_what_it_withholds(room: Room) -> None:
    lens(room, "speclens", "[spec]")
    put(room, "passed", "t1", objective="make it fast", falsifier="no gain")
    shown = rm.materials(room, settings.load(room), {"id": "r1", "reviews": "t1", "lens": "speclens"})
    assert shown == (
        "## Your lens: speclens\n\n# Lens: speclens\n\nLook through speclens.\n\n"
        "## The task under review (t1)\n\nobjective: make it fast\nfalsifier: no gain\n\n"
        f"## What you were shown\n\n{NO_REPO} You were not shown: the change (the diff); the executor's "
        "prompt, report and output."
    )


def test_a_task_that_is_gone_is_shown_as_unknown(room: Room) -> None:
    lens(room, "speclens", "[spec]")
    shown = rm.materials(room, settings.load(room), {"id": "r1", "reviews": "gone", "lens": "speclens"})
    assert "## The task under review (gone)\n\nobjective: ?\nfalsifier: ?\n\n" in shown


def test_a_history_lens_shows_the_executors_files_each_cut(
    room: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rm, "MATERIAL_MAX", 12)
    lens(room, "claims2", "[history, code]")
    put(room, "passed", "t1")
    result(room, "t1", prompt="the prompt", report="DECISION: done, and a long report after it")
    shown = rm.materials(room, settings.load(room), {"id": "r1", "reviews": "t1", "lens": "claims2"})
    unseen = (
        "the task's objective and falsifier; the change (the diff); the executor's prompt; the room's "
        "context and digest; other reviews and their verdicts"
    )
    assert shown.split("\n\n## ")[1:] == [  # never its prompt: the spec, the room's views
        "The executor's history: its report\n\nDECISION: do\n[... cut by control-room]",
        "The executor's history: its output\n\n(none)",
        f"What you were shown\n\n{NO_REPO} You were not shown: {unseen}.",
    ]


def test_a_lens_that_does_not_see_the_spec_gets_it_withheld_wherever_it_is_quoted(room: Room) -> None:
    lens(room, "claims2", "[history]")
    put(room, "passed", "t1", objective="Cache the Separator of parse()\nand keep it small", falsifier="tiny")
    result(room, "t1", prompt="objective: cache the separator of parse()",
           report="DECISION: done\nWHY: I was asked to cache the separator of PARSE() and keep it small\n",
           answer="My task: Cache the Separator of parse()\nand keep it small. It is tiny now.\n"
                  "ran `echo cache the separator of p...` (cut)")  # fmt: skip
    shown = rm.materials(room, settings.load(room), {"id": "r1", "reviews": "t1", "lens": "claims2"})
    assert "the prompt" not in shown and "objective:" not in shown
    assert "WHY: I was asked to [withheld] [withheld]\n" in shown  # each line of 8 or more characters
    assert "My task: [withheld]. It is tiny now." in shown  # the whole; "tiny" is too short to look for
    assert "ran `echo [withheld]` (cut)" in shown  # its start, cut short with ...
    assert "separator" not in shown.lower()


def test_a_diff_lens_without_a_repo_has_no_diff_to_show(room: Room) -> None:
    lens(room, "difflens", "[diff, spec, history]")
    put(room, "passed", "t1")
    shown = rm.materials(room, settings.load(room), {"id": "r1", "reviews": "t1", "lens": "difflens"})
    assert "## The change\n\n```diff\n(no repository is set: there is no diff to show)\n```" in shown
    assert shown.endswith(
        f"## What you were shown\n\n{NO_REPO} You were not shown: the executor's prompt; the room's context "
        "and digest; other reviews and their verdicts."
    )


def test_a_diff_lens_shows_the_routes_change_against_the_base(room: Room, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    s = settings.load(room).replace(repo="../repo")
    target = put(room, "passed", "t1", route="r1")
    tree = place.path_of(room, target)
    git(repo, "worktree", "add", "-q", "-b", "route/r1", str(tree))
    (tree / "b.txt").write_text("b\n")
    git(tree, "add", "b.txt")
    git(tree, "commit", "-q", "-m", "b")
    lens(room, "difflens", "[diff]")
    shown = rm.materials(room, s, {"id": "r1", "reviews": "t1", "lens": "difflens"})
    change = shown.split("```diff\n")[1].split("\n```")[0].splitlines()
    assert [ln for ln in change if ln.startswith(("diff", "+", "-"))] == [
        "diff --git a/b.txt b/b.txt", "--- /dev/null", "+++ b/b.txt", "+b"]  # fmt: skip
    assert shown.endswith(
        "You run in the change's worktree: read anything there; what you change is discarded. You were not "
        "shown: the task's objective and falsifier; the executor's prompt, report and output."
    )
    (tree / "c.txt").write_text("c\n")  # a failed round's work, uncommitted: kept as a stash commit
    git(tree, "add", "c.txt")
    saved = git(tree, "stash", "create")
    git(tree, "reset", "-q")
    swarm.task_file(room, "passed", "t1").write_text(swarm.dumps({**target, "reviewed_state": saved}))
    shown = rm.materials(room, s, {"id": "r1", "reviews": "t1", "lens": "difflens"})
    assert "+++ b/b.txt\n@@ -0,0 +1 @@\n+b\ndiff --git a/c.txt b/c.txt" in shown


def reviewed(room: Room) -> dict[str, Any]:
    """t1 reviewed by review-style-t1 (lens style, adapter codex, model m-style: accepts) and
    review-safety-t1 (lens safety, model m-safety on adapter claude, per its meta.json: rejects);
    the arbiter's task file."""
    lens(room, "style", "[diff]")
    lens(room, "safety", "[history]")
    put(room, "done", "review-style-t1", reviews="t1", lens="style", adapter="codex", model="m-style")
    put(room, "done", "review-safety-t1", reviews="t1", lens="safety")
    result(
        room, "review-style-t1", report="DECISION: accept\nWHY: the Style lens (m-style, codex) likes it\n"
    )
    result(room, "review-safety-t1", meta=json.dumps({"adapter": "claude", "model": "m-safety"}),
           report="DECISION: reject\nWHY: review-safety-t1 on Claude says no\n"
                  "NEXT COMMAND: claude --check\n")  # fmt: skip
    return {"id": "arbitrate-t1", "arbitrates": "t1", "lens": "arbiter",
            "sides": {"A": ["review-safety-t1"], "B": ["review-style-t1"]}}  # fmt: skip


SAFETY = "DECISION: reject\nWHY: [withheld] on [withheld] says no\nNEXT COMMAND: [withheld] --check"
STYLE = "DECISION: accept\nWHY: the [withheld] lens ([withheld], [withheld]) likes it"


def test_positions_are_each_sides_reports_with_every_name_withheld(room: Room) -> None:
    arbiter = reviewed(room)
    assert (
        rm.positions_text(room, arbiter["sides"]) == f"## Position A\n\n{SAFETY}\n\n## Position B\n\n{STYLE}"
    )
    both = {"A": ["review-safety-t1", "review-style-t1"]}
    assert rm.positions_text(room, both) == (
        f"## Position A\n\n{SAFETY}\n\n---\n\n{STYLE}\n\n## Position B\n\n(nothing)"
    )


def test_an_arbiter_is_shown_the_positions_and_told_what_is_withheld(room: Room) -> None:
    arbiter = reviewed(room)
    put(room, "passed", "t1", objective="make it fast", falsifier="no gain")
    shown = rm.materials(room, settings.load(room), arbiter)  # the room's own arbiter lens: positions, spec
    assert shown.startswith("## Your lens: arbiter\n\n# Lens: arbiter\n\nTwo reviews of one change disagree.")
    assert (
        "## The task under review (t1)\n\nobjective: make it fast\nfalsifier: no gain\n\n## Position A"
        in shown
    )
    assert shown.endswith(
        f"## What you were shown\n\n{NO_REPO} You were not shown: who wrote each position, on which adapter "
        "and model."
    )
    for name in ("style", "safety", "m-style", "m-safety", "codex", "claude", "review-style-t1"):
        assert name not in shown.lower().split("## position a")[1], name


def test_names_to_hide_are_the_lenses_and_what_each_review_ran_on_longest_first(room: Room) -> None:
    reviewed(room)
    hide = rm.names_to_hide(room, ["review-style-t1", "review-safety-t1", "review-gone"])
    assert set(hide) == {
        "arbiter", "claims", "correctness", "falsifier", "security", "style", "safety",  # the room's lenses
        "codex", "m-style", "review-style-t1",  # from the task file
        "claude", "m-safety", "review-safety-t1",  # from its meta.json
    }  # fmt: skip  # review-gone is in no folder: nothing of it
    assert [len(n) for n in hide] == sorted((len(n) for n in hide), reverse=True)


def test_anonymise_withholds_whole_names_in_any_case() -> None:
    hide = ["review-style-t1", "command", "style"]
    text = "Style and STYLE, not lifestyle or style-guide or style_x; review-style-t1 ran a command."
    assert rm.anonymise(text, hide) == (
        "[withheld] and [withheld], not lifestyle or style-guide or style_x; [withheld] ran a [withheld]."
    )
    assert rm.anonymise("> NEXT COMMAND: make test", hide) == "> NEXT COMMAND: make test"  # the header stays
