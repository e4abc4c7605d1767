"""``aider``: aider with ``--message-file`` (the brief in the work dir: one message, then it
exits) and the flags that keep it from asking anything or reaching the network on its own.
Output is text; each model reply is followed by
``Tokens: 4.2k sent, 512 received. Cost: $0.0042 message, $0.0042 session.`` (counts of 1000
and more are rounded by aider: "4.2k").

Trap: aider exits 0 even when the API is down (after ~80 s of retries), so the outcome is
judged by the output: no ``Tokens:`` line means the model never answered. ``--yes-always``
is not a bypass: aider still answers no to running the shell commands the model suggests.
It commits by default; ``--no-auto-commits`` leaves changes in the work tree like every other
adapter, for the validator and the dispatcher to see. Without a git repo in the work dir,
``--yes-always`` lets it create one.
"""

from __future__ import annotations

import math
import re

from control_room.adapters.base import Adapter, Invocation, Outcome
from control_room.proc import Result

_COUNT = r"([\d.,]+k?)"
_SENT = re.compile(_COUNT + r" sent\b")
_RECEIVED = re.compile(_COUNT + r" received\b")
_SESSION_COST = re.compile(r"\$([\d.,]+) session\b")
_ERRORISH = re.compile(r"error|exception|traceback|retrying|refused|unauthori[sz]ed|api key", re.IGNORECASE)


class Aider(Adapter):
    name = "aider"
    binary = "aider"
    prompt_via = "file"
    bypass_flags = ()  # no tool-permission layer: it edits files, never runs suggested commands headless
    context_window = 128_000
    install = "pipx install aider-chat"
    exit_codes = {0: "ok (also when the API is down: the output decides)", 1: "error", 2: "bad command line"}

    def command(self, inv: Invocation) -> list[str]:
        return [
            "aider",
            "--message-file",
            str(inv.brief),
            "--yes-always",
            "--no-auto-commits",
            "--no-check-update",
            "--analytics-disable",
            "--no-show-model-warnings",
            "--no-show-release-notes",
            "--no-gitignore",
            "--no-pretty",
            "--no-fancy-input",
            *self.with_model("--model", inv),
            *inv.extra_args,
        ]

    def read(self, result: Result, stdout: str, stderr: str) -> Outcome:
        sent = received = None
        cost = None
        seen = False
        for line in stdout.splitlines():
            if not line.lstrip().startswith("Tokens:"):
                continue
            seen = True
            m = _SENT.search(line)
            sent = _add(sent, _count(m.group(1)) if m else None)
            m = _RECEIVED.search(line)
            received = _add(received, _count(m.group(1)) if m else None)
            m = _SESSION_COST.search(line)
            if m:
                cost = _number(m.group(1))
        if result.exit_code != 0:
            return Outcome(
                ok=False,
                final_message=stdout,
                error=self.explain(result, stderr or stdout),
                input_tokens=sent,
                output_tokens=received,
                cost_usd=cost,
            )
        if not seen:
            found = [ln.strip() for ln in (stdout + "\n" + stderr).splitlines() if _ERRORISH.search(ln)]
            why = found[-1][:200] if found else "the model never answered"
            return Outcome(
                ok=False, final_message=stdout, error=f"aider exited 0 without a Tokens: line: {why}"
            )
        return Outcome(
            ok=True, final_message=stdout, input_tokens=sent, output_tokens=received, cost_usd=cost
        )


def _number(text: str) -> float | None:
    try:
        value = float(text.replace(",", ""))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _count(text: str) -> int | None:
    """aider's token counts: "512", "4.2k", "12k" (rounded by aider: the best we have)."""
    scale = 1000 if text.endswith("k") else 1
    value = _number(text.rstrip("k"))
    return None if value is None or not math.isfinite(value * scale) else round(value * scale)


def _add(a: int | None, b: int | None) -> int | None:
    if b is None:
        return a
    return b if a is None else a + b
