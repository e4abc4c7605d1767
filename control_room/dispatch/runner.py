"""Running a claimed task (SPEC §4 steps 4-8): prepare, run the adapter, validate, write.

The order of writes is what makes a crash safe: results files first, then the ledger line,
then the task's move out of ``swarm/running/``. A cycle killed at any point leaves its task in
``running/`` with a claim that the next cycle recovers.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

from control_room import errors, ledger, proc
from control_room.dispatch import claims
from control_room.dispatch.cycle import CycleResult, Pick
from control_room.ledger import result
from control_room.room import swarm
from control_room.room.layout import Room
from control_room.store.files import atomic_write
from control_room.timeutil import now_iso

_SUCCESS = re.compile(
    r"\b(pass(es|ed)?|succeed(s|ed)?|success(ful(ly)?)?|works?|fixed|green|"
    r"all tests|faster|improved|meets?)\b",
    re.I,
)
_NEGATION = re.compile(r"\b(not?|never|fail\w*|error\w*|broken|regress\w*|slower|unable)\b", re.I)
_QUOTED = re.compile(r'`[^`]*`|"(?:[^"\\]|\\.)*"')


def agent_env(room: Room, gate: dict[str, Any], task: dict[str, Any]) -> dict[str, str]:
    """The dispatcher's environment, or only the names in CONTROL.md ``env_allow``."""
    allow = gate.get("env_allow") or []
    env = {k: v for k, v in os.environ.items() if k in allow} if allow else dict(os.environ)
    env["CONTROL_ROOM"] = str(room.root)
    env["CONTROL_ROOM_TASK"] = str(task.get("id", ""))
    return env


def claims_success(report: Any) -> bool:
    """Does the report's CONFIRMED evidence claim success? A word-level heuristic: a CONFIRMED
    item with a success word and no negation, once quoted text (`...` or "...": output and
    commands quoted as observed) is set aside, since quoting is not claiming."""
    for e in report.confirmed:
        own = _QUOTED.sub(" ", e.text)
        if _SUCCESS.search(own) and not _NEGATION.search(own):
            return True
    return False


