"""Providers fail and money runs out (docs/faults.md), through the installed command: a room
whose claude is rate limited (a program answering as Claude Code does for an HTTP 429) finishes
every task on its fallback with no round charged, a run that keeps spending is ended by its cap,
and the same change failing the same way trips the no-progress breaker."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

from support import FAKES, entries, queue, set_gate, task_json, where

from control_room import errors
from control_room.room import cooldowns
from control_room.room.layout import Room

# What Claude Code prints in print mode when the API answers 429 (its result object, exit 1)
LIMITED = {
    "type": "result", "subtype": "success", "is_error": True, "duration_ms": 300, "num_turns": 1,
    "result": 'API Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":'
              '"Number of request tokens has exceeded your per-minute rate limit"}} · retry-after: 600',
    "session_id": "s", "total_cost_usd": 0, "usage": {"input_tokens": 0, "output_tokens": 0},
}  # fmt: skip


def limited_claude(tmp_path: Path) -> Path:
    bin_dir = tmp_path / "limited"
    bin_dir.mkdir()
    program = bin_dir / "claude"
    program.write_text(
        "#!/usr/bin/env python3\nimport json, sys\nsys.stdin.read()\n"
        f"open({str(tmp_path / 'claude.calls')!r}, 'a').write('call\\n')\n"
        f"print(json.dumps({LIMITED!r}))\nsys.exit(1)\n"
    )
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return bin_dir


def test_a_rate_limited_adapter_costs_no_round_and_its_tasks_finish_on_the_fallback(
    cr: Any, room: Room, tmp_path: Path
) -> None:
    env = {"PATH": f"{limited_claude(tmp_path)}{os.pathsep}{FAKES}{os.pathsep}{os.environ['PATH']}"}
    for k in range(1, 4):
        queue(room, f"t{k}", adapter="claude", command=None, fallback=["codex"], priority=10 - k)
    queue(room, "solo", adapter="claude", command=None, priority=0)  # no fallback: it waits
    first = cr("cycle", extra_env=env)
    assert first.returncode == errors.PROVIDER, first.stdout + first.stderr
    assert (
        "t1: claude's provider refused the run (rate-limit); back in the queue, no round used" in first.stdout
    )
    (fault,) = entries(room, "provider-fault")
    assert (fault.task, fault.adapter) == ("t1", "claude")
    assert fault.detail.startswith("rate-limit: claude cools down until ")
    assert "(rate-limit, the provider's reset time)" in fault.detail
    codes = [cr("cycle", extra_env=env).returncode for _ in range(3)]
    assert codes == [errors.PASSED] * 3
    for k in range(1, 4):
        assert where(room, f"t{k}") == ["done"]
        assert task_json(room, "done", f"t{k}").get("rounds", 0) == 0
        meta = json.loads((room.swarm / "results" / f"t{k}" / "meta.json").read_text())
        assert (meta["adapter"], meta["instead_of"]) == ("codex", "claude")
    assert (tmp_path / "claude.calls").read_text() == "call\n"  # claude was not asked again
    last = cr("cycle", extra_env=env)
    assert last.returncode == errors.OK and "solo waits: claude cools down until" in last.stdout
    assert task_json(room, "queue", "solo").get("rounds", 0) == 0
    status = cr("status")
    assert "cooling   claude cools down until " in status.stdout
    data = json.loads(cr("status", "--json").stdout)
    assert [c["adapter"] for c in data["cooling"]] == ["claude"] and data["cooling"][0][
        "kind"
    ] == "rate-limit"
    context = room.context.read_text(encoding="utf-8")
    assert "- cooling down: claude cools down until " in context
    # a person ends the cooldown early: the file is disposable
    cooldowns.path(room).unlink()
    assert "cooling" not in cr("status").stdout


# A model that keeps calling tools: `codex exec --json` printing one turn.completed after another
ENDLESS = """#!/usr/bin/env python3
import json, sys, time
sys.stdin.read()
print(json.dumps({"type": "thread.started", "thread_id": "t"}), flush=True)
while True:
    print(json.dumps({"type": "item.completed", "item": {"type": "command_execution", "command": "ls"}}))
    print(json.dumps({"type": "turn.completed",
                      "usage": {"input_tokens": 100000, "cached_input_tokens": 0, "output_tokens": 10000}}),
          flush=True)
    time.sleep(0.3)
