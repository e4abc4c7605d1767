"""Review lenses (issue #11) through a real CLI: Claude Code runs two review tasks, each on the
model its lens names, against the model server, which answers per model. A probe task with
`review: [lens-a, lens-b]` passes in a git repository named in CONTROL.md (`auto_integrate: true`);
both accept -> it is merged; one rejects with CONFIRMED evidence -> an arbiter is queued."""

from __future__ import annotations

import json
from pathlib import Path

from modelserver import ModelServer
from support import PY, git, make_repo, set_gate, where

from control_room import errors

ACCEPT = """DECISION: accept
WHY: the change writes b.txt as the task asks, says {model}
EVIDENCE:
- CONFIRMED: the diff adds b.txt and nothing else
MISSING: nothing
NEXT COMMAND: control-room status
STOP RULE: stop when the verdict is recorded
"""
REJECT = """DECISION: reject
WHY: b.txt has no newline at its end, says mock-b
EVIDENCE:
- CONFIRMED: `tail -c1 b.txt` prints `b`, not a newline
MISSING: nothing
NEXT COMMAND: control-room status
STOP RULE: stop when the verdict is recorded
"""
WORK = [PY, "-c", "open('b.txt', 'w').write('b')"]


def reviewed_room(real, tmp_path: Path, url: str):  # type: ignore[no-untyped-def]
    """A room over a one-commit repository (`repo: ../repo`, `auto_integrate: true`), claude
    pointed at ``url``, lenses lens-a (model mock-a, sees the diff and the spec) and lens-b
    (model mock-b, sees the executor's history), and probe task t1 reviewed by both."""
    r = real("claude")
    make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    set_gate(r.room, "repo", "../repo")
    set_gate(r.room, "auto_integrate", "true")
    r.gateway("claude", url)
    for name, model, sees in (("lens-a", "mock-a", "[diff, spec]"), ("lens-b", "mock-b", "[history]")):
        (r.room.root / "agents" / "lenses" / f"{name}.md").write_text(
            f"---\nsees: {sees}\nadapter: claude\nmodel: {model}\nmax_cost_usd: 0.5\nwall_clock_s: 120\n---\n"
            f"# Lens: {name}\n\nLook at the change through {name}.\n"
        )
    r.task("t1", adapter="probe", command=WORK, objective="write b.txt", review=["lens-a", "lens-b"])
    done = r.run("cycle")
    assert done.returncode == errors.PASSED, done.stdout + done.stderr
    assert done.stdout.endswith("; waits for 2 reviews: review-lens-a-t1, review-lens-b-t1\n"), done.stdout
    assert where(r.room, "t1") == ["passed"]
    return r


def asked(server: ModelServer, model: str) -> str:
    """Every request body that asked for ``model``, in one string."""
    return "\n".join(
        q.text for q in server.requests if isinstance(q.json, dict) and q.json.get("model") == model
    )


def test_two_lenses_on_two_models_both_accept_and_the_task_merges(real, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    replies = {"mock-a": ACCEPT.format(model="mock-a"), "mock-b": ACCEPT.format(model="mock-b")}
    with ModelServer(replies=replies) as server:
        r = reviewed_room(real, tmp_path, server.url)
        first = r.run("cycle")  # review-lens-a-t1 (same priority: by name)
        assert first.returncode == errors.PASSED, first.stdout + first.stderr
        assert first.stdout.endswith("; t1 waits for review-lens-b-t1 (queue)\n"), first.stdout
        second = r.run("cycle")
        models = server.models()
        to_a, to_b = asked(server, "mock-a"), asked(server, "mock-b")
    assert second.returncode == errors.PASSED, second.stdout + second.stderr
    merged = "; t1 accepted (all 2 reviews accept); it may integrate; merged: t1 (task/t1 onto main"
    assert merged in second.stdout, second.stdout
    assert where(r.room, "t1") == ["to-test"]
    assert (tmp_path / "repo" / "b.txt").read_text() == "b"
    assert git(tmp_path / "repo", "log", "--format=%s") == "t1: write b.txt\nfirst"
    # the server was asked for both models, each with its own review's brief and lens
    assert {"mock-a", "mock-b"} <= set(models), models
    assert "# Brief for task review-lens-a-t1" in to_a and "## Your lens: lens-a" in to_a and "+b" in to_a
    assert "# Brief for task review-lens-b-t1" in to_b and "## Your lens: lens-b" in to_b
    assert "## The executor's history: its report" in to_b and "## The change" not in to_b  # history only
    assert models.index("mock-a") < models.index("mock-b")  # lens-a's review ran in the first cycle
    for rid, model in (("review-lens-a-t1", "mock-a"), ("review-lens-b-t1", "mock-b")):
        meta = r.meta(rid)
        ran = (meta["adapter"], meta["model"], meta["agent_ok"], meta["report"]["ok"])
        assert ran == ("claude", model, True, True), meta
        argv = meta["argv"]
        assert argv[:5] + argv[6:8] == [
            "claude",
            "-p",
            "--output-format",
            "json",
            "--session-id",
            "--model",
            model,
        ], argv
        assert json.loads((r.room.state_dir("done") / f"{rid}.json").read_text())["verdict"] == "accept"
    reviews = [ln for ln in r.room.ledger.read_text().splitlines() if "| review |" in ln]
    assert len(reviews) == 3 and "accepted" in reviews[-1], reviews


def test_one_lens_rejects_with_evidence_and_an_arbiter_is_queued(real, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    replies = {"mock-a": ACCEPT.format(model="mock-a"), "mock-b": REJECT}
    with ModelServer(replies=replies) as server:
        r = reviewed_room(real, tmp_path, server.url)
        assert r.run("cycle").returncode == errors.PASSED
        second = r.run("cycle")
        models = server.models()
    assert second.returncode == errors.PASSED, second.stdout + second.stderr
    assert "t1's reviews disagree (1 accept, 1 reject); queued arbitrate-t1" in second.stdout, second.stdout
    assert {"mock-a", "mock-b"} <= set(models), models
    assert where(r.room, "t1") == ["passed"] and where(r.room, "arbitrate-t1") == ["queue"]
    arbiter = json.loads((r.room.state_dir("queue") / "arbitrate-t1.json").read_text())
    assert (arbiter["arbitrates"], arbiter["role"]) == ("t1", "arbiter")
    assert sorted(arbiter["meaning"].values()) == ["accept", "reject"]
    side = {arbiter["meaning"][k]: v for k, v in arbiter["sides"].items()}
    assert side == {"accept": ["review-lens-a-t1"], "reject": ["review-lens-b-t1"]}
    assert r.meta("review-lens-b-t1")["model"] == "mock-b"
    assert "| arbitration |" in r.last_line() and "queued" in r.last_line()
    assert git(tmp_path / "repo", "log", "--format=%s") == "first"  # nothing merged