def run_claimed(room: Room, gate: dict[str, Any], picked: Pick, slot: int) -> CycleResult:
    from control_room import adapters
    from control_room.dispatch import prompt, report

    task = picked.task
    tid = task["id"]
    round_no = int(task.get("rounds", 0)) + 1
    results = room.swarm / "results" / tid
    _archive(results)
    workdir = (room.root / str(gate["workdir"] or ".")).resolve()
    if not workdir.is_dir():
        return _finish_fail(room, gate, task, picked, f"work dir {workdir} does not exist", {})
    adapter = adapters.get(picked.adapter_name)
    from control_room.knowledge import digest

    p = prompt.assemble(
        room, task, gate, history=digest.route_history(room, task["route"]) if task.get("route") else ""
    )
    for w in p.warnings:
        ledger.append(room.ledger, "warning", task=tid, detail=w)
    atomic_write(room.swarm / "outbox" / f"{tid}.md", p.text)
    atomic_write(results / "prompt.md", p.text)  # archived with the run's other files
    brief = workdir / f".brief-{tid}.md"
    atomic_write(brief, p.text)
    model = task.get("model") or picked.role_settings.get("model") or gate.get("default_model")
    inv = adapters.Invocation(
        task,
        p.text,
        brief,
        workdir,
        model=model or None,
        extra_args=list(task.get("extra_args", [])),
        settings=prompt.settings(gate, picked.role_settings),
    )
    env = adapter.env(inv, agent_env(room, gate, task))
    meta: dict[str, Any] = {
        "task": tid,
        "round": round_no,
        "adapter": adapter.name,
        "model": model,
        "workdir": str(workdir),
        "started": now_iso(),
        **p.pressure(adapter.context_window),
    }

    def started(pid: int) -> None:
        info = claims.read_claim(room, tid) or {}
        info["agent_pgid"] = pid
        try:
            claims.write_claim(room, tid, info)
        except errors.ControlRoomError:
            pass  # recovery still works by pid, slot and deadline

    try:
        argv = adapter.command(inv)
        meta["argv"] = argv
        res = proc.run(
            argv,
            cwd=workdir,
            env=env,
            stdin=adapter.stdin(inv),
            stdout_path=results / "stdout.txt",
            stderr_path=results / "stderr.txt",
            timeout_s=float(task["wall_clock_s"]),
            cap_bytes=int(gate["capture_max_bytes"]),
            stop_file=room.stop,
            on_start=started,
        )
    except proc.ExecutableNotFound as exc:
        brief.unlink(missing_ok=True)
        swarm.move(room, tid, "running", "queue")
        claims.release(room, tid)
        ledger.append(
            room.ledger,
            "adapter-missing",
            task=tid,
            adapter=adapter.name,
            outcome="held",
            detail=f"{exc}; {adapter.install}",
        )
        return CycleResult(
            errors.ADAPTER_MISSING,
            f"adapter {adapter.name} unavailable: {exc}; task {tid} back in the queue",
            tid,
        )
    if res.stopped:
        return _stopped(room, task, picked, brief, "while the agent ran")
    stdout = _read_capped(res.stdout.path)
    stderr = _read_capped(res.stderr.path)
    outcome = adapter.read(res, stdout, stderr)
    atomic_write(results / "report.md", outcome.final_message)
    # What the agent said: its final message, or its output where the adapter (the probe) wrote
    # the report itself. Proposals are read from here.
    atomic_write(results / "answer.md", str(outcome.extra.get("answer", outcome.final_message)))
    rep = report.validate(outcome.final_message)
    val = _run_validator(room, gate, task, workdir, env, results)
    brief.unlink(missing_ok=True)
    if val is not None and val.stopped:
        return _stopped(room, task, picked, None, "while its validator ran")
    failures = []
    if res.timed_out:
        failures.append(f"the agent was killed at its {task['wall_clock_s']}s time limit")
    elif not outcome.ok:
        failures.append(outcome.error or f"{adapter.name} failed")
    if not rep.ok:
        failures.append(
            "broken report: " + "; ".join(f"line {v.line}: {v.message}" for v in rep.violations[:3])
        )
    val_ok = val is not None and val.ok
    if not val_ok:
        failures.append(_validator_failure(val, gate))
    unsupported = rep.ok and not val_ok and claims_success(rep)
    meta.update(
        {
            "ended": now_iso(),
            "exit_code": res.exit_code,
            "timed_out": res.timed_out,
            "duration_s": round(res.duration_s, 3),
            "notes": res.notes,
            "input_tokens": outcome.input_tokens,
            "output_tokens": outcome.output_tokens,
            "cost_usd": outcome.cost_usd,
            "agent_ok": outcome.ok,
            "agent_error": outcome.error,
            "report": {
                "ok": rep.ok,
                "decision": rep.decision,
                "violations": [[v.line, v.message] for v in rep.violations],
            },
            "validator": _validator_meta(val),
            "verdict": "pass" if not failures else "fail",
            "failures": failures,
            "unsupported_claim": unsupported,
        }
    )
    atomic_write(results / "meta.json", json.dumps(meta, indent=2) + "\n")
    cost = outcome.cost_usd or 0.0
    tokens = (
        f", tokens {outcome.input_tokens or 0}/{outcome.output_tokens or 0}" if outcome.input_tokens else ""
    )
    summary = (
        f"round {round_no}; agent exit {res.exit_code} in {res.duration_s:.1f}s{tokens}; "
        f"report {'ok' if rep.ok else 'broken'}; validator {_validator_word(val)}; "
        f"prompt {meta['prompt_bytes']} B ~{meta['prompt_tokens_est']} tokens "
        f"({meta['context_pressure']:.1%} of context)"
    )
    if cost > float(task["max_cost_usd"]):
        ledger.append(
            room.ledger,
            "cost-overrun",
            task=tid,
            route=task.get("route", ""),
            adapter=adapter.name,
            outcome="over",
            detail=f"spent ${cost:.4f}, above the task's max_cost_usd ${task['max_cost_usd']}",
        )
    if unsupported:
        ledger.append(
            room.ledger,
            "unsupported-claim",
            task=tid,
            route=task.get("route", ""),
            adapter=adapter.name,
            outcome="unsupported",
            detail=f"report says CONFIRMED success; validator {_validator_word(val)}",
        )
    if not failures:
        ledger.append(
            room.ledger,
            "result",
            task=tid,
            route=task.get("route", ""),
            adapter=adapter.name,
            outcome="pass",
            cost_usd=cost,
            detail=result.detail(summary, rep.decision),
        )
        swarm.move(room, tid, "running", "done", task={**task, "passed_at": now_iso()})
        claims.release(room, tid)
        if picked.role_settings.get("writes_tasks") is True:
            from control_room.dispatch import proposals

            proposals.accept(room, gate, tid, str(outcome.extra.get("answer", outcome.final_message)))
        _after(room, task, "pass", cost)
        return CycleResult(errors.PASSED, f"passed: {tid} ({summary})", tid)
    return _finish_fail(
        room,
        gate,
        task,
        picked,
        "; ".join(failures),
        {"cost": cost, "summary": summary, "decision": rep.decision},
    )


