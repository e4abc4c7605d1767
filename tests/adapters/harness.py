"""One harness that drives any adapter through its whole contract, for real: the adapter's
argv runs through ``proc.run`` against the fake CLI in tests/fakes (first on PATH), and the
adapter reads back what the fake printed. Each adapter's test file only states its specifics.

Scenarios (FAKE_AGENT_MODE of the fake):
- success: ok, the final message holds a report quoting the task id, exact tokens/cost;
  the prompt never travelled in argv, no bypass flag was added, extra_args come last;
- error: not ok, and the one-line error names the exit code;
- garbage: no exception, and either not ok or no report;
- noreport: ok (the CLI did its job) but no report in the final message;
- timeout: killed at a 1 s wall clock, with its grandchild dead soon after;
- spend (``capped``, for the CLIs that report their usage as they run): a model that never
  stops, ended by the live cap (dispatch/run/spend.py) reading the usage where the real CLI
  logs it.
"""

from __future__ import annotations

import itertools
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from control_room import proc
from control_room.adapters import faults
from control_room.adapters.base import Adapter, Invocation, Outcome, Setup
from control_room.dispatch.run import spend

FAKES = Path(__file__).resolve().parents[1] / "fakes"
# The time-out runs wait out a 1 s wall clock each, 18 of them: in the slow tier (`pytest -m slow`).
SCENARIOS = ("success", "error", "garbage", "noreport", pytest.param("timeout", marks=pytest.mark.slow))
TASK_ID = "t-1"
MARKER = "the marker line: 7f3a-never-in-argv"

# Every bypass flag SPEC §8 names, in whatever CLI; none may appear unless extra_args put it there.
BYPASS = (
    "--dangerously-skip-permissions", "bypassPermissions", "--yolo", "-y", "--approval-mode=yolo",
    "--allow-all-tools", "--allow-all", "--dangerously-bypass-approvals-and-sandbox",
    "danger-full-access", "--auto", "--afk", "--force", "-f", "--dangerously-allow-all",
)  # fmt: skip


def long_prompt() -> str:
    """A long multi-line brief with quotes, shell metacharacters and the task id line."""
    body = "\n".join(
        f"{n:03d}. Step with 'single' and \"double\" quotes, $HOME, `ticks`, a \\ and ; | & > <"
        for n in range(1, 301)
    )
    return f'# Brief\n\nid: {TASK_ID}\nobjective: make it "faster"\n{MARKER}\n\n{body}\n\nEnd of brief.\n'


@dataclass
class Spec:
    """What one adapter is expected to report against its fake."""

    adapter: Adapter
    extra_args: list[str] = field(default_factory=list)
    model: str | None = "test-model"
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    error_exit: int = 1  # the fake's exit code in error mode
    setup: Setup = field(default_factory=Setup)  # CONTROL.md adapters.<name>
    env: dict[str, str] = field(default_factory=dict)  # more variables in the dispatcher's env


def invocation(tmp_path: Path, spec: Spec, task: dict[str, Any] | None = None) -> Invocation:
    workdir = tmp_path / "work dir"  # a space on purpose
    workdir.mkdir(exist_ok=True)
    prompt = long_prompt()
    brief = workdir / "BRIEF.md"
    brief.write_text(prompt, encoding="utf-8")
    results = tmp_path / "results"
    results.mkdir(exist_ok=True)
    return Invocation(task=task or {"id": TASK_ID}, prompt=prompt, brief=brief, workdir=workdir,
                      model=spec.model, extra_args=list(spec.extra_args), settings=spec.settings,
                      setup=spec.setup, state=tmp_path / "state" if spec.setup.given() else None,
                      results=results)  # fmt: skip


@dataclass
class Run:
    result: proc.Result
    outcome: Outcome
    log: list[dict[str, Any]]
    pidfile: Path
    files: dict[str, str] = field(default_factory=dict)  # what prepare() wrote into the state folder
    meter: spend.Meter | None = None  # the live cap that watched it (``capped``)


