"""``gemini``: Gemini CLI headless. The prompt goes to stdin: with stdin not a terminal it runs
non-interactively and takes stdin as the prompt (``-p`` text would only be appended to it).
``-o json`` prints one (pretty-printed) object: ``response`` (final text) and
``stats.models.<model>.tokens.{prompt,candidates,...}``, one entry per model used (the router
model too, so tokens are summed). No cost. Errors come as ``{"error": {"message", "code"}}``.

Each run gets a session id of control-room's (``--session-id``), so its chat recording,
``~/.gemini/tmp/<project>/chats/session-<time>-<first 8 of the id>.jsonl``, is known before it
starts: each ``gemini`` line there carries one model response's ``tokens``, read by the live
cap as the run goes (a response is written again as its tool calls run, under its own id:
counted once). Isolated, its ``max_turns`` goes in ``model.maxSessionTurns`` (exit 53 when it
is reached); otherwise the live cap holds it.

``--skip-trust``: without it an untrusted folder exits 55 before doing anything. That is
workspace trust, not a tool-permission bypass: without ``--yolo`` shell and write tools are
not even offered in headless mode. No work-dir flag: cwd.

Traps: with an endpoint down it retries for minutes (router model, then the main one) and its
last stderr line is a Node warning, not the cause. Isolated (``HOME`` = the state folder), its
``~/.gemini/settings.json`` sets ``general.maxAttempts: 1`` (it then exits 1 after ~72 s) and,
for a ``base_url``, ``security.auth.selectedType: "gemini-api-key"`` (without it the base URL
makes it pick an auth it then rejects: exit 41); the error quotes the last ``Attempt N
failed ...`` line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from control_room.adapters.base import CLI_ENV, NO_KEY, TURN_CAP, Adapter, Invocation, Outcome, Usage
from control_room.adapters.output import as_int, last_line
from control_room.proc import Result

if TYPE_CHECKING:  # faults is only read for a run that failed
    from control_room.adapters.faults import Fault

TURNS_STOP = 53  # its exit code when model.maxSessionTurns is reached
_ATTEMPT = re.compile(r"\bAttempt \d+ failed\b")
_NODE_NOISE = ("(node:", "(Use `node --trace")


AUTH_FIX = (
    'set security.auth.selectedType: "gemini-api-key" in its settings.json (~/.gemini/), or '
    "isolated: true in CONTROL.md adapters.gemini, which writes it"
)


class Gemini(Adapter):
    name = "gemini"
    binary = "gemini"
    prompt_via = "stdin"
    bypass_flags = ("-y", "--yolo", "--approval-mode yolo")
    context_window = 1_000_000
    install = "npm install -g @google/gemini-cli"
    exit_codes = {
        0: "ok",
        1: "general error or API failure",
        41: "authentication",
        42: "bad input",
        44: "sandbox",
        52: "configuration",
        53: "turn limit reached",
        54: "tool error",
        55: "untrusted folder",
        130: "cancelled",
    }
    accepts = ("base_url", "api_key_env", "model", "isolated")
    env_allow = (*CLI_ENV, "GEMINI_*", "GOOGLE_*")
    vendor_keys = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS")

    def command(self, inv: Invocation) -> list[str]:
        return ["gemini", "-o", "json", "--skip-trust", "--session-id", inv.session,
                *self.with_model("-m", inv), *inv.extra_args]  # fmt: skip

    def prepare(self, inv: Invocation) -> dict[str, str]:
        if not inv.setup.isolated:
            return {}
        settings: dict[str, Any] = {
            "general": {"maxAttempts": 1, "enableAutoUpdate": False, "enableAutoUpdateNotification": False},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
        }
        if inv.setup.base_url or inv.setup.api_key_env:
            settings["security"] = {"auth": {"selectedType": "gemini-api-key"}}
        if inv.max_turns:
            settings["model"] = {"maxSessionTurns": inv.max_turns}
        return {".gemini/settings.json": json.dumps(settings, indent=2) + "\n"}

    def env(self, inv: Invocation, env: dict[str, str]) -> dict[str, str]:
        setup = inv.setup
        if setup.isolated:
            env["HOME"] = self.home(inv)
        if setup.base_url:
            env["GOOGLE_GEMINI_BASE_URL"] = setup.base_url
        key = self.key(inv, env)
        if key is not None:
            env["GEMINI_API_KEY"] = key
        elif setup.base_url:  # never the user's own key (withheld: ``vendor_keys``)
            env["GEMINI_API_KEY"] = NO_KEY
        return env

    def usage_home(self, inv: Invocation, env: Mapping[str, str]) -> Path | None:
        """``~/.gemini`` of the run's HOME (the state folder when isolated)."""
        return Path(env["HOME"]) / ".gemini" if env.get("HOME") else None

    def usage_log(self, inv: Invocation, event: Mapping[str, Any] | None) -> str | None:
        """The chat recording of the session ``--session-id`` started."""
        return f"tmp/*/chats/session-*-{inv.session[:8]}.jsonl"

    def step_usage(self, event: Mapping[str, Any]) -> Usage | None:
        """A ``gemini`` message of its chat recording: its ``tokens`` (no cost), keyed by its id."""
        tokens = event.get("tokens") if event.get("type") == "gemini" else None
        if not isinstance(tokens, dict):
            return None
        key = event.get("id")
        return Usage(
            as_int(tokens.get("input")) or 0,
            as_int(tokens.get("output")) or 0,
            key=key if isinstance(key, str) else None,
        )

    def read(
        self, result: Result, stdout: str, stderr: str, files: Mapping[str, str] | None = None
    ) -> Outcome:
        payload = _json_object(stdout) or {}
        err = _json_object(stderr) if "error" not in payload else None
        error_obj = payload.get("error", (err or {}).get("error"))
        detail = ""
        if isinstance(error_obj, dict):
            msg = error_obj.get("message")
            detail = " ".join(msg.split())[:200] if isinstance(msg, str) else ""
        response = payload.get("response")
        final = response if isinstance(response, str) else ""
        input_tokens = output_tokens = None
        models: list[str] = []
        stats = payload.get("stats")
        per_model = stats.get("models") if isinstance(stats, dict) else None
        if isinstance(per_model, dict):
            for model, entry in per_model.items():
                tokens = entry.get("tokens") if isinstance(entry, dict) else None
                if not isinstance(tokens, dict):
                    continue
                models.append(str(model))
                input_tokens = _add(input_tokens, as_int(tokens.get("prompt", tokens.get("input"))))
                output_tokens = _add(output_tokens, as_int(tokens.get("candidates")))
        error = None
        if result.exit_code != 0:
            error = self.explain(result, detail or _cause(stderr))
            if result.exit_code == 41:  # the auth type its settings.json selects (or lacks)
                error += f"; {AUTH_FIX}"
            elif result.exit_code == TURNS_STOP:  # its model.maxSessionTurns, from max_turns
                error = f"{TURN_CAP}: gemini stopped itself at its model.maxSessionTurns (max_turns)"
        elif error_obj is not None:
            error = f"gemini exited 0 but reported an error: {detail or 'unknown'}"
        elif not isinstance(response, str):
            error = "gemini exited 0 but printed no JSON response"
        extra: dict[str, Any] = {"models": models} if models else {}
        session = payload.get("session_id")
        if isinstance(session, str):
            extra["session_id"] = session
        return Outcome(
            ok=error is None,
            final_message=final,
            error=error,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            extra=extra,
        )

    def refusal(self, result: Result, stdout: str, stderr: str, outcome: Outcome) -> Fault | None:
        """Its JSON error's ``code``, the provider's HTTP status (the exit code is that status
        modulo 256: 173 for a 429, 247 for a 503, 144 for a 400), and its message, which
        carries the retry delay ("Please retry in 20.0s"). A 429 with quota words and no delay
        (a daily quota) is a quota. Without a code, the default reading."""
        payload = _json_object(stdout) or {}
        error_obj = payload.get("error", (_json_object(stderr) or {}).get("error"))
        status = as_int(error_obj.get("code")) if isinstance(error_obj, dict) else None
        if not isinstance(error_obj, dict) or status is None or status < 400:
            return super().refusal(result, stdout, stderr, outcome)
        from control_room.adapters.faults import from_status  # only for a run that failed

        return from_status(status, str(error_obj.get("message") or ""))


def _cause(stderr: str) -> str:
    """The line of stderr that says why: the last ``Attempt N failed ...``, else the last line
    that is not a Node warning."""
    attempts = [ln for ln in stderr.splitlines() if _ATTEMPT.search(ln)]
    if attempts:
        return last_line(attempts[-1])
    return last_line(stderr, skip=_NODE_NOISE)


def _json_object(text: str) -> dict[str, Any] | None:
    """The last JSON object in ``text`` that starts a line (the output may be pretty-printed
    and preceded by notices)."""
    decoder = json.JSONDecoder()
    found = None
    starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
    for start in starts:
        if not text.startswith("{", start):
            continue
        try:
            obj, _ = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):  # RecursionError: absurdly deep nesting
            continue
        if isinstance(obj, dict):
            found = obj
    return found


def _add(a: int | None, b: int | None) -> int | None:
    if b is None:
        return a
    return b if a is None else a + b
