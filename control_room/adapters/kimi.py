"""``kimi``: kimi-cli in quiet print mode (``--quiet`` = ``--print --output-format text
--final-message-only``), prompt on stdin, ``-w`` for the work dir. Stdout is the final answer
as text: no tokens, no cost. Exit 75 is a connection error.

Traps: print mode auto-approves every tool call (it implies ``--afk``), so a kimi task runs
unattended by design. Needs Python >= 3.12; version 1.52.0 is a stub that only prints a
deprecation notice (and run without arguments downloads an installer): pin 1.51.0.
"""

from __future__ import annotations

from control_room.adapters.base import Adapter, Invocation, Outcome
from control_room.proc import Result


class Kimi(Adapter):
    name = "kimi"
    binary = "kimi"
    prompt_via = "stdin"
    bypass_flags = ("--yolo", "-y", "--afk", "--auto")
    context_window = 256_000
    install = "uv tool install --python 3.13 kimi-cli==1.51.0"
    exit_codes = {0: "ok", 1: "error", 2: "bad command line", 75: "connection error"}

    def command(self, inv: Invocation) -> list[str]:
        return ["kimi", "--quiet", "-w", str(inv.workdir), *self.with_model("-m", inv), *inv.extra_args]

    def read(self, result: Result, stdout: str, stderr: str) -> Outcome:
        if result.exit_code != 0:
            return Outcome(ok=False, final_message=stdout, error=self.explain(result, stderr))
        if not stdout.strip():
            return Outcome(ok=False, final_message="", error="kimi exited 0 but printed nothing")
        return Outcome(ok=True, final_message=stdout)
