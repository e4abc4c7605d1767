"""Codex 0.171.0, for real, through `control-room cycle` against the model server (the
Responses API). Its provider is set in its own CODEX_HOME inside the test's state folder."""

from __future__ import annotations

from modelserver import REPORT, ModelServer, Tool, refused

from control_room import errors
from control_room.adapters import faults


def gateway(real, url: str) -> None:  # type: ignore[no-untyped-def]
    real.gateway("codex", f"{url}/v1")


def write_call(target) -> Tool:  # type: ignore[no-untyped-def]
    return Tool("exec_command", {"cmd": f"echo hello > {target}"})


def test_the_brief_reaches_the_model_and_the_report_comes_back(real) -> None:  # type: ignore[no-untyped-def]
    r = real("codex")
    r.task(adapter="codex")
    with ModelServer() as server:
        gateway(r, server.url)
        done = r.run("cycle")
        bodies = server.bodies()
        paths = [q.path for q in server.requests]
    assert done.returncode == errors.PASSED, done.stdout + done.stderr
    assert "/v1/responses" in paths
    assert "# Brief for task t1" in bodies and '"mock-model"' in bodies
    meta = r.meta()
    assert (meta["agent_ok"], meta["report"]["ok"], meta["validator"]["exit_code"]) == (True, True, 0)
    assert (
        meta["input_tokens"] > 0 and meta["output_tokens"] > 0 and meta["cost_usd"] is None
    )  # no cost given
    assert (r.room.swarm / "results" / "t1" / "report.md").read_text().strip() == REPORT.strip()


def test_the_default_read_only_sandbox_stops_a_write(real) -> None:  # type: ignore[no-untyped-def]
    r = real("codex")
    r.task(adapter="codex")
    target = r.room.root / "made-by-the-model.txt"
    with ModelServer(tool=write_call(target)) as server:
        gateway(r, server.url)
        done = r.run("cycle")
    assert done.returncode == errors.PASSED, done.stdout + done.stderr
    assert not target.exists()


def test_a_wider_sandbox_is_refused_unless_control_md_allows_it(real) -> None:  # type: ignore[no-untyped-def]
    r = real("codex")
    r.task(adapter="codex", extra_args=["-s", "workspace-write"])
    done = r.run("cycle")
    assert done.returncode == errors.OK
    reason = (r.room.state_dir("rejected") / "t1.json.reason").read_text()
    assert "extra_args given but CONTROL.md allow_extra_args is false" in reason


def test_an_allowed_workspace_write_sandbox_lets_the_write_happen(real) -> None:  # type: ignore[no-untyped-def]
    r = real("codex")
    r.allow_extra_args()
    r.task(adapter="codex", extra_args=["-s", "workspace-write"])
    target = r.room.root / "made-by-the-model.txt"
    with ModelServer(tool=write_call(target)) as server:
        gateway(r, server.url)
        done = r.run("cycle")
    assert done.returncode == errors.PASSED, done.stdout + done.stderr
    assert target.read_text() == "hello\n"


def test_an_endpoint_down_fails_the_round_at_its_wall_clock(real) -> None:  # type: ignore[no-untyped-def]
    r = real("codex")
    r.task(adapter="codex", wall_clock_s=15)
    gateway(r, refused())
    done = r.run("cycle")
    assert done.returncode == errors.FAILED, done.stdout + done.stderr
    meta = r.meta()
    assert meta["timed_out"] is True
    assert "killed at its 15s time limit while reconnecting to the model endpoint" in r.cause(), meta


def test_an_endpoint_erroring_fails_the_round_at_once_naming_the_cause(real) -> None:  # type: ignore[no-untyped-def]
    r = real("codex")
    r.task(adapter="codex", wall_clock_s=60)
    with ModelServer(mode="error") as server:
        gateway(r, server.url)
        done = r.run("cycle")
    assert done.returncode == errors.FAILED, done.stdout + done.stderr
    # with its provider's retries at 0 (else it reconnects until the wall clock), its words for a 500
    assert r.cause() == (
        "codex exited 1 (error (bad config, failed turn)): "
        "We’re currently experiencing high demand, which may cause temporary errors."
    )
    assert r.meta()["timed_out"] is False


def test_the_providers_refusals_are_read_as_their_faults(refusal) -> None:  # type: ignore[no-untyped-def]
    # codex passes on no reset time; with its provider's retries at 0 a 429 fails at once (else ~100 s)
    seen = {}
    for mode, kind, reset_s in [
        ("rate_limit", faults.RATE_LIMIT, None),
        ("overloaded", faults.OVERLOADED, None),
        ("quota", faults.QUOTA, None),
        ("context", faults.CONTEXT, None),
    ]:
        got = refusal("codex", mode, "/v1")
        seen[mode] = (got.reads_as(kind, reset_s), got)
    assert all(ok for ok, _ in seen.values()), seen
    assert seen["context"][1].exit_code == 1, seen
