"""Shared by the fake agent CLIs in this folder (stdlib only, no network).

Each fake parses exactly the real CLI's flags that control-room uses (plus a few common ones),
rejects anything else with exit 2 and a CLI-like message, reads the prompt the way the real
CLI does, and prints the real CLI's output shape. Environment:

- FAKE_AGENT_MODE: success (default) | error | timeout | garbage | noreport | down (the model
  endpoint is unreachable: each fake then does what its real CLI does, docs/adapters.md) |
  spend (a model that never stops: one request every 0.05 s, each of ``SPEND`` tokens, logged
  where and as the real CLI logs its usage, until the run is ended: the live cap's test) |
  rate_limit | overloaded | quota | context (the provider refused: each fake prints what its
  real CLI printed against tests/modelserver.py in that mode, ``tests/fixtures/limits/<cli>.json``) |
  waiting (what the real CLI printed while it retried a refusal, until its wall clock killed it:
  the fake prints it, then hangs; recorded for aider, copilot and opencode)
- FAKE_AGENT_LOG: append {"argv", "stdin", "cwd", "env"} as one JSON line per run ("env": the
  variables a setup sets, see ``ENV_LOGGED``)
- FAKE_AGENT_PIDFILE: in timeout mode (and wherever a fake hangs), where the pid of the
  grandchild ``sleep 1000`` goes

Where the real CLI reads a config file (codex, gemini, kimi, opencode), the fake reads it from
the same place and fails the way the real one does on what it could not use.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable

MODE = os.environ.get("FAKE_AGENT_MODE", "success")
LIMITS = ("rate_limit", "overloaded", "quota", "context", "waiting")
RECORDED = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "fixtures", "limits")
NO_REPORT = "I looked around the work dir and have nothing to add."
GARBAGE = 'Loading model...\n\x1b[31mwarn\x1b[0m something odd\n{"type": "resu'


class Parser(argparse.ArgumentParser):
    """argparse that rejects unknown arguments the way the real CLI words it, with exit 2."""

    def __init__(self, prog: str, unknown: Callable[[str], str]) -> None:
        super().__init__(prog=prog, add_help=False, allow_abbrev=False)
        self.unknown = unknown

    def error(self, message: str) -> None:  # type: ignore[override]
        m = re.match(r"unrecognized arguments: (\S+)", message)
        sys.stderr.write((self.unknown(m.group(1)) if m else f"{self.prog}: error: {message}") + "\n")
        sys.exit(2)


def read_stdin() -> str:
    return sys.stdin.read()


def read_pointer(argument: str) -> str:
    """What an agent given the pointer sentence reads: the brief file it names."""
    m = re.search(r"instructions are in the file (.+?)\. Read that file", argument)
    if not m:
        return argument
    with open(m.group(1), encoding="utf-8") as f:
        return f.read()


ENV_LOGGED = ("HOME", "ANTHROPIC_", "CLAUDE_", "DISABLE_", "CODEX_", "GEMINI_", "GOOGLE_",
              "COPILOT_", "OPENCODE_", "XDG_", "KIMI_", "OPENAI_", "LITELLM_", "AMP_", "CURSOR_",
              "GATEWAY_")  # fmt: skip


def log(stdin: str | None) -> None:
    path = os.environ.get("FAKE_AGENT_LOG")
    if path:
        env = {k: v for k, v in os.environ.items() if k == "HOME" or k.startswith(ENV_LOGGED)}
        line = json.dumps({"argv": sys.argv[1:], "stdin": stdin, "cwd": os.getcwd(), "env": env})
        with open(path, "a", encoding="utf-8") as f:
            f.write(line + "\n")


def task_id(prompt: str) -> str:
    m = re.search(r"^\s*id:\s*(\S+)", prompt, re.M)
    return m.group(1) if m else "unknown"


def report(cli: str, prompt: str) -> str:
    """A valid SPEC §5 report quoting the task id found in the prompt."""
    tid = task_id(prompt)
    return "\n".join(
        [
            "Done; here is my report.",
            "",
            f"DECISION: fake {cli} finished task {tid}",
            f"WHY: the fake {cli} always succeeds; task {tid} asked for nothing it could not do.",
            "EVIDENCE:",
            f"- CONFIRMED: the prompt named task {tid}",
            "- INFERRED: nothing in the work dir needed to change",
            "- UNKNOWN: whether a real agent would agree",
            "MISSING: nothing",
            "NEXT COMMAND: control-room status",
            "STOP RULE: stop after this round",
        ]
    )


def final_text(cli: str, prompt: str) -> str:
    return NO_REPORT if MODE == "noreport" else report(cli, prompt)


def hang() -> None:
    """timeout mode: start a grandchild in our process group, record its pid, never return."""
    child = subprocess.Popen(["sleep", "1000"])
    path = os.environ.get("FAKE_AGENT_PIDFILE")
    if path:
        with open(path, "w", encoding="utf-8") as f:
            f.write(str(child.pid))
    while True:
        time.sleep(60)


def limited(cli: str) -> None:
    """In a limited mode: print what the real ``cli`` printed in that mode (its stdout and stderr
    as recorded) and exit with its exit code. Any other mode: return."""
    if MODE not in LIMITS:
        return
    with open(os.path.join(RECORDED, f"{cli}.json"), encoding="utf-8") as f:
        recorded = json.load(f)[MODE]
    sys.stdout.write(recorded["stdout"])
    sys.stderr.write(recorded["stderr"])
    sys.stdout.flush()
    sys.stderr.flush()
    if recorded["exit"] is None:  # it never gave up: the wall clock ended it
        hang()
    sys.exit(recorded["exit"])


SPEND = (100_000, 10_000)  # tokens in and out of each model request in spend mode


def append_json(path: str, obj: object) -> None:
    """One JSON line appended to ``path`` (its folders made), at once: as a CLI logs a request."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(obj) + "\n")


