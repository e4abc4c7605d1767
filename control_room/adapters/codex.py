"""``codex``: ``codex exec`` with the prompt on stdin (the ``-`` argument), JSONL events out.

The final message is the text of the last ``item.completed`` whose item is an
``agent_message``; tokens come from ``turn.completed.usage``. Codex reports no cost.

Trap: when its provider is unreachable, codex never exits (``{"type": "error", "message":
"Reconnecting... 2/5 (...)"}`` events), even with retries at 0: only the dispatcher's wall
clock ends it, and the error then says it was reconnecting, quoting the last such event.
Without ``-`` and with stdin open it would append stdin to an argument prompt. The default
sandbox of ``exec`` is read-only: writes need ``-s workspace-write`` in the task's extra_args
(allowed by CONTROL.md), never added here.

A setup with a ``base_url`` defines the provider ``control-room`` (``wire_api = "responses"``,
the only one codex 0.171 accepts; ``env_key`` = the setup's ``api_key_env``): in
``$CODEX_HOME/config.toml`` when isolated (``CODEX_HOME`` = the state folder), else with
``-c`` overrides on top of the user's own config.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from control_room.adapters.base import CLI_ENV, Adapter, Invocation, Outcome, Usage, killed
from control_room.adapters.output import as_int, json_lines
from control_room.proc import Result

if TYPE_CHECKING:  # faults is only read for a run that failed
    from control_room.adapters.faults import Fault

PROVIDER = "control-room"


class Codex(Adapter):
    name = "codex"
    binary = "codex"
    prompt_via = "stdin"
    bypass_flags = (
        "--dangerously-bypass-approvals-and-sandbox",
        "--sandbox danger-full-access",
        "-s danger-full-access",
    )
    context_window = 272_000
    install = "npm install -g @openai/codex"
    exit_codes = {0: "ok", 1: "error (bad config, failed turn)"}
    accepts = ("base_url", "api_key_env", "model", "isolated")
    env_allow = (*CLI_ENV, "OPENAI_*", "CODEX_*")
    vendor_keys = ("OPENAI_API_KEY", "CODEX_API_KEY")
    key_needs_url = True

    def command(self, inv: Invocation) -> list[str]:
        overrides: list[str] = []
        if inv.setup.base_url and not inv.setup.isolated:  # isolated: config.toml says it all
            overrides += ["-c", f"model_provider={_toml(PROVIDER)}"]
            for key, value in _provider(inv).items():
                overrides += ["-c", f"model_providers.{PROVIDER}.{key}={_toml(value)}"]
        return [
            "codex",
            "exec",
            "--skip-git-repo-check",
            "--json",
            "-C",
            str(inv.workdir),
            *overrides,
            *self.with_model("-m", inv),
            "-",
            *inv.extra_args,
        ]

    def prepare(self, inv: Invocation) -> dict[str, str]:
        if not inv.setup.isolated:
            return {}
        lines = ["# written by control-room before each run, from CONTROL.md adapters.codex"]
        if inv.model:
            lines.append(f"model = {_toml(inv.model)}")
        if inv.setup.base_url:
            lines += [f"model_provider = {_toml(PROVIDER)}", "", f"[model_providers.{PROVIDER}]"]
            lines += [f"{key} = {_toml(value)}" for key, value in _provider(inv).items()]
        return {"config.toml": "\n".join(lines) + "\n"}

    def env(self, inv: Invocation, env: dict[str, str]) -> dict[str, str]:
        if inv.setup.isolated:
            env["CODEX_HOME"] = self.home(inv)
        return env

    def step_usage(self, event: Mapping[str, Any]) -> Usage | None:
        """A ``token_count`` of its session log reports one model request's tokens
        (``info.last_token_usage``); on stdout, ``turn.completed`` reports the whole exec turn's,
        only once it is over (no cost in either)."""
        usage: Any = None
        payload = event.get("payload") if event.get("type") == "event_msg" else None
        if isinstance(payload, dict) and payload.get("type") == "token_count":
            info = payload.get("info")
            usage = info.get("last_token_usage") if isinstance(info, dict) else None
        elif event.get("type") == "turn.completed":
            usage = event.get("usage")
        if not isinstance(usage, dict):
            return None
        return Usage(as_int(usage.get("input_tokens")) or 0, as_int(usage.get("output_tokens")) or 0)

    def usage_home(self, inv: Invocation, env: Mapping[str, str]) -> Path | None:
        """Its CODEX_HOME: the state folder when isolated, else the user's (``~/.codex``); the
        log is the one its own thread names, never another session's."""
        if inv.setup.isolated:
            return Path(self.home(inv))
        if env.get("CODEX_HOME"):
            return Path(env["CODEX_HOME"])
        return Path(env["HOME"]) / ".codex" if env.get("HOME") else None

    def usage_log(self, inv: Invocation, event: Mapping[str, Any] | None) -> str | None:
        """``thread.started`` names the session whose rollout (``sessions/Y/M/D/rollout-...-ID.jsonl``
        in its CODEX_HOME) logs a ``token_count`` after each model request (it takes no session
        id from its caller: the log is known only once its stdout names it)."""
        thread = (
            event.get("thread_id") if event is not None and event.get("type") == "thread.started" else None
        )
        if not isinstance(thread, str) or not thread or not all(c.isalnum() or c == "-" for c in thread):
            return None
        return f"sessions/*/*/*/rollout-*-{thread}.jsonl"

    def read(
        self, result: Result, stdout: str, stderr: str, files: Mapping[str, str] | None = None
    ) -> Outcome:
        final = ""
        tokens: dict[str, int | None] = {}
        turns = 0
        failure = reconnecting = ""
        for event in json_lines(stdout):
            kind = event.get("type")
            item = event.get("item")
            if kind == "item.completed" and isinstance(item, dict) and item.get("type") == "agent_message":
                text = item.get("text")
                if isinstance(text, str):
                    final = text
            elif kind == "turn.completed":
                turns += 1
                usage = event.get("usage")
                if isinstance(usage, dict):
                    for key in (
                        "input_tokens",
                        "cached_input_tokens",
                        "output_tokens",
                        "reasoning_output_tokens",
                    ):
                        tokens[key] = _add(tokens.get(key), as_int(usage.get(key)))
            elif kind in ("turn.failed", "error"):
                message = _message(event) or str(kind)
                if message.startswith("Reconnecting"):  # transient, unless it never ends
                    reconnecting = message
                else:
                    failure = message
        extra: dict[str, Any] = {
            k: v for k, v in tokens.items() if k.startswith(("cached", "reasoning")) and v is not None
        }
        error = None
        if result.timed_out and reconnecting:
            error = f"{killed(result)} while reconnecting to the model endpoint: {reconnecting[:200]}"
        elif result.exit_code != 0:
            error = self.explain(result, failure or reconnecting or stderr)
        elif failure:
            error = f"codex exited 0 but the turn failed: {failure[:200]}"
        elif turns == 0:
            error = "codex exited 0 but printed no turn.completed event"
        return Outcome(
            ok=error is None,
            final_message=final,
            error=error,
            input_tokens=tokens.get("input_tokens"),
            output_tokens=tokens.get("output_tokens"),
            extra=extra,
        )

    def waiting(self, stdout: str, stderr: str) -> Fault | None:
        """Its last ``Reconnecting... N/5 (...)`` error, when no item or turn came after it: it
        was retrying that (a refused request's status is in its words; an unreachable endpoint's
        words name no provider fault, and its time-out stays the task's)."""
        pending = ""
        for event in json_lines(stdout):
            kind = event.get("type")
            message = _message(event) if kind == "error" else ""
            if message.startswith("Reconnecting"):
                pending = message
            elif isinstance(kind, str) and kind.startswith(("item.", "turn.")):
                pending = ""
        if not pending:
            return None
        from control_room.adapters.faults import recognise  # only for a run that was killed

        return recognise(pending)


def _provider(inv: Invocation) -> dict[str, str | int]:
    """The settings of the provider ``control-room`` (a setup with a ``base_url``): no retries
    of its own (``request_max_retries``, ``stream_max_retries``: else a 429 is retried five
    times, ~100 s, before it fails), as Claude Code's ``CLAUDE_CODE_MAX_RETRIES=0``."""
    out: dict[str, str | int] = {
        "name": PROVIDER,
        "base_url": str(inv.setup.base_url),
        "wire_api": "responses",
        "request_max_retries": 0,
        "stream_max_retries": 0,
    }
    if inv.setup.api_key_env:
        out["env_key"] = inv.setup.api_key_env
    return out


def _toml(value: str | int) -> str:
    """A TOML basic string (JSON's escapes are TOML's), or an integer."""
    return json.dumps(value)


def _add(a: int | None, b: int | None) -> int | None:
    if b is None:
        return a
    return b if a is None else a + b


def _message(event: dict[str, Any]) -> str:
    err = event.get("error")
    for source in (err, event):
        if isinstance(source, dict):
            msg = source.get("message")
            if isinstance(msg, str) and msg.strip():
                return " ".join(msg.split())
    return ""