def execute(
    spec: Spec, inv: Invocation, tmp_path: Path, mode: str, timeout_s: float = 30, metered: bool = False
) -> Run:
    """Run the adapter as the cycle does, for real (fakes first on PATH): its setup's files
    written into the state folder, its argv and environment, the files it names read back;
    ``metered``: watched by the live cap, as the cycle does (``PRICES``)."""
    logfile, pidfile = tmp_path / f"{mode}.log.jsonl", tmp_path / f"{mode}.pid"
    prepared = spec.adapter.prepare(inv)
    if inv.state is not None and (prepared or inv.setup.isolated):
        inv.state.mkdir(exist_ok=True)
    for rel, text in prepared.items():
        assert inv.state is not None, "prepare() returned files without a state folder"
        (inv.state / rel).parent.mkdir(parents=True, exist_ok=True)
        (inv.state / rel).write_text(text, encoding="utf-8")
    env = dict(os.environ)
    env.update(PATH=f"{FAKES}{os.pathsep}{env.get('PATH', os.defpath)}", FAKE_AGENT_MODE=mode,
               FAKE_AGENT_LOG=str(logfile), FAKE_AGENT_PIDFILE=str(pidfile), **spec.env)  # fmt: skip
    env = spec.adapter.env(inv, env)
    argv = spec.adapter.command(inv)
    out = tmp_path / f"{mode}.stdout"
    home = spec.adapter.usage_home(inv, env)
    meter = spend.meter(spec.adapter, inv, out, PRICES, home=home) if metered else None
    result = proc.run(argv, cwd=inv.workdir, env=env, stdin=spec.adapter.stdin(inv), timeout_s=timeout_s,
                      stdout_path=out, stderr_path=tmp_path / f"{mode}.stderr", watch=meter)  # fmt: skip
    stdout = result.stdout.path.read_text(encoding="utf-8", errors="replace")
    stderr = result.stderr.path.read_text(encoding="utf-8", errors="replace")
    named = spec.adapter.outputs(inv)
    if named:
        assert inv.results is not None
        files = {
            n: (inv.results / n).read_text(encoding="utf-8") for n in named if (inv.results / n).exists()
        }
        outcome = spec.adapter.read(result, stdout, stderr, files)
    else:
        outcome = spec.adapter.read(result, stdout, stderr)
    lines = logfile.read_text(encoding="utf-8").splitlines() if logfile.exists() else []
    return Run(result, outcome, [json.loads(ln) for ln in lines], pidfile, prepared, meter)


def check(spec: Spec, scenario: str, tmp_path: Path) -> Run:
    """Drive ``spec.adapter`` through one scenario against its fake and check the contract."""
    inv = invocation(tmp_path, spec)
    run = execute(spec, inv, tmp_path, scenario, timeout_s=1 if scenario == "timeout" else 30)
    out = run.outcome
    assert isinstance(out, Outcome)
    assert out.error is None or "\n" not in out.error, out.error
    if scenario == "timeout":
        assert run.result.timed_out and run.result.exit_code is None
        assert not out.ok
        assert_group_dead(run.pidfile)
        return run
    assert len(run.log) == 1, run.log  # the fake ran once, with the adapter's argv
    check_argv(spec, inv, run.log[0])
    if scenario == "success":
        assert run.result.exit_code == 0
        assert out.ok, out.error
        assert out.error is None
        assert "DECISION:" in out.final_message and TASK_ID in out.final_message, out.final_message
        assert (out.input_tokens, out.output_tokens, out.cost_usd) == (
            spec.input_tokens, spec.output_tokens, spec.cost_usd)  # fmt: skip
        assert spec.extra.items() <= out.extra.items(), out.extra
    elif scenario == "error":
        assert run.result.exit_code == spec.error_exit
        assert not out.ok
        assert out.error and f"exited {spec.error_exit}" in out.error, out.error
    elif scenario == "garbage":
        assert not out.ok or "DECISION:" not in out.final_message
    elif scenario == "noreport":
        assert out.ok, out.error
        assert "DECISION:" not in out.final_message
    else:
        raise AssertionError(f"unknown scenario {scenario!r}")
    return run


def check_argv(spec: Spec, inv: Invocation, logged: dict[str, Any]) -> None:
    argv = [spec.adapter.command(inv)[0], *logged["argv"]]
    assert argv == spec.adapter.command(inv)
    assert Path(logged["cwd"]).resolve() == inv.workdir.resolve()
    for arg in argv:  # the prompt never travels as an argument
        assert inv.prompt not in arg and MARKER not in arg and f"id: {TASK_ID}" not in arg, arg
    assert not bypass_in(argv[: len(argv) - len(spec.extra_args)]), argv
    if spec.extra_args:
        assert argv[-len(spec.extra_args) :] == spec.extra_args
    if spec.adapter.prompt_via == "stdin":
        assert logged["stdin"] == inv.prompt
    else:
        assert logged["stdin"] is None
        assert any(str(inv.brief) in arg for arg in argv), argv


def bypass_in(argv: list[str]) -> list[str]:
    """The bypass flags present in ``argv`` (exact tokens, or joined with "=" or a space)."""
    pairs = {f"{a}{sep}{b}" for a, b in itertools.pairwise(argv) for sep in ("=", " ")}
    return [flag for flag in BYPASS if flag in argv or flag in pairs]


