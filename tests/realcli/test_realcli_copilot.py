"""Copilot CLI 1.0.102, for real, through `control-room cycle` against the model server, with a
key of its own (no GitHub login). Its prompt is a pointer to the brief: the model reads the
brief with copilot's `view` tool, which needs no permission flag."""

from __future__ import annotations

import pytest
from conftest import MODES, reads_as
from modelserver import REPORT, ModelServer, Tool, refused

from control_room import errors
from control_room.adapters import faults


def gateway(real, url: str) -> None:  # type: ignore[no-untyped-def]
    real.gateway("copilot", f"{url}/v1")


def read_brief(real) -> Tool:  # type: ignore[no-untyped-def]
    return Tool("view", {"path": str(real.room.root / ".brief-t1.md")})


def test_the_model_reads_the_brief_and_the_report_comes_back(real) -> None:  # type: ignore[no-untyped-def]
    r = real("copilot")
    r.task(adapter="copilot")
    with ModelServer(tool=read_brief(r)) as server:
        gateway(r, server.url)
        done = r.run("cycle")
        bodies = server.bodies()
    assert done.returncode == errors.PASSED, done.stdout + done.stderr
    assert "# Brief for task t1" in bodies  # through the view tool: the prompt itself is a pointer
    meta = r.meta()
    assert (meta["agent_ok"], meta["report"]["ok"], meta["validator"]["exit_code"]) == (True, True, 0)
    assert meta["input_tokens"] > 0 and meta["output_tokens"] > 0  # from its --usage-output-file
    assert (r.room.swarm / "results" / "t1" / "copilot-usage.json").exists()
    assert (r.room.swarm / "results" / "t1" / "report.md").read_text().strip() == REPORT.strip()
    assert not any(a.startswith("--allow-all") or a == "--yolo" for a in meta["argv"])


def test_allow_all_tools_is_refused_unless_control_md_allows_it(real) -> None:  # type: ignore[no-untyped-def]
    r = real("copilot")
    r.task(adapter="copilot", extra_args=["--allow-all-tools"])
    done = r.run("cycle")
    assert done.returncode == errors.OK
    reason = (r.room.state_dir("rejected") / "t1.json.reason").read_text()
    assert "extra_args given but CONTROL.md allow_extra_args is false" in reason


def test_an_endpoint_down_fails_the_round_naming_the_cause(real) -> None:  # type: ignore[no-untyped-def]
    r = real("copilot")
    r.task(adapter="copilot", wall_clock_s=180)
    gateway(r, refused())
    done = r.run("cycle")
    assert done.returncode == errors.FAILED, done.stdout + done.stderr
    meta = r.meta()
    assert meta["timed_out"] is False  # it gives up after its own retries
    assert "Could not connect to local model provider at http://127.0.0.1:" in r.cause(), meta


def test_adapters_check_says_which_setting_is_missing(real) -> None:  # type: ignore[no-untyped-def]
    r = real("copilot")
    with ModelServer() as server:
        r.gateway("copilot", f"{server.url}/v1", model=None)  # a gateway, but no model named
        done = r.run("adapters", "--check", "copilot")
    assert done.returncode == errors.ADAPTER_MISSING
    assert "BYOK providers require an explicit model" in done.stdout and "adapters.copilot" in done.stdout, (
        done.stdout
    )


def test_an_endpoint_refusing_the_key_fails_the_round_naming_the_cause(real) -> None:  # type: ignore[no-untyped-def]
    r = real("copilot")
    r.task(adapter="copilot", wall_clock_s=180)
    with ModelServer(mode="auth") as server:
        gateway(r, f"{server.url}")
        done = r.run("cycle")
    assert done.returncode == errors.PROVIDER, done.stdout + done.stderr  # the key's: no round used
    kind, said = r.refused()
    assert kind == faults.AUTH, said
    assert "Authentication failed with provider at http://127.0.0.1:" in said and "(HTTP 401)" in said, said


@pytest.mark.parametrize(("mode", "kind", "reset_s"), MODES)
def test_the_providers_refusals_are_read_as_their_faults(
    refusal, mode: str, kind: str, reset_s: int | None
) -> None:  # type: ignore[no-untyped-def]
    # copilot retries five times (a 429 after its retry-after, 1 s here; its 503 and quota with a
    # back-off of 20-60 s): killed at 20 s while it waits, its time-out is read as its last failed call
    reads_as(refusal("copilot", mode, "/v1", wall_clock_s=20), mode, kind, reset_s, context_exit=1)
