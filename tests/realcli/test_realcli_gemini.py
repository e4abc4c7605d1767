"""Gemini CLI 0.61.0, for real, through `control-room cycle` against the model server. Its
settings (API-key auth, one attempt, no updates or telemetry) are in the test's HOME."""

from __future__ import annotations

from modelserver import REPORT, ModelServer, Tool, refused

from control_room import errors
from control_room.adapters import faults


def gateway(real, url: str) -> None:  # type: ignore[no-untyped-def]
    real.gateway("gemini", url)


def test_the_brief_reaches_the_model_and_the_report_comes_back(real) -> None:  # type: ignore[no-untyped-def]
    r = real("gemini")
    r.task(adapter="gemini")
    with ModelServer() as server:
        gateway(r, server.url)
        done = r.run("cycle")
        bodies = server.bodies()
        paths = [q.path for q in server.requests]
    assert done.returncode == errors.PASSED, done.stdout + done.stderr
    assert any("/models/mock-model:" in p for p in paths), paths
    assert "# Brief for task t1" in bodies
    meta = r.meta()
    assert (meta["agent_ok"], meta["report"]["ok"], meta["validator"]["exit_code"]) == (True, True, 0)
    assert meta["input_tokens"] > 0 and meta["output_tokens"] > 0
    assert (r.room.swarm / "results" / "t1" / "report.md").read_text().strip() == REPORT.strip()


def test_yolo_is_refused_unless_control_md_allows_it(real) -> None:  # type: ignore[no-untyped-def]
    r = real("gemini")
    r.task(adapter="gemini", extra_args=["--yolo"])
    done = r.run("cycle")
    assert done.returncode == errors.OK
    reason = (r.room.state_dir("rejected") / "t1.json.reason").read_text()
    assert "extra_args given but CONTROL.md allow_extra_args is false" in reason


def test_an_allowed_yolo_lets_the_write_happen(real) -> None:  # type: ignore[no-untyped-def]
    r = real("gemini")
    r.allow_extra_args()
    r.task(adapter="gemini", extra_args=["--yolo"])
    target = r.room.root / "made-by-the-model.txt"
    with ModelServer(tool=Tool("write_file", {"file_path": str(target), "content": "hello\n"})) as server:
        gateway(r, server.url)
        done = r.run("cycle")
    assert done.returncode == errors.PASSED, done.stdout + done.stderr
    assert target.read_text() == "hello\n"


def test_an_endpoint_down_fails_the_round_naming_the_cause(real) -> None:  # type: ignore[no-untyped-def]
    r = real("gemini")
    r.task(adapter="gemini", wall_clock_s=120)
    gateway(r, refused())
    done = r.run("cycle")
    assert done.returncode == errors.FAILED, done.stdout + done.stderr
    meta = r.meta()
    assert meta["timed_out"] is False  # one attempt: it ends on its own
    assert "fetch failed" in r.cause(), r.cause()


def test_an_endpoint_erroring_fails_the_round_naming_the_cause(real) -> None:  # type: ignore[no-untyped-def]
    r = real("gemini")
    r.task(adapter="gemini", wall_clock_s=120)
    with ModelServer(mode="error") as server:
        gateway(r, server.url)
        done = r.run("cycle")
    assert done.returncode == errors.FAILED, done.stdout + done.stderr
    meta = r.meta()
    assert meta["timed_out"] is False
    assert "500" in r.cause() or "mock server error" in r.cause(), r.cause()


def test_adapters_check_says_which_setting_a_shared_home_lacks(real) -> None:  # type: ignore[no-untyped-def]
    """Not isolated, gemini reads the user's own settings.json; without the key auth selected
    there, a base URL makes it pick an auth type it then refuses (exit 41)."""
    r = real("gemini")
    with ModelServer() as server:
        r.gateway("gemini", server.url, isolated=False)
        done = r.run("adapters", "--check", "gemini")
    assert done.returncode == errors.ADAPTER_MISSING
    assert done.stdout == (
        "gemini        FAIL  gemini exited 41 (authentication): Invalid auth method selected.; set "
        'security.auth.selectedType: "gemini-api-key" in its settings.json (~/.gemini/), '
        "or isolated: true in CONTROL.md adapters.gemini, which writes it\n"
    )


def test_the_providers_refusals_are_read_as_their_faults(refusal) -> None:  # type: ignore[no-untyped-def]
    # gemini exits with the HTTP status modulo 256 (173, 247, 144) and quotes the retry delay
    seen = {}
    for mode, kind, reset_s in [
        ("rate_limit", faults.RATE_LIMIT, 1),
        ("overloaded", faults.OVERLOADED, None),
        ("quota", faults.QUOTA, None),
        ("context", faults.CONTEXT, None),
    ]:
        got = refusal("gemini", mode, "")
        seen[mode] = (got.reads_as(kind, reset_s), got)
    assert all(ok for ok, _ in seen.values()), seen
    assert seen["context"][1].exit_code == 144, seen
