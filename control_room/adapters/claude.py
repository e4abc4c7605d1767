"""``claude``: Claude Code in print mode. The prompt goes to stdin (``claude -p`` with no prompt
argument reads it there); the answer is one JSON object of ``"type": "result"``.

Observed (docs/adapters.md): exit 1 on an API error (``API Error: Connection refused``, quoted
as the cause) and on max turns; ``is_error`` true means it failed even when the exit code is 0;
a tool call denied in plain ``-p`` still exits 0 and is listed in ``permission_denials``. No
work-dir flag: the dispatcher's cwd is the work dir.

A setup: ``ANTHROPIC_BASE_URL``, the key in ``ANTHROPIC_API_KEY`` (with a ``base_url``: only
``api_key_env``'s, else the placeholder; the user's own keys are withheld, ``vendor_keys``),
``HOME`` = the state folder when isolated; with a ``base_url`` also
``CLAUDE_CODE_MAX_RETRIES=0`` (else an unreachable endpoint is retried silently for over
100 s); telemetry, the updater and other traffic off.

Each run gets a session id of control-room's (``--session-id``), so its transcript,
``projects/<cwd>/<id>.jsonl`` in its config folder (``~/.claude``, ``$CLAUDE_CONFIG_DIR``, or
the state folder's when isolated), is known before it starts: each ``assistant`` line there
carries its message's usage, read by the live cap as the run goes (a message with several
content blocks is logged once per block, under one message id: counted once). Its own
``--max-budget-usd`` holds the task's dollars; ``--max-turns`` its ``max_turns``.

``read_result`` is shared with the CLIs whose output copies this shape (amp, cursor-agent).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from control_room.adapters.base import (
    CLI_ENV,
    COST_CAP,
    NO_KEY,
    TURN_CAP,
    Adapter,
    Invocation,
    Outcome,
    Usage,
)
from control_room.adapters.output import as_float, as_int, json_lines, last_json, last_line
from control_room.proc import Result

if TYPE_CHECKING:  # faults is only read for a run that failed
    from control_room.adapters.faults import Fault

BUDGET_STOP = "error_max_budget_usd"  # the result's subtype when --max-budget-usd ended the run
TURNS_STOP = "error_max_turns"  # ... and when --max-turns did
QUIET = {  # with a setup: nothing but the model calls leaves the machine
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
}


class Claude(Adapter):
    name = "claude"
    binary = "claude"
    prompt_via = "stdin"
    bypass_flags = ("--dangerously-skip-permissions", "--permission-mode bypassPermissions")
    context_window = 200_000
    install = "npm install -g @anthropic-ai/claude-code (on node 20: @anthropic-ai/claude-code@2.1.332)"
    exit_codes = {0: "ok", 1: "API error or max turns reached"}
    accepts = ("base_url", "api_key_env", "model", "isolated")
    env_allow = (*CLI_ENV, "ANTHROPIC_*", "CLAUDE_*")
    vendor_keys = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")

    def command(self, inv: Invocation) -> list[str]:
        return ["claude", "-p", "--output-format", "json", "--session-id", inv.session,
                *self.with_model("--model", inv), *_budget(inv), *inv.extra_args]  # fmt: skip

    def env(self, inv: Invocation, env: dict[str, str]) -> dict[str, str]:
        setup = inv.setup
        if setup.isolated:
            env["HOME"] = self.home(inv)
        if setup.base_url:
            env["ANTHROPIC_BASE_URL"] = setup.base_url
            env["CLAUDE_CODE_MAX_RETRIES"] = "0"
        key = self.key(inv, env)
        if key is not None:
            env["ANTHROPIC_API_KEY"] = key
        elif setup.base_url:  # a local server's: never the user's own key, nor their login
            env["ANTHROPIC_API_KEY"] = NO_KEY
        if setup.given():
            env.update(QUIET)
        return env

    def usage_home(self, inv: Invocation, env: Mapping[str, str]) -> Path | None:
        """Its config folder: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude`` of the run's HOME (the
        state folder when isolated)."""
        if env.get("CLAUDE_CONFIG_DIR"):
            return Path(env["CLAUDE_CONFIG_DIR"])
        return Path(env["HOME"]) / ".claude" if env.get("HOME") else None

    def usage_log(self, inv: Invocation, event: Mapping[str, Any] | None) -> str | None:
        """The transcript of the session ``--session-id`` started (its folder is named after the
        work dir)."""
        return f"projects/*/{inv.session}.jsonl"

    def step_usage(self, event: Mapping[str, Any]) -> Usage | None:
        """An ``assistant`` line of its transcript: its message's ``usage`` (no cost), keyed by
        the message id."""
        message = event.get("message") if event.get("type") == "assistant" else None
        usage = message.get("usage") if isinstance(message, dict) else None
        if not isinstance(usage, dict):
            return None
        key = message.get("id") if isinstance(message, dict) else None
        return Usage(
            as_int(usage.get("input_tokens")) or 0,
            as_int(usage.get("output_tokens")) or 0,
            key=key if isinstance(key, str) else None,
        )

    def read(
        self, result: Result, stdout: str, stderr: str, files: Mapping[str, str] | None = None
    ) -> Outcome:
        return read_result(self, result, stdout, stderr)

    def refusal(self, result: Result, stdout: str, stderr: str, outcome: Outcome) -> Fault | None:
        """The result object's ``api_error_status`` and ``api_error_type`` (the provider's HTTP
        status and error type, given when ``terminal_reason`` is ``api_error`` or
        ``prompt_too_long``): "API Error: 529 Overloaded ... try again in a moment" is an
        overload, not a rate limit. Claude Code passes on no reset header; a plan's "usage
        limit reached|<epoch>" is read where it says one. Without a status (no result object:
        a crash), the default reading."""
        event = result_event(stdout)
        if event is not None and event.get("subtype") in (BUDGET_STOP, TURNS_STOP):  # the task's caps
            return None
        status = as_int(event.get("api_error_status")) if event else None
        if event is None or status is None:
            return super().refusal(result, stdout, stderr, outcome)
        from control_room.adapters.faults import from_status  # only for a run that failed

        words = f"{event.get('api_error_type')}: {_first_line(str(event.get('result') or ''))}"
        return from_status(status, words)


def _budget(inv: Invocation) -> list[str]:
    """Claude Code's own live caps: the task's ``max_cost_usd`` (none for a free run: 0), and
    its ``max_turns`` (none: 0)."""
    cap = as_float(inv.task.get("max_cost_usd"))
    turns = ["--max-turns", str(inv.max_turns)] if inv.max_turns else []
    return (["--max-budget-usd", f"{cap:g}"] if cap else []) + turns


def result_event(stdout: str) -> dict[str, Any] | None:
    """The last ``{"type": "result", ...}`` object: the whole of stdout (json), a line
    (stream-json), or the last of a JSON array of events (json with hooks or ``--verbose``)."""
    found = None
    for obj in json_lines(stdout):
        if obj.get("type") == "result":
            found = obj
    if found is None:
        whole = last_json(stdout)
        if whole is not None and whole.get("type") == "result":
            found = whole
    if found is None and stdout.lstrip().startswith("["):
        try:
            events = json.loads(stdout)
        except (ValueError, RecursionError):
            events = None
        for obj in events if isinstance(events, list) else ():
            if isinstance(obj, dict) and obj.get("type") == "result":
                found = obj
    return found


def read_result(adapter: Adapter, result: Result, stdout: str, stderr: str) -> Outcome:
    """Read a Claude-Code-style result object: final text, usage, cost, is_error."""
    event = result_event(stdout)
    if event is None:
        if result.exit_code != 0:  # the cause is on stderr, or (no JSON at all) on stdout
            cause = stderr if last_line(stderr) else stdout
            return Outcome(ok=False, final_message=stdout, error=adapter.explain(result, cause))
        return Outcome(
            ok=False, final_message=stdout, error=f"{adapter.name} exited 0 but printed no JSON result"
        )
    text = event.get("result")
    text = text if isinstance(text, str) else ""
    usage = event.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    extra: dict[str, Any] = {}
    for key in ("subtype", "num_turns", "session_id", "terminal_reason"):
        value = event.get(key)
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            extra[key] = value
    denials = event.get("permission_denials")
    if isinstance(denials, list) and denials:
        extra["permission_denials"] = len(denials)
    subtype = event.get("subtype")
    failed = event.get("is_error") is True or (isinstance(subtype, str) and subtype.startswith("error"))
    error = None
    if subtype == BUDGET_STOP:  # its own --max-budget-usd ended it: the live cap, said as spend.py says it
        said = event.get("errors")
        why = _first_line(str(said[0])) if isinstance(said, list) and said else "its --max-budget-usd"
        error = (
            f"{COST_CAP}: ${as_float(event.get('total_cost_usd')) or 0:.4f} spent over "
            f"{as_int(event.get('num_turns')) or 0} turn(s); {adapter.name} stopped itself: {why}"
        )
    elif subtype == TURNS_STOP:  # its own --max-turns ended it
        error = (
            f"{TURN_CAP}: {as_int(event.get('num_turns')) or 0} model turns; {adapter.name} stopped "
            "itself at its --max-turns (max_turns)"
        )
    elif result.exit_code != 0 or failed:
        detail = _first_line(text) or _first_line(str(event.get("error") or "")) or _last_line(stderr)
        what = f" ({subtype})" if isinstance(subtype, str) and subtype != "success" else ""
        code = result.exit_code
        if code == 0:
            meaning = "but is_error is true"
        else:
            meaning = adapter.exit_codes.get(code, "error") if code is not None else "killed"
        error = f"{adapter.name} exited {code} ({meaning}){what}" + (f": {detail}" if detail else "")
    return Outcome(
        ok=error is None,
        final_message=text,
        error=error,
        input_tokens=as_int(usage.get("input_tokens", usage.get("inputTokens"))),
        output_tokens=as_int(usage.get("output_tokens", usage.get("outputTokens"))),
        cost_usd=as_float(event.get("total_cost_usd")),
        extra=extra,
    )


def _first_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[0][:200] if lines else ""


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:200] if lines else ""
