"""``copilot``: GitHub Copilot CLI in programmatic mode. The prompt is an argument only
(``-p``), so it gets the pointer sentence and reads the brief from the work dir itself (a
file read inside ``-C DIR`` needs no tool permission).

``--output-format json`` prints JSONL events; the final message is the last
``assistant.message`` with content, and the stream ends with
``{"type": "result", "exitCode": N, "usage": {"premiumRequests": ...}}`` (premium requests go
to ``Outcome.extra``): no tokens, no cost. Those only go to ``--usage-output-file``, written
into the run's results folder (``copilot-usage.json``) and read back:
``modelMetrics.<model>.usage.inputTokens``/``outputTokens`` and ``requests.cost``, summed over
models.

Each run gets a session id of control-room's (``--session-id``), so its event log,
``session-state/<id>/events.jsonl`` in its home (``~/.copilot``, ``$COPILOT_HOME``), is known
before it starts: a ``session.usage_record`` there per model request carries its tokens and
cost, read by the live cap as the run goes (a cost of 0, a bring-your-own-key model's, is
unpriced: CONTROL.md ``prices:`` prices it).

A denied tool call still exits 0; an unreachable provider exits 1 after five retries (~24 s).
With a ``base_url`` (bring your own key) it needs a model, else it exits 1 with ``BYOK
providers require an explicit model``: the error says to set one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from control_room.adapters.base import CLI_ENV, NO_KEY, Adapter, Invocation, Outcome, Usage
from control_room.adapters.output import as_float, as_int, json_lines
from control_room.proc import Result

if TYPE_CHECKING:  # faults is only read for a run that failed
    from control_room.adapters.faults import Fault

USAGE_FILE = "copilot-usage.json"
NO_MODEL = "BYOK providers require an explicit model"


class Copilot(Adapter):
    name = "copilot"
    binary = "copilot"
    prompt_via = "file"
    bypass_flags = ("--allow-all-tools", "--allow-all", "--yolo", "COPILOT_ALLOW_ALL=1 (env)")
    context_window = 128_000
    install = "npm install -g @github/copilot (the first run unpacks ~235 MB into ~/.cache/copilot)"
    exit_codes = {0: "ok", 1: "error (provider unreachable after retries, no model for a provider, ...)"}
    accepts = ("base_url", "api_key_env", "model", "isolated")
    env_allow = (*CLI_ENV, "GH_TOKEN", "GITHUB_TOKEN", "GH_HOST", "COPILOT_*")
    vendor_keys = ("GH_TOKEN", "GITHUB_TOKEN", "COPILOT_GITHUB_TOKEN", "COPILOT_PROVIDER_API_KEY")

    def command(self, inv: Invocation) -> list[str]:
        usage = ["--usage-output-file", str(inv.results / USAGE_FILE)] if inv.results else []
        return [
            "copilot",
            "-C",
            str(inv.workdir),
            "--output-format",
            "json",
            "--session-id",
            inv.session,
            *usage,
            "-p",
            self.pointer(inv),
            *self.with_model("--model", inv),
            *inv.extra_args,
        ]

    def outputs(self, inv: Invocation) -> tuple[str, ...]:
        return (USAGE_FILE,) if inv.results else ()

    def env(self, inv: Invocation, env: dict[str, str]) -> dict[str, str]:
        setup = inv.setup
        if setup.isolated:
            env["COPILOT_HOME"] = self.home(inv)
        key = self.key(inv, env)
        if setup.base_url:  # bring your own key: no GitHub login needed
            env["COPILOT_PROVIDER_BASE_URL"] = setup.base_url
            env["COPILOT_PROVIDER_API_KEY"] = key if key is not None else NO_KEY
            env["COPILOT_OFFLINE"] = "true"
            if inv.model:
                env["COPILOT_MODEL"] = inv.model
        elif key is not None:
            env["COPILOT_GITHUB_TOKEN"] = key
        if setup.base_url or setup.isolated:
            env["COPILOT_AUTO_UPDATE"] = "false"
        return env

    def usage_home(self, inv: Invocation, env: Mapping[str, str]) -> Path | None:
        """Its home: ``$COPILOT_HOME`` (the state folder when isolated), else ``~/.copilot``."""
        if env.get("COPILOT_HOME"):
            return Path(env["COPILOT_HOME"])
        return Path(env["HOME"]) / ".copilot" if env.get("HOME") else None

    def usage_log(self, inv: Invocation, event: Mapping[str, Any] | None) -> str | None:
        """The event log of the session ``--session-id`` started."""
        return f"session-state/{inv.session}/events.jsonl"

    def step_usage(self, event: Mapping[str, Any]) -> Usage | None:
        """A ``session.usage_record``: one model request's tokens and cost, keyed by its call id."""
        data = event.get("data") if event.get("type") == "session.usage_record" else None
        usage = data.get("usage") if isinstance(data, dict) else None
        if not isinstance(usage, dict):
            return None
        tokens_in, tokens_out = as_int(usage.get("inputTokens")) or 0, as_int(usage.get("outputTokens")) or 0
        cost = as_float(usage.get("cost"))
        if cost == 0 and tokens_in + tokens_out:  # its own model's price unknown: unpriced, not free
            cost = None
        key = usage.get("apiCallId", event.get("id"))
        return Usage(tokens_in, tokens_out, cost, key if isinstance(key, str) else None)

    def read(
        self, result: Result, stdout: str, stderr: str, files: Mapping[str, str] | None = None
    ) -> Outcome:
        final = ""
        end: dict[str, Any] | None = None
        failure = ""
        for event in json_lines(stdout):
            kind = event.get("type")
            data = event.get("data")
            data = data if isinstance(data, dict) else {}
            if kind == "assistant.message":
                content = data.get("content")
                if isinstance(content, str) and content.strip():
                    final = content
            elif kind == "result":
                end = event
            elif isinstance(kind, str) and kind.endswith("error"):
                msg = data.get("message", event.get("message"))
                failure = " ".join(msg.split())[:200] if isinstance(msg, str) else kind
        extra: dict[str, Any] = {}
        reported = None
        if end is not None:
            reported = as_int(end.get("exitCode"))
            usage = end.get("usage")
            premium = as_float(usage.get("premiumRequests")) if isinstance(usage, dict) else None
            if premium is not None:
                extra["premium_requests"] = premium
        input_tokens, output_tokens, cost = _usage((files or {}).get(USAGE_FILE, ""))
        error = None
        if NO_MODEL in stdout or NO_MODEL in stderr:
            error = (
                f"copilot exited {result.exit_code}: {NO_MODEL}: set `model` in CONTROL.md "
                "adapters.copilot (or the role's or the task's model)"
            )
        elif result.exit_code != 0:
            error = self.explain(result, failure or stderr)
        elif end is None:
            error = "copilot exited 0 but printed no result event"
        elif reported not in (0, None):
            error = f"copilot exited 0 but its result says exitCode {reported}" + (
                f": {failure}" if failure else ""
            )
        return Outcome(
            ok=error is None,
            final_message=final,
            error=error,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cost_usd=cost,
            extra=extra,
        )

    def refusal(self, result: Result, stdout: str, stderr: str, outcome: Outcome) -> Fault | None:
        """Its ``session.error`` event: the provider's ``statusCode`` and the whole message
        (after its own five retries: "Last error: 429 ... Please try again in 20s"). Without
        one, the default reading."""
        status, message = None, ""
        for event in json_lines(stdout):
            data = event.get("data")
            if event.get("type") == "session.error" and isinstance(data, dict):
                status, message = as_int(data.get("statusCode")), str(data.get("message") or "")
        if status is None:
            return super().refusal(result, stdout, stderr, outcome)
        from control_room.adapters.faults import from_status  # only for a run that failed

        return from_status(status, message)

    def waiting(self, stdout: str, stderr: str) -> Fault | None:
        """Its last ``model.call_failure`` (the provider's ``statusCode`` and ``errorMessage``),
        when no model call got through after it: it was retrying that refusal."""
        status, words = None, ""
        for event in json_lines(stdout):
            kind, data = event.get("type"), event.get("data")
            if not isinstance(data, dict):
                continue
            if kind == "model.call_failure":
                status, words = as_int(data.get("statusCode")), str(data.get("errorMessage") or "")
            elif kind == "model.call_finished" and data.get("outcome") == "success":
                status = None
        if status is None:
            return None
        from control_room.adapters.faults import from_status  # only for a run that was killed

        return from_status(status, words)


def _usage(text: str) -> tuple[int | None, int | None, float | None]:
    """Input tokens, output tokens and cost from the ``--usage-output-file``, summed over
    ``modelMetrics``; None where it says nothing (or is not there)."""
    try:
        data = json.loads(text) if text.strip() else None
    except (ValueError, RecursionError):
        return None, None, None
    metrics = data.get("modelMetrics") if isinstance(data, dict) else None
    tokens_in = tokens_out = cost = None
    for entry in metrics.values() if isinstance(metrics, dict) else ():
        if not isinstance(entry, dict):
            continue
        usage, requests = entry.get("usage"), entry.get("requests")
        if isinstance(usage, dict):
            tokens_in = _add(tokens_in, as_int(usage.get("inputTokens")))
            tokens_out = _add(tokens_out, as_int(usage.get("outputTokens")))
        if isinstance(requests, dict):
            value = as_float(requests.get("cost"))
            if value is not None:
                cost = value if cost is None else cost + value
    return tokens_in, tokens_out, cost


def _add(a: int | None, b: int | None) -> int | None:
    if b is None:
        return a
    return b if a is None else a + b
