"""``aider``: aider with ``--message-file`` (the brief in the work dir: one message, then it
exits) and the flags that keep it from asking anything or reaching the network on its own.
Output is text; each model reply is followed by
``Tokens: 4.2k sent, 512 received. Cost: $0.0042 message, $0.0042 session.`` (counts of 1000
and more are rounded by aider: "4.2k").

Trap: aider exits 0 even when the API is down (after ~80 s of retries), so the outcome is
judged by the output: no ``Tokens:`` line means the model never answered, and the error
quotes its last error line, joined first (aider wraps its lines: ``... OpenAIException -
Connection`` then ``error.``). ``--yes-always`` is not a bypass: aider still answers no to
running the shell commands the model suggests. It commits by default; ``--no-auto-commits``
leaves changes in the work tree like every other adapter, for the validator and the
dispatcher to see. In a work dir that is not in a git repository it would create one (``.git``,
``.gitignore``, even with ``--no-gitignore``): ``--no-git`` is added there.

A setup's ``base_url`` goes in ``--openai-api-base`` (the model then reads ``openai/M``), its
key in ``OPENAI_API_KEY`` (never in argv: argv lands in meta.json).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from control_room.adapters.base import (
    CLI_ENV,
    NO_KEY,
    PROVIDER_KEYS,
    PROVIDER_VARS,
    Adapter,
    Invocation,
    Outcome,
    Usage,
)
from control_room.adapters.output import last_line
from control_room.proc import Result

if TYPE_CHECKING:  # faults is only read for a run that failed
    from control_room.adapters.faults import Fault

_COUNT = r"([\d.,]+k?)"
_SENT = re.compile(_COUNT + r" sent\b")
_RECEIVED = re.compile(_COUNT + r" received\b")
_SESSION_COST = re.compile(r"\$([\d.,]+) session\b")
_MESSAGE_COST = re.compile(r"\$([\d.,]+) message\b")
_ERRORISH = re.compile(r"error|exception|traceback|retrying|refused|unauthori[sz]ed|api key", re.IGNORECASE)
_ERROR = re.compile(r"error|exception", re.IGNORECASE)
_LITELLM = re.compile(r"^litellm\.\w+Error: ")  # aider's line for each refused call, before "Retrying in"
_RETRYING = re.compile(r"Retrying in [\d.]+ seconds")  # aider's line before each retry of a refused call
_TOKEN_LIMIT = "has hit a token limit!"  # aider's words when the provider says the context is exceeded
WRAP = 60  # a line at least this long, ended mid-sentence, was wrapped (aider wraps at 80)


class Aider(Adapter):
    name = "aider"
    binary = "aider"
    prompt_via = "file"
    bypass_flags = ()  # no tool-permission layer: it edits files, never runs suggested commands headless
    context_window = 128_000
    install = "pipx install aider-chat"
    exit_codes = {0: "ok (also when the API is down: the output decides)", 1: "error", 2: "bad command line"}
    accepts = ("base_url", "api_key_env", "model", "isolated")
    env_allow = (*CLI_ENV, "AIDER_*", *PROVIDER_VARS)
    vendor_keys = PROVIDER_KEYS

    def command(self, inv: Invocation) -> list[str]:
        base = ["--openai-api-base", inv.setup.base_url] if inv.setup.base_url else []
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
            *([] if in_git(inv.workdir) else ["--no-git"]),
            *base,
            *self.with_model("--model", inv),
            *inv.extra_args,
        ]

    def env(self, inv: Invocation, env: dict[str, str]) -> dict[str, str]:
        setup = inv.setup
        if setup.isolated:
            env["HOME"] = self.home(inv)
        key = self.key(inv, env)
        if key is not None:
            env["OPENAI_API_KEY"] = key
        elif setup.base_url:
            env["OPENAI_API_KEY"] = NO_KEY  # never the user's own key, sent to another endpoint
        if setup.given():
            env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # no fetch of the price list
        return env

    def text_usage(self, line: str) -> Usage | None:
        """Its ``Tokens: 4.2k sent, 512 received. Cost: $0.0042 message, ...`` line after each
        model reply, read by the live cap as the run goes: the message's tokens and cost (none
        without a price: CONTROL.md ``prices:`` prices it)."""
        if not line.startswith("Tokens:"):
            return None
        sent, received = _SENT.search(line), _RECEIVED.search(line)
        cost = _MESSAGE_COST.search(line)
        return Usage(
            (_count(sent.group(1)) or 0) if sent else 0,
            (_count(received.group(1)) or 0) if received else 0,
            _number(cost.group(1)) if cost else None,
        )

    def read(
        self, result: Result, stdout: str, stderr: str, files: Mapping[str, str] | None = None
    ) -> Outcome:
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
                error=self.explain(result, _cause(stderr) or _cause(stdout)),
                input_tokens=sent,
                output_tokens=received,
                cost_usd=cost,
            )
        if received == 0 and any(_TOKEN_LIMIT in ln for ln in stdout.splitlines()):
            # exit 0 and a Tokens: line, but the provider refused the brief as too long
            why = next(ln.strip() for ln in stdout.splitlines() if _TOKEN_LIMIT in ln)
            return Outcome(ok=False, final_message=stdout, error=f"aider exited 0 but {why[:180]}",
                           input_tokens=sent, output_tokens=received, cost_usd=cost)  # fmt: skip
        if not seen:
            why = _cause(stdout + "\n" + stderr, any_line=False) or "the model never answered"
            return Outcome(
                ok=False, final_message=stdout, error=f"aider exited 0 without a Tokens: line: {why}"
            )
        return Outcome(
            ok=True, final_message=stdout, input_tokens=sent, output_tokens=received, cost_usd=cost
        )

    def refusal(self, result: Result, stdout: str, stderr: str, outcome: Outcome) -> Fault | None:
        """aider exits 0 when its provider refuses (after its own back-off, ~65 s): the fault is
        in its last ``litellm.<Kind>Error: ...`` line (unwrapped), or its token-limit notice."""
        from control_room.adapters import faults  # only for a run that failed

        lines = unwrap(stdout)
        refused = [ln for ln in lines if _LITELLM.match(ln)]
        if refused:
            return faults.recognise(refused[-1])
        if any(_TOKEN_LIMIT in ln for ln in lines):
            return faults.Fault(faults.CONTEXT, next(ln for ln in lines if _TOKEN_LIMIT in ln).strip()[:200])
        return super().refusal(result, stdout, stderr, outcome)

    def waiting(self, stdout: str, stderr: str) -> Fault | None:
        """It has no retry setting, and its own back-off ignores the provider's retry-after: a
        limit that lasts keeps it retrying until its wall clock. Killed so, its last line is
        ``Retrying in N seconds...`` after the ``litellm.<Kind>Error: ...`` it retries."""
        lines = [ln for ln in unwrap(stdout) if ln.strip()]
        if not lines or not _RETRYING.match(lines[-1].strip()):
            return None
        refused = [ln for ln in lines if _LITELLM.match(ln)]
        if not refused:
            return None
        from control_room.adapters.faults import recognise  # only for a run that was killed

        return recognise(refused[-1])


def in_git(workdir: Path) -> bool:
    """Whether ``workdir`` is inside a git repository (a ``.git`` in it or a parent)."""
    path = os.path.abspath(workdir)
    while True:
        if os.path.exists(os.path.join(path, ".git")):
            return True
        parent = os.path.dirname(path)
        if parent == path:
            return False
        path = parent


def unwrap(text: str) -> list[str]:
    """aider's lines, the ones it wrapped joined back: a long line ended mid-sentence goes on
    with the next one."""
    out: list[str] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        prev = out[-1] if out else ""
        if line and not line[0].isspace() and len(prev) >= WRAP and not prev.endswith((".", ":", "!", "?")):
            out[-1] = f"{prev} {line}"
        else:
            out.append(line)
    return out


def _cause(text: str, *, any_line: bool = True) -> str:
    """The last error line (``...Error``, ``...Exception``), else the last error-looking one
    (``Retrying``, ``refused``), else (``any_line``) the last line."""
    lines = unwrap(text)
    for pattern in (_ERROR, _ERRORISH):
        found = [ln for ln in lines if pattern.search(ln)]
        if found:
            return last_line(found[-1])
    return last_line("\n".join(lines)) if any_line else ""


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
