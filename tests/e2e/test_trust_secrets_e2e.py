"""Secrets (docs/security.md): an agent and its validator see only the variables their adapter
needs (and CONTROL.md ``env_allow``), and no secret of the dispatcher's environment is ever
stored in the room, shown by a command, or pushed by ``sync``, however an agent came to print
it. A gateway gets only ``api_key_env``'s key, never the user's own. Canaries planted in the
dispatcher's environment, through the installed command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from machines import shared_room
from support import FAKES, git, probe_task, queue, set_gate

from control_room import errors
from control_room.room.layout import Room

VENDOR = "canary-vendor-4f1c9e2ab7d35e10"  # the user's own vendor key
TOKEN = "canary-token-8d2e6b1f0c4a9375"  # some service's token
PLAIN = "canary-plain-value"  # not secret by its name, nor allowed: never seen, may be shown
GATEWAY = "canary-gateway-71b3c0d9e5a2f648"  # the key CONTROL.md's api_key_env names
CANARIES = {"ANTHROPIC_API_KEY": VENDOR, "MY_SERVICE_TOKEN": TOKEN, "SOME_PLAIN_SETTING": PLAIN}

# What the agent (the probe runs it) and the validator do: write down the environment they got
# (outside the room), and print the secrets they found (in a file outside the room, as an agent
# that read a person's dotfiles would) on both streams; the validator then fails the round.
RUN = """import json, os, sys
out, leak, code = sys.argv[1], sys.argv[2], int(sys.argv[3])
json.dump(dict(os.environ), open(out, "w"))
found = open(leak).read().split()
if len(sys.argv) > 4:  # a file of its own in its work dir (the room, without a repo)
    open(sys.argv[4], "w").write("notes: " + " ".join(found) + "\\n")
