"""control-room scorecard: per adapter and model, per role, counted by hand on a built ledger."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from support import PY, entries, ok, queue, set_gate

from control_room import errors, ledger
from control_room.ledger import events, result
from control_room.ledger import write as ledger_write
from control_room.ledger.result import RunResult
from control_room.room.layout import Room

Run = Callable[..., Result]


def at(monkeypatch: pytest.MonkeyPatch, when: str) -> None:
    monkeypatch.setattr(ledger_write, "now_iso", lambda: when)


def res(room: Room, task: str, adapter: str, outcome: str, cost: float, **fields: Any) -> None:
    ledger.append(
        room.ledger, events.RESULT, task=task, adapter=adapter, outcome=outcome, cost_usd=cost,
        detail=RunResult(decision="d", **fields).detail(),
    )  # fmt: skip


def build(room: Room) -> None:
    """The hand-built mix: three adapters/models, two roles, a line from before 0.3 (no model,
    no role), passes on round 1 and 2, a task parked after two failures, a park with no run,
    unsupported claims, and lines the scorecard does not read."""
    with pytest.MonkeyPatch.context() as mp:
        _build(room, mp)


def _build(room: Room, mp: pytest.MonkeyPatch) -> None:
    at(mp, "2025-03-01T10:00:00Z")
    res(room, "t-old", "claude", "pass", 0.5, round=1, seconds=60)
    at(mp, "2025-03-01T11:00:00Z")
    ledger.append(room.ledger, events.PARK, task="t-never", detail="parked by hand")
    at(mp, "2025-03-02T09:00:00Z")
    ledger.append(room.ledger, events.CLAIM, task="t1", adapter="claude", detail="round 1, slot 0, pid 1")
    eng = {"model": "sonnet", "role": "engineer"}
    res(room, "t1", "claude", "pass", 0.10, round=1, seconds=120, input_tokens=1000, output_tokens=200, **eng)
    at(mp, "2025-03-02T09:10:00Z")
    res(room, "t2", "claude", "fail", 0.05, round=1, seconds=30, input_tokens=500, output_tokens=100,
        unsupported=True, **eng)  # fmt: skip
    at(mp, "2025-03-02T10:00:00Z")
    res(room, "t2", "claude", "pass", 0.07, round=2, seconds=90, input_tokens=800, output_tokens=150, **eng)
    at(mp, "2025-03-02T10:30:00Z")
    gpt = {"model": "gpt-5", "role": "engineer"}
    res(room, "t3", "codex", "fail", 0.0, round=1, seconds=60, **gpt)
    at(mp, "2025-03-02T11:00:00Z")
    res(room, "t3", "codex", "fail", 0.0, round=2, seconds=60, unsupported=True, **gpt)
    at(mp, "2025-03-02T11:01:00Z")
    ledger.append(room.ledger, events.PARK, task="t3", detail="max_rounds failed rounds")
    ledger.append(room.ledger, events.WARNING, task="t3", detail="not read by the scorecard")
    at(mp, "2025-03-02T12:00:00Z")
    res(room, "o1", "claude", "pass", 0.30, round=1, seconds=240, input_tokens=3000, output_tokens=900,
        model="opus", role="orchestrator")  # fmt: skip


def m(
    tasks: int, runs: int, first: tuple[int, int], passed: int, parked: int, mean: float | None,
    minutes: float, tokens: tuple[int, int, int], spend: float, unsupported: int,
    post: tuple[int, int] = (0, 0),
) -> dict[str, Any]:  # fmt: skip
    return {
        "tasks": tasks,
        "runs": runs,
        "first_round_pass": {"passed": first[0], "of": first[1]},
        "passed": passed,
        "parked": parked,
        "mean_rounds_to_pass": {"mean": mean, "of": passed},
        "agent_minutes": minutes,
        "tokens": {"input": tokens[0], "output": tokens[1], "runs_reporting": tokens[2]},
        "spend_usd": spend,
        "unsupported_claims": {"count": unsupported, "of": runs},
        "post_rebase_validator_failures": {"count": post[0], "of": post[1]},
    }


SONNET = m(2, 3, (1, 2), 2, 0, 1.5, 4.0, (2300, 450, 3), 0.22, 1)
OPUS = m(1, 1, (1, 1), 1, 0, 1.0, 4.0, (3000, 900, 1), 0.3, 0)
OLD = m(1, 1, (1, 1), 1, 0, 1.0, 1.0, (0, 0, 0), 0.5, 0)
GPT = m(1, 2, (0, 1), 0, 1, None, 2.0, (0, 0, 0), 0.0, 1)
NEVER_RAN = m(0, 0, (0, 0), 0, 1, None, 0.0, (0, 0, 0), 0.0, 0)


def card(run: Run, *args: str) -> dict[str, Any]:
    out = run("scorecard", "--json", *args)
    assert out.exit_code == 0, out.stderr
    data: dict[str, Any] = json.loads(out.stdout)
    return data


def test_json_counts_equal_a_hand_count(run: Run, inside: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    build(inside)
    sc = card(run)
    assert list(sc) == ["since", "ledger_lines", "by_model", "by_role", "total"]
    assert sc["since"] is None
    assert sc["ledger_lines"] == 12  # init's line and the eleven built
    assert sc["by_model"] == [
        {"adapter": "claude", "model": "opus", **OPUS},
        {"adapter": "claude", "model": "sonnet", **SONNET},
        {"adapter": "claude", "model": "unknown", **OLD},  # written before 0.3
        {"adapter": "codex", "model": "gpt-5", **GPT},  # its park counts here: its last run
        {"adapter": "unknown", "model": "unknown", **NEVER_RAN},
    ]
    assert sc["by_role"] == [
        {"role": "engineer", **m(3, 5, (1, 3), 2, 1, 1.5, 6.0, (2300, 450, 3), 0.22, 2)},
        {"role": "orchestrator", **OPUS},
        {"role": "unknown", **m(1, 1, (1, 1), 1, 1, 1.0, 1.0, (0, 0, 0), 0.5, 0)},
    ]
    assert sc["total"] == m(5, 7, (3, 5), 4, 2, 1.25, 11.0, (5300, 1350, 4), 1.02, 2)


def test_text_puts_each_rate_beside_its_sample(
    run: Run, inside: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    build(inside)
    out = run("scorecard", "--since", "2025-03-02T12:59:00Z")  # the hour 12: the orchestrator's run
    ok(
        out,
        "scorecard since 2025-03-02T12:00:00Z: 1 run of 1 task\n"
        "by adapter and model\n"
        "  claude opus\n"
        "    tasks run             1 (1 run)\n"
        "    first-round pass      1/1 (100%)\n"
        "    passed                1\n"
        "    parked                0\n"
        "    mean rounds to pass   1 (of 1)\n"
        "    agent minutes         4\n"
        "    tokens in/out         3000/900 (1 of 1 run reported)\n"
        "    spend                 $0.3000\n"
        "    unsupported claims    0/1 (0%)\n"
        "    post-rebase failures  0/0 (-)\n"
        "by role\n"
        "  orchestrator\n"
        "    tasks run             1 (1 run)\n"
        "    first-round pass      1/1 (100%)\n"
        "    passed                1\n"
        "    parked                0\n"
        "    mean rounds to pass   1 (of 1)\n"
        "    agent minutes         4\n"
        "    tokens in/out         3000/900 (1 of 1 run reported)\n"
        "    spend                 $0.3000\n"
        "    unsupported claims    0/1 (0%)\n"
        "    post-rebase failures  0/0 (-)\n"
        "total\n"
        "  all\n"
        "    tasks run             1 (1 run)\n"
        "    first-round pass      1/1 (100%)\n"
        "    passed                1\n"
        "    parked                0\n"
        "    mean rounds to pass   1 (of 1)\n"
        "    agent minutes         4\n"
        "    tokens in/out         3000/900 (1 of 1 run reported)\n"
        "    spend                 $0.3000\n"
        "    unsupported claims    0/1 (0%)\n"
        "    post-rebase failures  0/0 (-)\n",
    )
    full = run("scorecard").stdout
    assert full.startswith("scorecard: 7 runs of 5 tasks\n")
    assert (
        "    first-round pass      3/5 (60%)\n    passed                4\n    parked                2\n"
        in full
    )
    assert "    unsupported claims    2/7 (29%)\n" in full
    assert (
        "  unknown unknown\n    tasks run             0 (0 runs)\n    first-round pass      0/0 (-)\n" in full
    )


def test_since_a_date_a_time_and_a_duration(run: Run, inside: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    build(inside)
    day2 = card(run, "--since", "2025-03-02")
    assert day2["since"] == "2025-03-02T00:00:00Z"
    assert day2["total"] == m(4, 6, (2, 4), 3, 1, 1.33, 10.0, (5300, 1350, 4), 0.52, 2)
    assert [g["model"] for g in day2["by_model"]] == ["opus", "sonnet", "gpt-5"]
    # Counted by whole hours: 10:30 counts the hour from 10:00, so t2's second round is in.
    late = card(run, "--since", "2025-03-02T10:30:00Z")
    assert late["since"] == "2025-03-02T10:00:00Z"
    assert late["total"] == m(3, 4, (1, 2), 2, 1, 1.5, 7.5, (3800, 1050, 2), 0.37, 1)
    assert card(run, "--since", "1h")["total"]["runs"] == 0  # every built line is older
    res(inside, "t-now", "probe", "pass", 0.0, round=1, seconds=6, model="default", role="engineer")
    recent = card(run, "--since", "1h")
    assert recent["total"] == m(1, 1, (1, 1), 1, 0, 1.0, 0.1, (0, 0, 0), 0.0, 0)
    assert [(g["adapter"], g["model"]) for g in recent["by_model"]] == [("probe", "default")]
    assert card(run, "--since", "10000d")["total"]["runs"] == 8


@pytest.mark.parametrize("since", ["yesterday", "2025-13-01", "0", "-1h"])
def test_since_not_a_date_or_a_duration(run: Run, inside: Room, since: str) -> None:
    out = run("scorecard", "--since", since)
    assert out.exit_code == errors.INVALID
    assert out.stdout == ""
    assert out.stderr == (
        f"Error: --since {since!r}: not a date, a time or a duration (try 2026-12-01, 7d, 12h)\n"
    )


def test_an_empty_room(run: Run, inside: Room) -> None:
    ok(run("scorecard"), "scorecard: 0 runs of 0 tasks\n")
    sc = card(run)
    assert sc["by_model"] == sc["by_role"] == []
    assert sc["total"] == m(0, 0, (0, 0), 0, 0, None, 0.0, (0, 0, 0), 0.0, 0)


def test_the_cache_after_new_lines_equals_a_fresh_fold(
    run: Run, inside: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    build(inside)
    first = card(run)
    cache = inside.cache / "scorecard"
    assert cache.is_file()
    with pytest.MonkeyPatch.context() as mp:
        at(mp, "2025-03-03T08:00:00Z")
        res(inside, "t4", "codex", "pass", 0.02, round=1, seconds=30, model="gpt-5", role="engineer")
        ledger.append(inside.ledger, events.PARK, task="t2", detail="parked by hand after it passed")
    followed = card(run)
    assert followed != first
    assert followed["total"] == m(6, 8, (4, 6), 5, 3, 1.2, 11.5, (5300, 1350, 4), 1.04, 2)
    cache.unlink()
    assert card(run) == followed  # a fold from the first line gives the same


def test_a_cycle_writes_model_role_and_tokens_on_its_result_line(run: Run, inside: Room) -> None:
    queue(inside, "p1")
    assert run("cycle").exit_code == errors.PASSED
    [line] = entries(inside, "result")
    r = result.read(line.detail)
    assert (r.model, r.role) == ("default", "engineer")
    sc = card(run)
    assert [(g["adapter"], g["model"]) for g in sc["by_model"]] == [("probe", "default")]
    assert [g["role"] for g in sc["by_role"]] == ["engineer"]
    assert sc["total"]["first_round_pass"] == {"passed": 1, "of": 1}


def test_a_validator_that_fails_only_after_the_rebase_is_counted(
    run: Run, inside: Room, tmp_path: Path
) -> None:
    """A real cycle and `integrate` on a real repository: the task passes in its worktree, the
    base gains a file that breaks its validator, the re-run after the rebase fails."""

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True)

    repo = tmp_path / "repo"
    repo.mkdir()
    git("init", "-q", "-b", "main")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    (repo / "README").write_text("hello\n")
    git("add", "README")
    git("commit", "-q", "-m", "first")
    set_gate(inside, "repo", "../repo")
    no_base = [PY, "-c", "import os, sys; sys.exit(1 if os.path.exists('base.txt') else 0)"]
    queue(inside, "t1", command=[PY, "-c", "open('made.txt', 'w').write('x')"], validator=no_base)
    assert run("cycle").exit_code == errors.PASSED
    (repo / "base.txt").write_text("the base moved\n")
    git("add", "base.txt")
    git("commit", "-q", "-m", "another route's work")
    assert run("integrate").exit_code == errors.FAILED
    assert [e.outcome for e in entries(inside, "integrate")] == ["failed"]
    sc = card(run)
    assert [(g["adapter"], g["model"], g["post_rebase_validator_failures"]) for g in sc["by_model"]] == [
        ("probe", "default", {"count": 1, "of": 1})
    ]
    assert sc["total"]["post_rebase_validator_failures"] == {"count": 1, "of": 1}
    text = run("scorecard").stdout
    assert text.count("    post-rebase failures  1/1 (100%)\n") == 3  # its model, its role, the total
