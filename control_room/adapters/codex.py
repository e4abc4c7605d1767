"""``codex``: ``codex exec`` with the prompt on stdin (the ``-`` argument), JSONL events out.

The final message is the text of the last ``item.completed`` whose item is an
``agent_message``; tokens come from ``turn.completed.usage``. Codex reports no cost.

Trap: when its provider is unreachable, codex never exits ("Reconnecting... waiting for
network"), even with retries at 0. Nothing to do here: the dispatcher's wall clock kills the
process group. Without ``-`` and with stdin open it would append stdin to an argument prompt.
The default sandbox of ``exec`` is read-only: writes need ``-s workspace-write`` in the task's
extra_args (allowed by CONTROL.md), never added here.
"""

from __future__ import annotations

from typing import Any

from control_room.adapters.base import Adapter, Invocation, Outcome, as_int, json_lines
from control_room.proc import Result


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

    def command(self, inv: Invocation) -> list[str]:
        return [
            "codex",
            "exec",
            "--skip-git-repo-check",
            "--json",
            "-C",
            str(inv.workdir),
            *self.with_model("-m", inv),
            "-",
            *inv.extra_args,
        ]

    def read(self, result: Result, stdout: str, stderr: str) -> Outcome:
        final = ""
        tokens: dict[str, int | None] = {}
        turns = 0
        failure = ""
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
                failure = _message(event) or str(kind)
        extra: dict[str, Any] = {
            k: v for k, v in tokens.items() if k.startswith(("cached", "reasoning")) and v is not None
        }
        error = None
        if result.exit_code != 0:
            error = self.explain(result, failure or stderr)
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
