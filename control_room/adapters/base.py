"""The adapter contract: what every agent CLI adapter declares and the one method it writes.

An adapter turns an ``Invocation`` (the task, its prompt, the work dir, the model) into an argv
list, says how the prompt goes in (stdin, or a short argument pointing at the brief file the
CLI reads itself: never the prompt itself as an argument), and reads the CLI's output back into
an ``Outcome``. It never runs anything itself: the cycle runs the argv through ``proc.run``.
No adapter ever adds a permission-bypass flag; ``bypass_flags`` only documents them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:  # proc imports subprocess and threading: only a cycle needs them
    from control_room.proc import Result

POINTER = (
    "Your full instructions are in the file {brief}. Read that file now and follow it exactly; "
    "end your answer with the report it asks for."
)


@dataclass
class Invocation:
    task: dict[str, Any]
    prompt: str
    brief: Path  # the prompt, written into the work dir
    workdir: Path
    model: str | None = None
    extra_args: list[str] = field(default_factory=list)
    settings: Mapping[str, Any] = field(default_factory=dict)  # CONTROL.md + role front matter


@dataclass
class Outcome:
    ok: bool  # the CLI did its job (not: the task passed; the validator decides that)
    final_message: str  # where the report is looked for
    error: str | None = None  # one line: what went wrong
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class Adapter:
    name: ClassVar[str]
    binary: ClassVar[str | None]  # the executable looked up on PATH; None: none needed
    prompt_via: ClassVar[str] = "stdin"  # "stdin" or "file" (POINTER as an argument)
    bypass_flags: ClassVar[tuple[str, ...]] = ()  # documented; never added by the adapter
    context_window: ClassVar[int] = 200_000  # tokens, for the context-pressure figure
    install: ClassVar[str] = ""  # how a person installs the CLI
    exit_codes: ClassVar[dict[int, str]] = {0: "ok"}

    def command(self, inv: Invocation) -> list[str]:
        raise NotImplementedError

    def executable(self, inv: Invocation) -> str | None:
        """The program that must be on PATH for this invocation."""
        return self.binary

    def stdin(self, inv: Invocation) -> bytes | None:
        return inv.prompt.encode("utf-8") if self.prompt_via == "stdin" else None

    def pointer(self, inv: Invocation) -> str:
        return POINTER.format(brief=inv.brief)

    def env(self, inv: Invocation, env: dict[str, str]) -> dict[str, str]:
        return env

    def read(self, result: Result, stdout: str, stderr: str) -> Outcome:
        """Default: the final message is stdout; the exit code says whether it worked."""
        return Outcome(
            ok=result.exit_code == 0,
            final_message=stdout,
            error=None if result.exit_code == 0 else self.explain(result, stderr),
        )

    def explain(self, result: Result, stderr: str) -> str:
        code = result.exit_code
        meaning = self.exit_codes.get(code, "error") if code is not None else "killed"
        last = stderr.strip().splitlines()[-1:] or [""]
        return f"{self.name} exited {code} ({meaning}){': ' + last[0][:200] if last[0] else ''}"

    def with_model(self, flag: str, inv: Invocation) -> list[str]:
        return [flag, inv.model] if inv.model else []


def json_lines(text: str) -> Iterator[dict[str, Any]]:
    """Each line of ``text`` that is a JSON object; other lines are skipped."""
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                obj = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if isinstance(obj, dict):
                yield obj


def last_json(text: str) -> dict[str, Any] | None:
    """The whole of ``text`` as one JSON object, else its last JSON-object line."""
    try:
        obj = json.loads(text)
        if isinstance(obj, dict):
            return obj
    except (ValueError, RecursionError):
        pass
    found = None
    for obj in json_lines(text):
        found = obj
    return found


def as_int(v: object) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def as_float(v: object) -> float | None:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    return None
