"""opencode 1.18.33, for real, through `control-room cycle` against the model server, with a
provider of its own in a config file (OPENCODE_CONFIG) and its state in the test's folders."""

from __future__ import annotations

import pytest
from conftest import MODES, reads_as
from modelserver import REPORT, ModelServer, Tool, refused

from control_room import errors
from control_room.adapters import faults


def gateway(real, url: str) -> None:  # type: ignore[no-untyped-def]
    real.gateway("opencode", f"{url}/v1")


def test_the_brief_reaches_the_model_and_a_write_happens_without_a_bypass(real) -> None:  # type: ignore[no-untyped-def]
    r = real("opencode")
    r.task(adapter="opencode")
    target = r.room.root / "made-by-the-model.txt"
    with ModelServer(tool=Tool("write", {"filePath": str(target), "content": "hello\n"})) as server:
        gateway(r, server.url)
        done = r.run("cycle")
        bodies = server.bodies()
    assert done.returncode == errors.PASSED, done.stdout + done.stderr
    assert "# Brief for task t1" in bodies
    assert target.read_text() == "hello\n"  # opencode's run mode writes without --auto
    meta = r.meta()
    assert (meta["agent_ok"], meta["report"]["ok"], meta["validator"]["exit_code"]) == (True, True, 0)
    assert meta["input_tokens"] > 0 and meta["output_tokens"] > 0
    assert meta["cost_usd"] == 0.0  # opencode prices only models whose price its config gives
    assert REPORT.strip() in (r.room.swarm / "results" / "t1" / "report.md").read_text()
    assert "--auto" not in meta["argv"]


def test_auto_is_refused_unless_control_md_allows_it(real) -> None:  # type: ignore[no-untyped-def]
    r = real("opencode")
    r.task(adapter="opencode", extra_args=["--auto"])
    done = r.run("cycle")
    assert done.returncode == errors.OK
    reason = (r.room.state_dir("rejected") / "t1.json.reason").read_text()
    assert "extra_args given but CONTROL.md allow_extra_args is false" in reason


def test_an_endpoint_erroring_fails_the_round_naming_the_cause(real) -> None:  # type: ignore[no-untyped-def]
    r = real("opencode")
    r.task(adapter="opencode", wall_clock_s=180)
    with ModelServer(mode="auth") as server:
        gateway(r, server.url)
        done = r.run("cycle")
    assert done.returncode == errors.PROVIDER, done.stdout + done.stderr  # the key's: no round used
    kind, said = r.refused()
    assert kind == faults.AUTH and "invalid api key" in said, said


def test_an_endpoint_down_fails_the_round_naming_the_cause(real) -> None:  # type: ignore[no-untyped-def]
    r = real("opencode")
    r.task(adapter="opencode", wall_clock_s=180)
    gateway(r, refused())
    done = r.run("cycle")
    assert done.returncode == errors.FAILED, done.stdout + done.stderr
    meta = r.meta()
    assert meta["timed_out"] is False, meta  # it gives up after its own retries
    assert "Cannot connect to API: Unable to connect" in r.cause(), meta


@pytest.mark.parametrize(("mode", "kind", "reset_s"), MODES)
def test_the_providers_refusals_are_read_as_their_faults(
    refusal, mode: str, kind: str, reset_s: int | None
) -> None:  # type: ignore[no-untyped-def]
    # opencode retries a 429 (retry-after honoured), its 503 and quota for 80-90 s: killed at
    # its 20 s wall clock while it waits, its time-out is read as the refusal it logged (`waiting`)
    reads_as(refusal("opencode", mode, "/v1", wall_clock_s=20), mode, kind, reset_s, context_exit=1)


def test_a_long_retry_after_waited_out_past_the_wall_clock_uses_no_round(refusal) -> None:  # type: ignore[no-untyped-def]
    # "try again in 600s": opencode waits (or backs off) far past the task's wall clock; killed while it
    # waits, the time-out is the provider's (no round), and the adapter cools down for the 600 s
    got = refusal("opencode", "rate_limit", "/v1", wall_clock_s=20, retry_after=600)
    assert got.reads_as(faults.RATE_LIMIT, 600), got