def _finish_fail(
    room: Room, gate: dict[str, Any], task: dict[str, Any], picked: Pick, why: str, info: dict[str, Any]
) -> CycleResult:
    tid = task["id"]
    cost = float(info.get("cost", 0.0))
    ledger.append(
        room.ledger,
        "result",
        task=tid,
        route=task.get("route", ""),
        adapter=picked.adapter_name,
        outcome="fail",
        cost_usd=cost,
        detail=result.detail(info.get("summary", ""), info.get("decision", ""), why),
    )
    where = fail_round(room, gate, task, why, src="running")
    _after(room, task, "fail", cost)
    return CycleResult(errors.FAILED, f"failed: {tid} ({why}); {where}", tid)


def fail_round(room: Room, gate: dict[str, Any], task: dict[str, Any], why: str, *, src: str) -> str:
    """Count a failed round: back to the queue with what failed, or parked after the last."""
    tid = task["id"]
    rounds = int(task.get("rounds", 0)) + 1
    updated = {**task, "rounds": rounds, "last_failure": why}
    max_rounds = int(gate["max_rounds"])
    if rounds >= max_rounds:
        reason = (
            f"Parked at {now_iso()} after {rounds} failed round{'s' if rounds != 1 else ''} "
            f"(CONTROL.md max_rounds {max_rounds}).\n\nLast failure:\n{why}\n\n"
            f"Results: swarm/results/{tid}/\nA person decides: `control-room task retry {tid}`, "
            f"`control-room task cancel {tid}`, or kill its route.\n"
        )
        swarm.move(room, tid, src, "parked", task=updated, reason=reason)
        ledger.append(
            room.ledger,
            "park",
            task=tid,
            route=task.get("route", ""),
            outcome="parked",
            detail=f"after {rounds} failed round{'s' if rounds != 1 else ''}: {why}",
        )
        where = "parked for a person (swarm/parked/)"
    else:
        swarm.move(room, tid, src, "queue", task=updated)
        where = f"back in the queue for round {rounds + 1} of {max_rounds}"
    claims.release(room, tid)
    return where


