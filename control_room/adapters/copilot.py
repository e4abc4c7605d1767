"""``copilot``: GitHub Copilot CLI in programmatic mode. The prompt is an argument only
(``-p``), so it gets the pointer sentence and reads the brief from the work dir itself (a
file read inside ``-C DIR`` needs no tool permission).

``--output-format json`` prints JSONL events; the final message is the last
``assistant.message`` with content, and the stream ends with
``{"type": "result", "exitCode": N, "usage": {"premiumRequests": ...}}``: no tokens, no cost
(those only go to ``--usage-output-file``, which read() cannot see), so the premium requests go
to ``Outcome.extra``. A denied tool call still exits 0; an unreachable provider exits 1 after
five retries (~24 s).
"""

from __future__ import annotations

from typing import Any

from control_room.adapters.base import Adapter, Invocation, Outcome, as_float, as_int, json_lines
from control_room.proc import Result


class Copilot(Adapter):
    name = "copilot"
    binary = "copilot"
    prompt_via = "file"
    bypass_flags = ("--allow-all-tools", "--allow-all", "--yolo", "COPILOT_ALLOW_ALL=1 (env)")
    context_window = 128_000
    install = "npm install -g @github/copilot (the first run unpacks ~235 MB into ~/.cache/copilot)"
    exit_codes = {0: "ok", 1: "error (provider unreachable after retries, bad option)"}

    def command(self, inv: Invocation) -> list[str]:
        return [
            "copilot",
            "-C",
            str(inv.workdir),
            "--output-format",
            "json",
            "-p",
            self.pointer(inv),
            *self.with_model("--model", inv),
            *inv.extra_args,
        ]

    def read(self, result: Result, stdout: str, stderr: str) -> Outcome:
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
        error = None
        if result.exit_code != 0:
            error = self.explain(result, failure or stderr)
        elif end is None:
            error = "copilot exited 0 but printed no result event"
        elif reported not in (0, None):
            error = f"copilot exited 0 but its result says exitCode {reported}" + (
                f": {failure}" if failure else ""
            )
        return Outcome(ok=error is None, final_message=final, error=error, extra=extra)