"""


ROLLOUT = """#!/usr/bin/env python3
import json, os, sys, time
sys.stdin.read()
thread = "0a1b2c3d-4e5f"
print(json.dumps({"type": "thread.started", "thread_id": thread}), flush=True)
print(json.dumps({"type": "turn.started"}), flush=True)
day = os.path.join(os.environ["CODEX_HOME"], "sessions", "2026", "12", "04")
os.makedirs(day, exist_ok=True)
count = {"type": "event_msg", "payload": {"type": "token_count", "info": {
    "last_token_usage": {"input_tokens": 100000, "cached_input_tokens": 0, "output_tokens": 10000}}}}
with open(os.path.join(day, f"rollout-2026-12-04T10-00-00-{thread}.jsonl"), "a") as log:
    while True:  # as codex exec does: a token_count per request in its rollout, turn.completed at the end
        print(json.dumps({"type": "item.completed", "item": {"type": "command_execution", "command": "ls"}}),
              flush=True)
        log.write(json.dumps(count) + "\\n")
        log.flush()
        time.sleep(0.3)
"""


def test_codex_is_capped_from_its_session_log_before_its_turn_ends(
    cr: Any, room: Room, tmp_path: Path
) -> None:
    bin_dir, home = tmp_path / "rollout", tmp_path / "codex-home"
    bin_dir.mkdir()
    (bin_dir / "codex").write_text(ROLLOUT)
    (bin_dir / "codex").chmod(0o755)
    control = room.control.read_text(encoding="utf-8")
    room.control.write_text(control.replace("\nprices: {}", "\nprices: {m1: {input: 1.0, output: 5.0}}"))
    queue(room, "spender", adapter="codex", model="m1", command=None, max_cost_usd=0.5, wall_clock_s=30)
    path = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
    done = cr("cycle", extra_env={"PATH": path, "CODEX_HOME": str(home)})
    assert done.returncode == errors.FAILED, done.stdout + done.stderr
    back = task_json(room, "queue", "spender")
    assert back["last_failure"].startswith(
        "cost-cap: $0.6000 (estimated) spent over 4 step(s) (400000 tokens in, 40000 out), "
        "past max_cost_usd $0.5;"
    )
    meta = json.loads((room.swarm / "results" / "spender" / "meta.json").read_text())
    spent = (meta["input_tokens"], meta["output_tokens"], meta["cost_usd"], meta["cost_estimated"])
    assert spent == (400_000, 40_000, 0.6, True), meta  # codex itself said nothing: the meter's count
    (line,) = entries(room, "result")
    assert (line.outcome, float(line.cost_usd)) == ("fail", 0.6)  # what the daily budget sums


def test_a_run_that_keeps_spending_is_ended_by_its_cap(cr: Any, room: Room, tmp_path: Path) -> None:
    bin_dir = tmp_path / "endless"
    bin_dir.mkdir()
    (bin_dir / "codex").write_text(ENDLESS)
    (bin_dir / "codex").chmod(0o755)
    control = room.control.read_text(encoding="utf-8")
    room.control.write_text(control.replace("\nprices: {}", "\nprices: {m1: {input: 1.0, output: 5.0}}"))
    queue(room, "spender", adapter="codex", model="m1", command=None, max_cost_usd=0.5, wall_clock_s=120)
    done = cr("cycle", extra_env={"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})
    assert done.returncode == errors.FAILED, done.stdout + done.stderr
    back = task_json(room, "queue", "spender")
    assert back["rounds"] == 1
    assert back["last_failure"].startswith("cost-cap: $0.6000 (estimated) spent over 4 step(s)")
    assert "past max_cost_usd $0.5" in back["last_failure"]
    meta = json.loads((room.swarm / "results" / "spender" / "meta.json").read_text())
    assert any(n.startswith("ended: cost-cap") for n in meta.get("notes", [])), meta


# The no-progress breaker: the same change failing the same way, again and again -----------------

SAME = [sys.executable, "-c", "open('same.txt', 'w').write('the same attempt')"]
FAILS = [
    sys.executable,
    "-c",
    "import sys; print('FAIL: expected 42, got 41 in /tmp/run-123/t.py'); sys.exit(1)",
]


def test_the_same_change_failing_the_same_way_parks_and_proposes_a_kill(
    cr: Any, room: Room, repo: Path
) -> None:
    set_gate(room, "max_rounds", "5")
    set_gate(room, "death_loop_n", "9")  # the death loop's hold aside: the breaker alone
    assert cr("route", "add", "r1", "--title", "an idea that does not work").returncode == 0
    queue(room, "t1", route="r1", command=SAME, validator=FAILS)
    said = [cr("cycle") for _ in range(3)]
    assert [d.returncode for d in said] == [errors.FAILED] * 3
    assert said[1].stdout.endswith("back in the queue for round 3 of 5\n")
    assert said[2].stdout.endswith("parked for a person (swarm/parked/)\n")
    assert where(room, "t1") == ["parked"]
    reason = (room.state_dir("parked") / "t1.reason").read_text()
    assert "after 3 failed rounds in a row with one fingerprint (" in reason
    (proposal,) = entries(room, "kill-proposed")
    assert (proposal.task, proposal.route) == ("t1", "r1")
    assert proposal.detail.endswith(
        "reopen if: a change that fails another way, or a new approach to its falsifier"
    )
    shown = cr("findings").stdout
    assert shown.startswith("proposed kill: r1: after 3 failed rounds in a row with one fingerprint")
    assert "control-room route kill r1 --verdict" in shown
    data = json.loads(cr("findings", "--json").stdout)
    assert [p["key"] for p in data["kill_proposals"]] == ["r1"]
    # a person decides: the proposal is gone once the route is killed
    assert cr("route", "kill", "r1", "--verdict", "no progress", "--reopen-if", "a new idea").returncode == 0
    assert json.loads(cr("findings", "--json").stdout)["kill_proposals"] == []


def test_a_change_that_differs_each_round_is_progress_even_when_it_fails_alike(
    cr: Any, room: Room, repo: Path
) -> None:
    set_gate(room, "max_rounds", "5")
    set_gate(room, "death_loop_n", "9")
    grows = [sys.executable, "-c", "open('n.txt', 'a').write('x')"]  # a new change every round
    queue(room, "t1", route="r1", command=grows, validator=FAILS)
    said = [cr("cycle") for _ in range(4)]
    assert [d.returncode for d in said] == [errors.FAILED] * 4, said[-1].stdout
    assert where(room, "t1") == ["queue"]
    assert entries(room, "kill-proposed") == []


def test_a_cli_that_reports_only_tokens_is_priced_from_prices_and_marked_estimated(
    cr: Any, room: Room
) -> None:
    control = room.control.read_text(encoding="utf-8")
    room.control.write_text(control.replace("\nprices: {}", "\nprices: {m1: {input: 1.0, output: 5.0}}"))
    queue(room, "g1", adapter="gemini", model="m1", command=None)
    done = cr("cycle", extra_env={"PATH": f"{FAKES}{os.pathsep}{os.environ['PATH']}"})
    assert done.returncode == errors.PASSED, done.stdout + done.stderr
    meta = json.loads((room.swarm / "results" / "g1" / "meta.json").read_text())
    (line,) = [e for e in entries(room, "result") if e.task == "g1"]
    expected = round((meta["input_tokens"] * 1.0 + meta["output_tokens"] * 5.0) / 1e6, 6)
    assert meta["cost_estimated"] is True and meta["cost_usd"] == expected > 0
    assert float(line.cost_usd) == expected and '"cost": "estimated"' in line.detail
