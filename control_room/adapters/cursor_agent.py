"""``cursor-agent``: Cursor's agent CLI in print mode. Built from its documented flags (it is
not on the registries reached here, so not observed end to end): the prompt is a positional
argument, so it gets the pointer sentence and reads the brief itself (print mode may edit
files in the workspace without approval). ``--output-format json`` prints one
``{"type": "result", "is_error", "result", ...}`` object on success (the Claude Code shape,
read the same way; usage only in newer versions), and on failure a non-zero exit with the
message on stderr and no JSON.

``--trust`` answers the workspace-trust question, which a headless run cannot; it is not a
tool-permission bypass (that is ``--force``/``--yolo``). A setup's ``api_key_env`` goes in
``CURSOR_API_KEY`` (documented, not observed); there is no endpoint to point it at.
"""

from __future__ import annotations

from collections.abc import Mapping

from control_room.adapters.base import CLI_ENV, Adapter, Invocation, Outcome
from control_room.adapters.claude import read_result
from control_room.proc import Result


class CursorAgent(Adapter):
    name = "cursor-agent"
    binary = "cursor-agent"
    prompt_via = "file"
    bypass_flags = ("--force", "-f", "--yolo")
    context_window = 200_000
    install = "curl https://cursor.com/install -fsS | bash"
    exit_codes = {0: "ok", 1: "error (message on stderr)"}
    accepts = ("api_key_env", "model")
    env_allow = (*CLI_ENV, "CURSOR_*")

    def command(self, inv: Invocation) -> list[str]:
        return [
            "cursor-agent",
            "--print",
            "--output-format",
            "json",
            "--trust",
            "--workspace",
            str(inv.workdir),
            *self.with_model("--model", inv),
            self.pointer(inv),
            *inv.extra_args,
        ]

    def env(self, inv: Invocation, env: dict[str, str]) -> dict[str, str]:
        key = self.key(inv, env)
        if key is not None:
            env["CURSOR_API_KEY"] = key
        return env

    def read(
        self, result: Result, stdout: str, stderr: str, files: Mapping[str, str] | None = None
    ) -> Outcome:
        return read_result(self, result, stdout, stderr)
