"""``opencode``: ``opencode run`` with the prompt on stdin, ``--dir`` for the work dir and
``--format json`` for JSONL events: ``text`` (``part.text``), ``step_finish``
(``part.tokens.{input,output,...}``, ``part.cost``, one per step: summed) and
``{"type": "error", "error": {...}}``. The final message is the run's text parts in order.

A provider's refusal that it retries (it waits out any retry-after, printing nothing on stdout)
is said only in its log: ``--print-logs --log-level WARN`` puts that on stderr, where a run
killed at its wall clock is read for it (``waiting``).

Trap: ``run`` executes bash without ``--auto`` (opencode's default permissions allow it):
restrict it in opencode's own config if that matters. An unreachable provider exits 1 after
~67 s of retries.

A setup writes ``opencode.json`` into the state folder, passed as ``OPENCODE_CONFIG`` (merged
on top of the user's config): autoupdate off, sharing disabled and, for a ``base_url``, the
provider ``control-room`` (``@ai-sdk/openai-compatible``, its ``apiKey`` read by opencode from
the variable ``api_key_env`` names: ``{env:NAME}``, never the key) with the setup's model,
run as ``-m control-room/<model>``. Isolated, ``XDG_CONFIG_HOME`` and ``XDG_DATA_HOME`` (its
auth and sessions) are inside the state folder.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
from control_room.adapters.output import as_float, as_int, json_lines
from control_room.proc import Result

if TYPE_CHECKING:  # faults is only read for a run that failed
    from control_room.adapters.faults import Fault

CONFIG = "opencode.json"
LOGS = (
    "--print-logs",
    "--log-level",
    "WARN",
)  # its errors to stderr: a refusal it retries is said only there
# its log line for a failed model request of the run's own agent (not the title's: small=true)
_STREAM_ERROR = r'^timestamp=(\S+) level=ERROR .*message="stream error" .*small=false .*error\.error="([^"]*)'

SCHEMA = "https://opencode.ai/config.json"
PROVIDER = "control-room"
QUIET = {  # with a setup: nothing but the model calls leaves the machine
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
}


class Opencode(Adapter):
    name = "opencode"
    binary = "opencode"
    prompt_via = "stdin"
    bypass_flags = ("--auto",)
    context_window = 200_000
    install = "npm install -g opencode-ai"
    exit_codes = {0: "ok", 1: "error (provider unreachable after retries, bad config)"}
    accepts = ("base_url", "api_key_env", "model", "isolated")
    env_allow = (*CLI_ENV, "OPENCODE_*", *PROVIDER_VARS)
    vendor_keys = PROVIDER_KEYS
    key_needs_url = True

    def command(self, inv: Invocation) -> list[str]:
        if inv.setup.base_url and inv.model:
            model = ["-m", f"{PROVIDER}/{inv.model}"]
        else:
            model = self.with_model("-m", inv)
        return [
            "opencode",
            "run",
            "--dir",
            str(inv.workdir),
            "--format",
            "json",
            *LOGS,
            *model,
            *inv.extra_args,
        ]

    def prepare(self, inv: Invocation) -> dict[str, str]:
        setup = inv.setup
        if not setup.given():
            return {}
        config: dict[str, Any] = {"$schema": SCHEMA, "autoupdate": False, "share": "disabled"}
        if setup.base_url:
            key = f"{{env:{setup.api_key_env}}}" if setup.api_key_env else NO_KEY
            provider: dict[str, Any] = {
                "npm": "@ai-sdk/openai-compatible",
                "name": PROVIDER,
                "options": {"baseURL": setup.base_url, "apiKey": key},
                "models": {inv.model: {"name": inv.model}} if inv.model else {},
            }
            config["provider"] = {PROVIDER: provider}
            if inv.model:
                config["model"] = f"{PROVIDER}/{inv.model}"
        return {CONFIG: json.dumps(config, indent=2) + "\n"}

    def env(self, inv: Invocation, env: dict[str, str]) -> dict[str, str]:
        setup = inv.setup
        if not setup.given():
            return env
        home = Path(self.home(inv))
        env["OPENCODE_CONFIG"] = str(home / CONFIG)
        if setup.isolated:
            env["XDG_CONFIG_HOME"] = str(home / "config")
            env["XDG_DATA_HOME"] = str(home / "data")
        env.update(QUIET)
        return env

    def step_usage(self, event: Mapping[str, Any]) -> Usage | None:
        """Each ``step_finish`` reports its step's (one model request's) tokens and cost; a cost
        of 0 for tokens spent is opencode's word for a model its config prices not (CONTROL.md
        ``prices:`` prices it)."""
        part = event.get("part") if event.get("type") == "step_finish" else None
        if not isinstance(part, dict):
            return None
        tokens: Mapping[str, Any] = part["tokens"] if isinstance(part.get("tokens"), dict) else {}
        tokens_in, tokens_out = as_int(tokens.get("input")) or 0, as_int(tokens.get("output")) or 0
        cost = as_float(part.get("cost"))
        if cost == 0 and tokens_in + tokens_out:  # a model its config gives no price: unpriced, not free
            cost = None
        return Usage(tokens_in, tokens_out, cost)

    def read(
        self, result: Result, stdout: str, stderr: str, files: Mapping[str, str] | None = None
    ) -> Outcome:
        texts: list[str] = []
        steps = 0
        input_tokens = output_tokens = cache_read = None
        cost = None
        failure = ""
        for event in json_lines(stdout):
            kind = event.get("type")
            part = event.get("part")
            part = part if isinstance(part, dict) else {}
            if kind == "text":
                text = part.get("text")
                if isinstance(text, str) and text:
                    texts.append(text)
            elif kind == "step_finish":
                steps += 1
                tokens = part.get("tokens")
                if isinstance(tokens, dict):
                    input_tokens = _add(input_tokens, as_int(tokens.get("input")))
                    output_tokens = _add(output_tokens, as_int(tokens.get("output")))
                    cache = tokens.get("cache")
                    if isinstance(cache, dict):
                        cache_read = _add(cache_read, as_int(cache.get("read")))
                step_cost = as_float(part.get("cost"))
                if step_cost is not None:
                    cost = step_cost if cost is None else cost + step_cost
            elif kind == "error":
                failure = _describe(event.get("error")) or "error event"
        extra: dict[str, Any] = {"cache_read_tokens": cache_read} if cache_read is not None else {}
        error = None
        if result.exit_code != 0:
            error = self.explain(result, failure or stderr)
        elif failure:
            error = f"opencode exited 0 but reported an error: {failure}"
        elif steps == 0 and not texts:
            error = "opencode exited 0 but printed no JSON events"
        return Outcome(
            ok=error is None,
            final_message="\n".join(texts),
            error=error,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cost_usd=cost,
            extra=extra,
        )

    def refusal(self, result: Result, stdout: str, stderr: str, outcome: Outcome) -> Fault | None:
        """Its ``error`` event's ``data``: the provider's ``statusCode``, the message, and the
        response's ``retry-after`` header where it was given. Without one, the default."""
        status, words = None, ""
        for event in json_lines(stdout):
            err = event.get("error")
            data = err.get("data") if event.get("type") == "error" and isinstance(err, dict) else None
            if isinstance(data, dict) and as_int(data.get("statusCode")) is not None:
                status, words = as_int(data.get("statusCode")), str(data.get("message") or "")
                headers = data.get("responseHeaders")
                wait = headers.get("retry-after") if isinstance(headers, dict) else None
                if isinstance(wait, str) and wait.strip().isdigit():
                    words += f"\nretry-after: {wait.strip()}"
        if status is None:
            return super().refusal(result, stdout, stderr, outcome)
        from control_room.adapters.faults import from_status  # only for a run that failed

        return from_status(status, words)

    def waiting(self, stdout: str, stderr: str) -> Fault | None:
        """opencode waits out a provider's retry-after, however long, printing nothing on stdout;
        its log (``--print-logs``) says ``stream error`` once for the refused request. The run
        was waiting on it when that line is later than its last event on stdout (each carries
        its time)."""
        import re  # only for a run that was killed

        refused = re.findall(_STREAM_ERROR, stderr, re.M)
        if not refused:
            return None
        stamp, words = refused[-1]
        at = _epoch(stamp)
        last = max((as_float(e.get("timestamp")) or 0 for e in json_lines(stdout)), default=0) / 1000
        if at is None or last >= at:
            return None
        from control_room.adapters.faults import recognise  # likewise

        return recognise(words)


def _epoch(stamp: str) -> float | None:
    """Seconds since the epoch of opencode's log time (``2026-12-07T11:52:36.827Z``)."""
    from datetime import datetime  # only for a run that was killed

    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _describe(err: object) -> str:
    """One line from an opencode error object: ``data.message``, ``message`` or ``name``."""
    if isinstance(err, str):
        return " ".join(err.split())[:200]
    if not isinstance(err, dict):
        return ""
    data = err.get("data")
    for source in (data, err):
        if isinstance(source, dict):
            msg = source.get("message")
            if isinstance(msg, str) and msg.strip():
                return " ".join(msg.split())[:200]
    name = err.get("name")
    return name if isinstance(name, str) else ""


def _add(a: int | None, b: int | None) -> int | None:
    if b is None:
        return a
    return b if a is None else a + b
