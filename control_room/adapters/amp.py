"""``amp``: Amp in execute mode (``-x`` with no message: it reads the prompt from stdin) and
``--stream-json``, whose events copy Claude Code's: the last ``{"type": "result"}`` carries
the final text, ``is_error`` and ``usage``. Amp bills credits, not dollars: no cost.

Amp's ``-m`` picks a mode (low|medium|high|ultra), not a model, so ``inv.model`` is not
passed (Amp chooses its model); a mode can go in the task's extra_args. Trap: the
conversation runs on Amp's server (``AMP_API_KEY``, ``AMP_URL``), so it cannot run offline;
a setup sets those two (``api_key_env``, ``base_url``), nothing else. No work-dir flag: cwd.
"""

from __future__ import annotations

from collections.abc import Mapping

from control_room.adapters.base import CLI_ENV, Adapter, Invocation, Outcome
from control_room.adapters.claude import read_result
from control_room.proc import Result


class Amp(Adapter):
    name = "amp"
    binary = "amp"
    prompt_via = "stdin"
    bypass_flags = ("--dangerously-allow-all", "amp.dangerouslyAllowAll (settings key)")
    context_window = 200_000
    install = "npm install -g @ampcode/cli (linux-x64: pin @ampcode/cli@0.0.1790142911-g7618fb)"
    exit_codes = {0: "ok", 1: "error"}
    accepts = ("base_url", "api_key_env")
    env_allow = (*CLI_ENV, "AMP_*")
    vendor_keys = ("AMP_API_KEY",)

    def command(self, inv: Invocation) -> list[str]:
        return ["amp", "-x", "--stream-json", *inv.extra_args]

    def env(self, inv: Invocation, env: dict[str, str]) -> dict[str, str]:
        if inv.setup.base_url:
            env["AMP_URL"] = inv.setup.base_url
        key = self.key(inv, env)
        if key is not None:
            env["AMP_API_KEY"] = key
        return env

    def read(
        self, result: Result, stdout: str, stderr: str, files: Mapping[str, str] | None = None
    ) -> Outcome:
        return read_result(self, result, stdout, stderr)