def spend(record: Callable[[int], None], most: int | None = None, every: float = 0.05) -> None:
    """spend mode: ``record(k)`` for request k = 1, 2, ... every ``every`` s, for ever (or
    ``most`` requests, then exit 0): a model that keeps spending until the live cap ends the run."""
    k = 0
    while most is None or k < most:
        k += 1
        record(k)
        time.sleep(every)
    sys.exit(0)


def emit(*objects: object) -> None:
    """One JSON object per line on stdout."""
    for obj in objects:
        sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def garbage(code: int = 0) -> None:
    sys.stdout.write(GARBAGE)
    sys.stdout.flush()
    sys.exit(code)


def fail(stderr: str, code: int) -> None:
    sys.stderr.write(stderr + "\n")
    sys.exit(code)


def read_toml(path: str) -> dict:
    """The subset of TOML control-room writes: ``[a.b]`` tables, ``key = value`` with JSON-like
    values, ``#`` comments. (tomllib is Python 3.11+; the fakes run on 3.10 too.)"""
    with open(path, encoding="utf-8") as f:
        return parse_toml(f.read())


def parse_toml(text: str) -> dict:
    top: dict = {}
    table = top
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            table = top
            for part in line.strip("[]").split("."):
                table = table.setdefault(part.strip().strip('"'), {})
            continue
        key, _, value = line.partition("=")
        set_dotted(table, key.strip(), toml_value(value))
    return top


def toml_value(text: str):
    value = text.strip()
    if value.startswith('"'):
        return json.JSONDecoder().raw_decode(value)[0]  # a comment may follow
    return json.loads(value.split("#")[0].strip())


def set_dotted(table: dict, key: str, value) -> None:
    *heads, last = key.split(".")
    for head in heads:
        table = table.setdefault(head, {})
    table[last] = value


def read_json(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return {}
