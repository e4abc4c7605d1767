"""``kimi``: kimi-cli in quiet print mode (``--quiet`` = ``--print --output-format text
--final-message-only``), prompt on stdin, ``-w`` for the work dir. Stdout is the final answer
as text: no tokens, no cost. Exit 75 is a connection error.

On failure the last stderr line is always ``To resume this session: kimi -r ...``; the cause
(``Connection error.``, ``LLM not set``) is on stdout, so that is what the error quotes.

A setup with a ``base_url`` writes a config file into the state folder (an ``openai_legacy``
provider and a model, both named ``control-room``) passed with ``--config-file``; the key goes
in ``OPENAI_API_KEY``, which kimi-cli reads over the file's ``api_key`` for that provider type.
Isolated, ``HOME`` is the state folder (its sessions, ``~/.kimi``).

Each run gets a session id of control-room's (``-S``: a new id starts a new session), so its
wire log, ``~/.kimi/sessions/<work dir hash>/<id>/wire.jsonl``, is known before it starts: a
``StatusUpdate`` there per step carries its ``token_usage`` (no cost), read by the live cap as
the run goes. Its ``max_turns`` goes in ``--max-steps-per-turn``.

Traps: print mode auto-approves every tool call (it implies ``--afk``), so a kimi task runs
unattended by design. Needs Python >= 3.12; version 1.52.0 is a stub that only prints a
deprecation notice (and run without arguments downloads an installer): pin 1.51.0.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from control_room.adapters.base import CLI_ENV, NO_KEY, Adapter, Invocation, Outcome, Usage
from control_room.adapters.output import as_int, last_line
from control_room.proc import Result

CONFIG = "config.toml"
NAME = "control-room"  # the provider's and the model's name in that file
RESUME = ("To resume this session",)
NO_MODEL = "LLM not set"
STATUS = "StatusUpdate"  # the wire log's message carrying a step's token usage
CONTEXT = 131_072  # the model's max_context_size in the file: kimi needs one, the endpoint has its own


WIDE = "100000"


class Kimi(Adapter):
    name = "kimi"
    binary = "kimi"
    prompt_via = "stdin"
    bypass_flags = ("--yolo", "-y", "--afk", "--auto")
    context_window = 256_000
    install = "uv tool install --python 3.13 kimi-cli==1.51.0"
    exit_codes = {0: "ok", 1: "error", 2: "bad command line", 75: "connection error"}
    accepts = ("base_url", "api_key_env", "model", "isolated")
    env_allow = (*CLI_ENV, "KIMI_*", "MOONSHOT_*", "OPENAI_*")
    vendor_keys = ("OPENAI_API_KEY", "KIMI_API_KEY", "MOONSHOT_API_KEY")
    key_needs_url = True

    def command(self, inv: Invocation) -> list[str]:
        if inv.setup.base_url:  # the file names the model: -m would look for another one there
            head = ["--config-file", str(Path(self.home(inv)) / CONFIG)]
        else:
            head = self.with_model("-m", inv)
        turns = ["--max-steps-per-turn", str(inv.max_turns)] if inv.max_turns else []
        return ["kimi", "--quiet", "-w", str(inv.workdir), "-S", inv.session, *head, *turns, *inv.extra_args]

    def prepare(self, inv: Invocation) -> dict[str, str]:
        if not inv.setup.base_url:
            return {}
        lines = ["# written by control-room before each run, from CONTROL.md adapters.kimi"]
        if inv.model:  # none: kimi says "LLM not set", and the error says to set one
            lines.append(f"default_model = {json.dumps(NAME)}")
        lines += [
            "",
            f"[providers.{NAME}]",
            'type = "openai_legacy"',
            f"base_url = {json.dumps(inv.setup.base_url)}",
            f"api_key = {json.dumps(NO_KEY)}  # the key is in OPENAI_API_KEY, never here",
        ]
        if inv.model:
            lines += [
                "",
                f"[models.{NAME}]",
                f"provider = {json.dumps(NAME)}",
                f"model = {json.dumps(inv.model)}",
                f"max_context_size = {CONTEXT}",
            ]
        # One attempt per step (its default is 3, each with the client's own 2 retries: a 429
        # was tried 9 times over ~130 s); the client's 2 retries, which wait out retry-after, stay.
        lines += ["", "[loop_control]", "max_retries_per_step = 1"]
        return {CONFIG: "\n".join(lines) + "\n"}

    def env(self, inv: Invocation, env: dict[str, str]) -> dict[str, str]:
        # Its console hard-wraps what it prints at 80 columns, inside words: a report line or an
        # error (`... 'm` / `essage': 'invalid api key'`) would come back cut. Wide, it does not.
        env["COLUMNS"] = WIDE
        setup = inv.setup
        if setup.isolated:
            env["HOME"] = self.home(inv)
        if setup.base_url:
            key = self.key(inv, env)
            env["OPENAI_BASE_URL"] = setup.base_url  # else one in the user's environment wins
            env["OPENAI_API_KEY"] = key if key is not None else NO_KEY  # never the user's own
        if setup.given():
            env["KIMI_DISABLE_TELEMETRY"] = "1"
            env["KIMI_CLI_NO_AUTO_UPDATE"] = "1"
        return env

    def usage_home(self, inv: Invocation, env: Mapping[str, str]) -> Path | None:
        """``~/.kimi`` of the run's HOME (the state folder when isolated)."""
        return Path(env["HOME"]) / ".kimi" if env.get("HOME") else None

    def usage_log(self, inv: Invocation, event: Mapping[str, Any] | None) -> str | None:
        """The wire log of the session ``-S`` started."""
        return f"sessions/*/{inv.session}/wire.jsonl"

    def step_usage(self, event: Mapping[str, Any]) -> Usage | None:
        """A ``StatusUpdate`` of its wire log: one step's ``token_usage`` (input as fresh, cached
        and cache-written tokens), keyed by its message id."""
        message = event.get("message")
        payload = (
            message.get("payload") if isinstance(message, dict) and message.get("type") == STATUS else None
        )
        usage = payload.get("token_usage") if isinstance(payload, dict) else None
        if not isinstance(usage, dict) or not isinstance(payload, dict):
            return None
        tokens_in = sum(
            as_int(usage.get(k)) or 0 for k in ("input_other", "input_cache_read", "input_cache_creation")
        )
        key = payload.get("message_id")
        return Usage(tokens_in, as_int(usage.get("output")) or 0, key=key if isinstance(key, str) else None)

    def read(
        self, result: Result, stdout: str, stderr: str, files: Mapping[str, str] | None = None
    ) -> Outcome:
        if result.exit_code != 0:
            cause = last_line(stdout) or last_line(stderr, skip=RESUME)
            if NO_MODEL in cause:
                cause += " (no model: set `model` in CONTROL.md adapters.kimi, or the role's or the task's)"
            return Outcome(ok=False, final_message=stdout, error=self.explain(result, cause))
        if not stdout.strip():
            return Outcome(ok=False, final_message="", error="kimi exited 0 but printed nothing")
        return Outcome(ok=True, final_message=stdout)