def _stopped(room: Room, task: dict[str, Any], picked: Pick, brief: Path | None, when: str) -> CycleResult:
    tid = task["id"]
    if brief is not None:
        brief.unlink(missing_ok=True)
    swarm.move(room, tid, "running", "queue")
    claims.release(room, tid)
    ledger.append(
        room.ledger,
        "stopped",
        task=tid,
        route=task.get("route", ""),
        adapter=picked.adapter_name,
        outcome="requeued",
        detail=f"STOP appeared {when}; process group killed; task back in the queue",
    )
    _refresh(room)
    return CycleResult(errors.STOPPED, f"stopped: STOP appeared {when}; {tid} is back in the queue", tid)


def _run_validator(
    room: Room, gate: dict[str, Any], task: dict[str, Any], workdir: Path, env: dict[str, str], results: Path
) -> proc.Result | None:
    from control_room.adapters.probe import argv_of

    try:
        argv = argv_of(task["validator"], "the validator")
        return proc.run(
            argv,
            cwd=workdir,
            env=env,
            timeout_s=float(gate["validator_timeout_s"]),
            stdout_path=results / "validator.stdout.txt",
            stderr_path=results / "validator.stderr.txt",
            cap_bytes=int(gate["capture_max_bytes"]),
            stop_file=room.stop,
        )
    except errors.ControlRoomError as exc:
        atomic_write(results / "validator.stderr.txt", f"{exc}\n")
        return None


def _validator_word(val: proc.Result | None) -> str:
    if val is None:
        return "could not start"
    if val.timed_out:
        return "timed out"
    return "passed" if val.ok else f"exited {val.exit_code}"


def _validator_failure(val: proc.Result | None, gate: dict[str, Any]) -> str:
    if val is None:
        return "validator could not start (see validator.stderr.txt)"
    if val.timed_out:
        return f"validator timed out after {gate['validator_timeout_s']}s"
    tail = (val.stderr.tail(3) or val.stdout.tail(3)).replace("\n", " / ")
    return f"validator exited {val.exit_code}" + (f": {tail[:300]}" if tail else "")


def _validator_meta(val: proc.Result | None) -> dict[str, Any] | None:
    if val is None:
        return None
    return {
        "argv": val.argv,
        "exit_code": val.exit_code,
        "duration_s": round(val.duration_s, 3),
        "timed_out": val.timed_out,
        "tail": val.stdout.tail(10),
        "stderr_tail": val.stderr.tail(10),
    }


def _read_capped(path: Path, limit: int = 20_000_000) -> str:
    try:
        with open(path, "rb") as f:
            return f.read(limit).decode("utf-8", "replace")
    except OSError:
        return ""


def _archive(results: Path) -> None:
    """Keep the previous run's files in ``results/ID/run-K/`` before a new run."""
    results.mkdir(parents=True, exist_ok=True)
    files = [p for p in results.iterdir() if p.is_file()]
    if not files:
        return
    runs = sum(1 for p in results.iterdir() if p.is_dir() and p.name.startswith("run-"))
    target = results / f"run-{runs + 1}"  # run-1, run-2, ...: a retried task's rounds restart at 1
    target.mkdir()
    for p in files:
        shutil.move(str(p), target / p.name)


def _after(room: Room, task: dict[str, Any], verdict: str, cost: float) -> None:
    """Step 8: ROUTES.md, findings, DIGEST.md and CURRENT_CONTEXT.md."""
    from control_room.knowledge import digest, routes
    from control_room.room import settings as control

    if task.get("route"):
        routes.record_run(room, task["route"], task["id"], verdict, cost)
    gate = control.load(room)
    for key, loop in digest.held(room, gate).items():
        if not loop["announced"]:
            route = key if not key.startswith("task:") else ""
            ledger.append(
                room.ledger,
                "death-loop",
                task=key[5:] if not route else "",
                route=route,
                outcome="held",
                detail=f"{loop['n']} failures in a row with the same {loop['same']}: "
                f"{loop['cause']}; held until `control-room route resume {key} --because ...`",
            )
    digest.refresh(room, gate)
    _refresh(room)


def _refresh(room: Room) -> None:
    from control_room.views import context

    context.refresh(room)
