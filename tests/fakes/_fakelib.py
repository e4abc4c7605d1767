"""Shared by the fake agent CLIs in this folder (stdlib only, no network).

Each fake parses exactly the real CLI's flags that control-room uses (plus a few common ones),
rejects anything else with exit 2 and a CLI-like message, reads the prompt the way the real
CLI does, and prints the real CLI's output shape. Environment:

- FAKE_AGENT_MODE: success (default) | error | timeout | garbage | noreport
- FAKE_AGENT_LOG: append {"argv", "stdin", "cwd"} as one JSON line per run
- FAKE_AGENT_PIDFILE: in timeout mode, where the pid of the grandchild ``sleep 1000`` goes
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


def log(stdin: str | None) -> None:
    path = os.environ.get("FAKE_AGENT_LOG")
    if path:
        line = json.dumps({"argv": sys.argv[1:], "stdin": stdin, "cwd": os.getcwd()})
        with open(path, "a", encoding="utf-8") as f:
            f.write(line + "\n")


def task_id(prompt: str) -> str:
    m = re.search(r"^\s*id:\s*(\S+)", prompt, re.M)
    return m.group(1) if m else "unknown"


def report(cli: str, prompt: str) -> str:
    """A valid SPEC §5 report quoting the task id found in the prompt."""
    tid = task_id(prompt)
    return "\n".join([
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
    ])


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