print("found: " + " ".join(found))
print("in my env: " + os.environ.get("MY_SERVICE_TOKEN", "-"))
print("also: " + " / ".join(found), file=sys.stderr)
sys.exit(code)
"""


def _plant(tmp_path: Path, *values: str) -> tuple[Path, Path]:
    script, leak = tmp_path / "run.py", tmp_path / "leak.txt"
    script.write_text(RUN)
    leak.write_text(" ".join(values))
    return script, leak


def _task(tmp_path: Path, tid: str, *values: str, **fields: Any) -> dict[str, Any]:
    script, leak = _plant(tmp_path, *values)
    py = sys.executable
    return probe_task(
        tid,
        command=[py, str(script), str(tmp_path / f"{tid}-agent.json"), str(leak), "0"],
        validator=[py, str(script), str(tmp_path / f"{tid}-validator.json"), str(leak), "1"],
        **fields,
    )


def _seen(tmp_path: Path, name: str) -> dict[str, str]:
    seen: dict[str, str] = json.loads((tmp_path / f"{name}.json").read_text())
    return seen


def _files(top: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in top.rglob("*") if p.is_file() and not p.is_symlink()}


def _nowhere(top: Path, *values: str) -> None:
    for path, data in _files(top).items():
        for value in values:
            assert value.encode() not in data, (path, value)


def _holding(top: Path, text: str) -> set[str]:
    return {p.relative_to(top).as_posix() for p, data in _files(top).items() if text.encode() in data}


def test_an_agent_and_its_validator_see_no_secret_and_the_room_stores_none(
    cr: Any, room: Room, tmp_path: Path
) -> None:
    env = {**CANARIES, "CR_TEST_SEEN": "x"}
    room_task = _task(tmp_path, "t1", VENDOR, TOKEN)
    (room.state_dir("queue") / "t1.json").write_text(json.dumps(room_task))
    for _ in range(2):  # two failed rounds: the second brief carries the first's failure
        done = cr("cycle", extra_env=env)
        assert done.returncode == errors.FAILED, done.stdout + done.stderr
        assert VENDOR not in done.stdout + done.stderr and TOKEN not in done.stdout + done.stderr
    for who in ("t1-agent", "t1-validator"):
        seen = _seen(tmp_path, who)
        assert not set(CANARIES) & set(seen), who  # neither the secrets nor what is not allowed
        assert "CR_TEST_SEEN" not in seen
        assert seen["PATH"] == os.environ["PATH"] and seen["CONTROL_ROOM_TASK"] == "t1"
        assert set(seen) <= {"PATH", "HOME", "LANG", "LANGUAGE", "CONTROL_ROOM", "PWD", "SHLVL", "_"} | {
            k for k in seen if k.startswith(("LC_", "CONTROL_ROOM_"))
        }, who
    shown = [cr(*a, extra_env=env) for a in (["status"], ["ledger", "tail"], ["task", "show", "t1"])]
    for out in shown:
        assert VENDOR not in out.stdout and TOKEN not in out.stdout, out.args
    assert "[redacted:MY_SERVICE_TOKEN]" in cr("ledger", "tail", extra_env=env).stdout
    site = tmp_path / "site"
    assert cr("dashboard", "--out", str(site), extra_env=env).returncode == 0
    _nowhere(room.root, VENDOR, TOKEN)
    _nowhere(site, VENDOR, TOKEN)
    marked = _holding(room.root, "[redacted:MY_SERVICE_TOKEN]")
    results = "swarm/results/t1"
    assert (
        "found: [redacted:ANTHROPIC_API_KEY] [redacted:MY_SERVICE_TOKEN]"
        in (room.root / results / "stdout.txt").read_text()
    )
    assert {
        f"{results}/stdout.txt",  # the agent's raw capture
        f"{results}/report.md",  # the probe's report quotes it
        f"{results}/answer.md",
        f"{results}/validator.stdout.txt",
        f"{results}/run-1/stdout.txt",  # the first round's, archived
        "control-room/LEDGER.md",  # the failed round's line quotes the validator
    } <= marked, marked
    assert "[redacted:" in (room.root / results / "prompt.md").read_text()  # the next brief
    assert "[redacted:" in room.digest.read_text() or "[redacted:" in room.context.read_text()
    assert _holding(site, "[redacted:MY_SERVICE_TOKEN]")


def test_env_allow_lets_an_agent_see_a_secret_whose_value_the_room_never_stores(
    cr: Any, room: Room, tmp_path: Path
) -> None:
    set_gate(room, "env_allow", "[MY_SERVICE_TOKEN, CR_TEST_SEEN, PATH]")
    env = {**CANARIES, "CR_TEST_SEEN": "x"}
    (room.state_dir("queue") / "t1.json").write_text(json.dumps(_task(tmp_path, "t1")))
    done = cr("cycle", extra_env=env)
    assert done.returncode == errors.FAILED, done.stdout + done.stderr
    for who in ("t1-agent", "t1-validator"):
        seen = _seen(tmp_path, who)
        assert seen["MY_SERVICE_TOKEN"] == TOKEN and seen["CR_TEST_SEEN"] == "x"  # allowed: seen
        assert "ANTHROPIC_API_KEY" not in seen and "SOME_PLAIN_SETTING" not in seen
    _nowhere(room.root, TOKEN)
    results = "swarm/results/t1"
    marked = _holding(room.root, "in my env: [redacted:MY_SERVICE_TOKEN]")
    assert {f"{results}/stdout.txt", f"{results}/report.md", f"{results}/validator.stdout.txt"} <= marked


def test_the_variable_an_api_key_env_names_is_secret_whatever_its_name(
    cr: Any, room: Room, tmp_path: Path
) -> None:
    set_gate(room, "adapters", '{claude: {base_url: "http://127.0.0.1:9", api_key_env: GW}}')
    (room.state_dir("queue") / "t1.json").write_text(json.dumps(_task(tmp_path, "t1", GATEWAY)))
    done = cr("cycle", extra_env={"GW": GATEWAY})
    assert done.returncode == errors.FAILED, done.stdout + done.stderr
    assert "GW" not in _seen(tmp_path, "t1-agent")  # the probe's run is not claude's
    _nowhere(room.root, GATEWAY)
    assert "found: [redacted:GW]" in (room.swarm / "results" / "t1" / "stdout.txt").read_text()


def test_sync_pushes_no_secret_to_the_shared_rooms_remote(exe: str, tmp_path: Path) -> None:
    py = sys.executable
    script, leak = _plant(tmp_path, VENDOR, TOKEN)
    agent = [py, str(script), str(tmp_path / "agent.json"), str(leak), "0", "notes.md"]
    tasks = [probe_task("t1", command=agent, validator=[py, "-c", "pass"])]
    remote, (m1,) = shared_room(tmp_path, exe, ["m1"], tasks)
    env = {**m1.env(), **CANARIES}
    done = subprocess.run([exe, "cycle"], cwd=m1.path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == errors.PASSED, done.stdout + done.stderr
    assert subprocess.run([exe, "sync"], cwd=m1.path, env=env, capture_output=True).returncode == 0
    pushed = git(remote, "log", "--all", "-p", "--binary", "--format=%H %s%n%b")
    assert "[redacted:MY_SERVICE_TOKEN]" in pushed  # the run's output was pushed, redacted
    assert "+notes: [redacted:ANTHROPIC_API_KEY] [redacted:MY_SERVICE_TOKEN]" in pushed  # the agent's file
    assert VENDOR not in pushed and TOKEN not in pushed
    _nowhere(m1.path, VENDOR, TOKEN)  # the clone's working files


# 3. a gateway gets only api_key_env's key --------------------------------------------------------

URL = "http://127.0.0.1:9/v1"
USERS = {  # the user's own keys for each CLI
    "claude": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
}


def _gateway(cr: Any, room: Room, tmp_path: Path, adapter: str, setup: str) -> dict[str, str]:
    set_gate(room, "adapters", f'{{{adapter}: {{base_url: "{URL}"{setup}}}}}')
    # The fake's log, and the user's own keys allowed by name: a gateway still never gets them
    set_gate(room, "env_allow", f"[FAKE_AGENT_LOG, PATH, HOME, {', '.join(USERS[adapter])}]")
    queue(room, "t-gw", adapter=adapter, command=None)
    env = {
        "PATH": f"{FAKES}{os.pathsep}{os.environ['PATH']}",
        "FAKE_AGENT_LOG": str(tmp_path / "calls.jsonl"),
        "GATEWAY_KEY": GATEWAY,
        **{name: f"{VENDOR}-{k}" for k, name in enumerate(USERS[adapter])},
    }
    cr("cycle", extra_env=env)
    (call,) = [json.loads(ln) for ln in (tmp_path / "calls.jsonl").read_text().splitlines()]
    got: dict[str, str] = call["env"]
    assert not [k for k, v in got.items() if VENDOR in v], got  # none of the user's own keys
    _nowhere(room.root, VENDOR, GATEWAY)
    return got


def test_claude_at_a_gateway_gets_its_key_and_never_the_users(cr: Any, room: Room, tmp_path: Path) -> None:
    got = _gateway(cr, room, tmp_path, "claude", ", api_key_env: GATEWAY_KEY")
    assert got["ANTHROPIC_BASE_URL"] == URL and got["ANTHROPIC_API_KEY"] == GATEWAY
    assert "ANTHROPIC_AUTH_TOKEN" not in got and "CLAUDE_CODE_OAUTH_TOKEN" not in got


def test_claude_at_a_gateway_without_a_key_gets_the_placeholder(cr: Any, room: Room, tmp_path: Path) -> None:
    got = _gateway(cr, room, tmp_path, "claude", "")
    assert got["ANTHROPIC_API_KEY"] == "none"  # not isolated: still never the user's own


def test_gemini_at_a_gateway_gets_its_key_and_never_the_users(cr: Any, room: Room, tmp_path: Path) -> None:
    got = _gateway(cr, room, tmp_path, "gemini", ", api_key_env: GATEWAY_KEY, isolated: true")
    assert got["GOOGLE_GEMINI_BASE_URL"] == URL and got["GEMINI_API_KEY"] == GATEWAY
    assert "GOOGLE_API_KEY" not in got


def test_gemini_at_a_gateway_without_a_key_gets_the_placeholder(cr: Any, room: Room, tmp_path: Path) -> None:
    got = _gateway(cr, room, tmp_path, "gemini", "")
    assert got["GEMINI_API_KEY"] == "none" and "GOOGLE_API_KEY" not in got