def assert_group_dead(pidfile: Path, within_s: float = 2.0) -> None:
    """The fake's grandchild (pid in ``pidfile``) is gone, or a zombie awaiting its reaper."""
    assert pidfile.exists(), "the fake never started its grandchild"
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not alive(pid):
            return
        time.sleep(0.05)
    raise AssertionError(f"grandchild {pid} still alive {within_s}s after the run returned")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in ("Z", "X")


# The provider's refusals (tests/modelserver.py modes; the fakes print what the real CLIs printed
# in each): mode -> the fault's kind.
LIMITED = {"rate_limit": faults.RATE_LIMIT, "overloaded": faults.OVERLOADED, "quota": faults.QUOTA,
           "context": faults.CONTEXT}  # fmt: skip


def killed_at_wall_clock(name: str) -> tuple[proc.Result, Outcome]:
    """A run of ``name`` killed at its 60 s wall clock with no final message, as ``fault`` gets it."""
    stream = proc.Stream
    result = proc.Result([name], None, 60.0, stream(Path("o")), stream(Path("e")), timed_out=True)
    return result, Outcome(ok=False, final_message="")


def refused(spec: Spec, mode: str, tmp_path: Path, wait_s: float | None) -> faults.Fault:
    """Run the fake in a limited mode; the run failed, and ``Adapter.fault`` reads the mode's
    kind, with its reset ``wait_s`` seconds after the run (the CLI said "try again in 20s"),
    or none when ``wait_s`` is None (the CLI passed no time on)."""
    inv = invocation(tmp_path, spec)
    before = time.time()
    run = execute(spec, inv, tmp_path, mode)
    assert not run.outcome.ok, run.outcome
    stdout = run.result.stdout.path.read_text(encoding="utf-8", errors="replace")
    stderr = run.result.stderr.path.read_text(encoding="utf-8", errors="replace")
    found = spec.adapter.fault(run.result, stdout, stderr, run.outcome)
    after = time.time()
    assert found is not None and found.kind == LIMITED[mode], (found, run.outcome.error)
    if wait_s is None:
        assert found.reset_at is None, found
    else:
        assert found.reset_at is not None and before + wait_s <= found.reset_at <= after + wait_s, found
    return found


PRICES = {"test-model": {"input": 3.0, "output": 15.0}}  # USD per million: a spend-mode step is $0.45
CAP = 1.0  # the capped task's max_cost_usd


def capped(spec: Spec, tmp_path: Path) -> Run:
    """Run the fake in spend mode (a model that never stops, each request reported where the
    real CLI reports it) under the live cap: the run is ended once its spend passes ``CAP``,
    the figure named; its steps are the requests the fake logged, each counted once."""
    inv = invocation(tmp_path, spec, task={"id": TASK_ID, "max_cost_usd": CAP})
    run = execute(spec, inv, tmp_path, "spend", metered=True)
    m = run.meter
    assert m is not None, "the adapter reports no usage as it runs"
    assert run.result.ended == m.says() and not run.result.timed_out, (run.result.ended, run.result.exit_code)
    assert m.steps >= 3 and (m.input_tokens, m.output_tokens) == (100_000 * m.steps, 10_000 * m.steps)
    assert m.says() == (
        f"cost-cap: ${0.45 * m.steps:.4f} (estimated) spent over {m.steps} step(s) "
        f"({m.input_tokens} tokens in, {m.output_tokens} out), past max_cost_usd $1"
    )
    return run


def waited(spec: Spec, tmp_path: Path, kind: str, wait_s: float | None) -> faults.Fault:
    """Run the fake in waiting mode (what the real CLI printed while it retried a provider's
    refusal; then it hangs, as the real one did) until a 1 s wall clock kills it: the time-out
    is read as that refusal, of ``kind``, with its reset ``wait_s`` after the run (None: the
    CLI passed on none)."""
    inv = invocation(tmp_path, spec)
    before = time.time()
    run = execute(spec, inv, tmp_path, "waiting", timeout_s=1)
    assert run.result.timed_out and not run.outcome.ok, run.outcome
    stdout = run.result.stdout.path.read_text(encoding="utf-8", errors="replace")
    stderr = run.result.stderr.path.read_text(encoding="utf-8", errors="replace")
    found = spec.adapter.fault(run.result, stdout, stderr, run.outcome)
    assert found is not None and found.kind == kind, (found, run.outcome.error)
    if wait_s is None:
        assert found.reset_at is None, found
    else:  # the reset is read from the recorded words: "try again in 600s", after the recording
        assert found.reset_at is not None and before + wait_s <= found.reset_at <= time.time() + wait_s, found
    return found
