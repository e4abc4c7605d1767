"""kimi-cli 1.51.0 (Python 3.12, a venv of its own), for real, through `control-room cycle`
against the model server, its config in the test's HOME."""

from __future__ import annotations

import pytest
from conftest import MODES, reads_as
from modelserver import REPORT, ModelServer, Tool, refused

from control_room import errors
from control_room.adapters import faults


def gateway(real, url: str) -> None:  # type: ignore[no-untyped-def]
    real.gateway("kimi", f"{url}/v1")


def test_the_brief_reaches_the_model_and_the_report_comes_back(real) -> None:  # type: ignore[no-untyped-def]
    r = real("kimi")
    r.task(adapter="kimi")
    with ModelServer() as server:
        gateway(r, server.url)
        done = r.run("cycle")
        bodies = server.bodies()
    assert done.returncode == errors.PASSED, done.stdout + done.stderr
    assert "# Brief for task t1" in bodies
    meta = r.meta()
    assert (meta["agent_ok"], meta["report"]["ok"], meta["validator"]["exit_code"]) == (True, True, 0)
    assert REPORT.strip() in (r.room.swarm / "results" / "t1" / "report.md").read_text()


def test_print_mode_writes_without_a_bypass(real) -> None:  # type: ignore[no-untyped-def]
    r = real("kimi")
    r.task(adapter="kimi")
    target = r.room.root / "made-by-the-model.txt"
    with ModelServer(tool=Tool("WriteFile", {"path": str(target), "content": "hello\n"})) as server:
        gateway(r, server.url)
        done = r.run("cycle")
    assert done.returncode == errors.PASSED, done.stdout + done.stderr
    assert target.read_text() == "hello\n"  # kimi's print mode approves its tools itself
    assert not {"--yolo", "--afk"} & set(r.meta()["argv"])


def test_an_endpoint_down_fails_the_round_naming_the_cause(real) -> None:  # type: ignore[no-untyped-def]
    r = real("kimi")
    r.task(adapter="kimi", wall_clock_s=120)
    gateway(r, refused())
    done = r.run("cycle")
    assert done.returncode == errors.FAILED, done.stdout + done.stderr
    meta = r.meta()
    assert meta["timed_out"] is False, meta
    assert "To resume this session" not in r.cause(), r.cause()
    assert "Connection error" in r.cause(), r.cause()


def test_an_endpoint_refusing_the_key_fails_the_round_naming_the_cause(real) -> None:  # type: ignore[no-untyped-def]
    r = real("kimi")
    r.task(adapter="kimi", wall_clock_s=180)
    with ModelServer(mode="auth") as server:
        gateway(r, f"{server.url}")
        done = r.run("cycle")
    assert done.returncode == errors.PROVIDER, done.stdout + done.stderr  # the key's: no round used
    kind, said = r.refused()
    assert kind == faults.AUTH, said
    assert said.endswith(
        "kimi exited 1 (error): Error code: 401 - "
        "{'type': 'error', 'error': {'type': 'authentication_error', "
        "'message': 'invalid api key', 'code': 401}}"
    ), said  # one line, not the 80-column fragment its console would print


@pytest.mark.parametrize(("mode", "kind", "reset_s"), MODES)
def test_the_providers_refusals_are_read_as_their_faults(
    refusal, mode: str, kind: str, reset_s: int | None
) -> None:  # type: ignore[no-untyped-def]
    # kimi, one attempt per step (max_retries_per_step = 1), its client's two retries: a few
    # requests, then exit 75 with `Error code: N`
    reads_as(refusal("kimi", mode, "/v1", wall_clock_s=60), mode, kind, reset_s, context_exit=1)
