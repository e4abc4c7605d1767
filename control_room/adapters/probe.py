"""``probe``: the embedded default. Runs the task's ``command`` itself (no login, no network)
and writes an honest report: CONFIRMED is exactly what it observed, nothing more."""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from pathlib import Path

from control_room.adapters.base import MINIMAL_ENV, Adapter, Invocation, Outcome, killed
from control_room.errors import InvalidError
from control_room.proc import Result


class Probe(Adapter):
    name = "probe"
    binary = None
    prompt_via = "stdin"
    context_window = 1_000_000
    install = "built in"
    reads_faults = False  # its output is the task's own program's: never a provider's word
    env_allow = MINIMAL_ENV

    def command(self, inv: Invocation) -> list[str]:
        if not inv.command:
            raise InvalidError(f"task {inv.task.get('id')}: `command` (the probe runs it) is missing")
        return list(inv.command)

    def executable(self, inv: Invocation) -> str | None:
        return self.command(inv)[0]

    def stdin(self, inv: Invocation) -> bytes | None:
        return None

    def read(
        self, result: Result, stdout: str, stderr: str, files: Mapping[str, str] | None = None
    ) -> Outcome:
        cmd = shlex.join(result.argv)
        if len(cmd) > 160:
            cmd = cmd[:157] + "..."
        if result.stopped:
            what = "was killed because STOP appeared"
        elif result.timed_out:
            what = killed(result).replace("the agent ", "")
        else:
            what = f"exited {result.exit_code}"
        evidence = [
            f"- CONFIRMED: `{cmd}` {what} after {result.duration_s:.2f}s "
            f"(its output: {_shown(result.stdout.path)}, {_shown(result.stderr.path)})"
        ]
        for name, text in (("stdout", stdout), ("stderr", stderr)):
            lines = [ln for ln in text.strip().splitlines() if ln.strip()]
            for ln in lines[-3:]:
                evidence.append(f"- CONFIRMED: {name} line: {json.dumps(_one_line(ln), ensure_ascii=False)}")
            if not lines:
                evidence.append(f"- CONFIRMED: {name} was empty")
        evidence.append("- UNKNOWN: whether the objective is met; the dispatcher's validator decides")
        report = "\n".join(
            [
                f"DECISION: the command {what}",
                "WHY: the probe adapter ran the task's command itself and reports only what it saw.",
                "EVIDENCE:",
                *evidence,
                "MISSING: judgement about the objective: the probe runs a command, it does not reason.",
                "NEXT COMMAND: control-room status",
                "STOP RULE: stop when the validator passes, or when the task is parked after max_rounds.",
            ]
        )
        ok = result.exit_code == 0
        return Outcome(
            ok=ok,
            final_message=report + "\n",
            error=None if ok else (killed(result) if result.timed_out else f"command {what}"),
            extra={"answer": stdout},
        )


def _shown(path: Path) -> str:
    """Where a capture is, as a reader of the room finds it: ``swarm/results/ID/stdout.txt``
    (the run's own folder, so the task's id), else the path as it is."""
    parts = path.parts
    if len(parts) >= 4 and parts[-4:-2] == ("swarm", "results"):
        return "/".join(parts[-4:])
    return str(path)


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 200 else text[:197] + "..."
