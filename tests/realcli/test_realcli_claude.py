"""Claude Code 2.1.332, for real, through `control-room cycle` against the model server."""

from __future__ import annotations

import re

from modelserver import REPORT, ModelServer, Tool, refused

from control_room import errors
from control_room.adapters import faults


def gateway(real, url: str) -> None:  # type: ignore[no-untyped-def]
    real.gateway("claude", url)


def test_the_brief_reaches_the_model_and_the_report_comes_back(real) -> None:  # type: ignore[no-untyped-def]
    r = real("claude")
    r.task(adapter="claude")
    with ModelServer() as server:
        gateway(r, server.url)
        done = r.run("cycle")
        bodies = server.bodies()
    assert done.returncode == errors.PASSED, done.stdout + done.stderr
    assert "# Brief for task t1" in bodies and "answer with the report the brief asks for" in bodies
    assert '"model": "mock-model"' in bodies or '"model":"mock-model"' in bodies
    meta = r.meta()
    assert (meta["agent_ok"], meta["report"]["ok"], meta["validator"]["exit_code"]) == (True, True, 0)
    assert meta["input_tokens"] > 0 and meta["output_tokens"] > 0 and meta["cost_usd"] > 0
    assert (r.room.swarm / "results" / "t1" / "report.md").read_text().strip() == REPORT.strip()
    assert not any("--dangerously" in a or "bypassPermissions" in a for a in meta["argv"])


def test_a_write_without_a_bypass_is_denied_and_said(real) -> None:  # type: ignore[no-untyped-def]
    r = real("claude")
    r.task(adapter="claude")
    target = r.room.root / "made-by-the-model.txt"
    with ModelServer(tool=Tool("Write", {"file_path": str(target), "content": "hello\n"})) as server:
        gateway(r, server.url)
        done = r.run("cycle")
    assert done.returncode == errors.PASSED, done.stdout + done.stderr  # the report still came back
    assert not target.exists()  # plain -p: the write tool is not allowed without a flag
    assert r.meta()["argv"][:4] == ["claude", "-p", "--output-format", "json"]


def test_a_bypass_is_refused_unless_control_md_allows_it(real) -> None:  # type: ignore[no-untyped-def]
    r = real("claude")
    r.task(adapter="claude", extra_args=["--permission-mode", "acceptEdits"])
    with ModelServer() as server:
        gateway(r, server.url)
        done = r.run("cycle")
    assert done.returncode == errors.OK
    reason = (r.room.state_dir("rejected") / "t1.json.reason").read_text()
    assert "extra_args given but CONTROL.md allow_extra_args is false" in reason


def test_an_allowed_bypass_lets_the_write_happen(real) -> None:  # type: ignore[no-untyped-def]
    r = real("claude")
    r.allow_extra_args()
    r.task(adapter="claude", extra_args=["--permission-mode", "acceptEdits"])
    target = r.room.root / "made-by-the-model.txt"
    with ModelServer(tool=Tool("Write", {"file_path": str(target), "content": "hello\n"})) as server:
        gateway(r, server.url)
        done = r.run("cycle")
    assert done.returncode == errors.PASSED, done.stdout + done.stderr
    assert target.read_text() == "hello\n"


def test_an_endpoint_down_fails_the_round_naming_the_cause(real) -> None:  # type: ignore[no-untyped-def]
    r = real("claude")
    r.task(adapter="claude")
    gateway(r, refused())
    done = r.run("cycle")
    assert done.returncode == errors.FAILED, done.stdout + done.stderr
    error = r.cause()
    assert re.search(r"(?i)connection ?refused|ECONNREFUSED|unable to connect", error), error
    assert "result" in r.last_line() and "fail" in r.last_line()


def test_an_endpoint_erroring_fails_the_round_naming_the_cause(real) -> None:  # type: ignore[no-untyped-def]
    r = real("claude")
    r.task(adapter="claude")
    with ModelServer(mode="error") as server:
        gateway(r, server.url)
        done = r.run("cycle")
    assert done.returncode == errors.FAILED, done.stdout + done.stderr
    error = r.cause()
    assert "500" in error or "mock server error" in error, error


def test_adapters_check_says_hello_through_the_real_cli(real) -> None:  # type: ignore[no-untyped-def]
    r = real("claude")
    with ModelServer() as server:
        gateway(r, server.url)
        done = r.run("adapters", "--check", "claude")
        bodies = server.bodies()
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("claude        OK    answered (mock-model) in ")
    assert "This is a connection check from control-room" in bodies
    assert "| adapter-check | " in r.last_line()


def test_adapters_check_names_an_endpoint_down(real) -> None:  # type: ignore[no-untyped-def]
    r = real("claude")
    gateway(r, refused())
    done = r.run("adapters", "--check", "claude")
    assert done.returncode == errors.ADAPTER_MISSING
    assert re.search(r"FAIL .*(?i:connection ?refused|ECONNREFUSED|unable to connect)", done.stdout), (
        done.stdout
    )


def test_a_cli_that_cannot_be_installed_fails_with_its_name(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import install
    import pytest

    monkeypatch.setenv("CONTROL_ROOM_CLI_CACHE", str(tmp_path / "cache"))
    monkeypatch.setitem(install.PINS, "nosuch",
                        install.Pin("nosuch", "@control-room/no-such-cli-xyz", "0.0.1",
                                    "nosuch", "npm"))  # fmt: skip
    with pytest.raises(install.InstallError) as err:
        install.ensure("nosuch")
    assert str(err.value).startswith("nosuch: `npm install --prefix ...` failed (exit ")
    assert not (tmp_path / "cache" / "nosuch-0.0.1" / ".installed").exists()


def test_the_providers_refusals_are_read_as_their_faults(refusal) -> None:  # type: ignore[no-untyped-def]
    # Claude Code passes on no reset time; with CLAUDE_CODE_MAX_RETRIES=0 each mode is one request
    seen = {}
    for mode, kind, reset_s in [
        ("rate_limit", faults.RATE_LIMIT, None),
        ("overloaded", faults.OVERLOADED, None),
        ("quota", faults.QUOTA, None),
        ("context", faults.CONTEXT, None),
    ]:
        got = refusal("claude", mode, "")
        seen[mode] = (got.reads_as(kind, reset_s), got)
    assert all(ok for ok, _ in seen.values()), seen
    assert seen["context"][1].exit_code == 1, seen
