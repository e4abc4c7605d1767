"""The detail of a ``result`` ledger line, in one place: written by the runner, read back by
the digest and findings.

Since 0.2 the detail is one JSON object, so no free text can be mistaken for a field::

    {"round": 1, "exit": 0, "seconds": 0.1, "report": "ok", "validator": "passed",
     "decision": "the command exited 0"}

with ``"failed"`` (what failed, for the next brief and death loops) on a failed run and
``"unsupported": true`` when the report claimed CONFIRMED success the validator did not bear
out. Texts are cut (``DECISION_MAX``, ``FAILED_MAX``) so a line stays readable with ``cat``;
the whole of them is in the run's ``swarm/results/<task>/meta.json``.

Lines written before 0.2 (``round 1; ...; decision: <text>; failed: <text>``) are still read,
with the pattern they were written in.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

DECISION_MAX = 160
FAILED_MAX = 240
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_LEGACY_TAIL = re.compile(r"(?:^|; )decision: (?P<decision>.*?)(?:; failed: (?P<failed>.*))?$", re.S)
_LEGACY_FAILED = re.compile(r"(?:^|; )failed: (?P<failed>.*)$", re.S)


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass(frozen=True)
class RunResult:
    """What a ``result`` line says about a run."""

    decision: str = ""
    failed: str = ""
    unsupported: bool = False
    round: int = 0
    exit: int | None = None
    seconds: float = 0.0
    report: str = ""  # ok | broken
    validator: str = ""  # passed | exited N | timed out | could not start

    def detail(self) -> str:
        """The detail cell: a short JSON object."""
        data: dict[str, object] = {
            "round": self.round,
            "exit": self.exit,
            "seconds": round(self.seconds, 1),
            "report": self.report,
            "validator": self.validator,
            "decision": _cut(self.decision, DECISION_MAX) or "(none)",
        }
        if self.failed:
            data["failed"] = _cut(self.failed, FAILED_MAX)
        if self.unsupported:
            data["unsupported"] = True
        return json.dumps(data, ensure_ascii=False, separators=(", ", ": "))


def for_people(detail: str) -> str:
    """A result line's detail in words, for ``status`` and ``ledger tail``."""
    if not detail.startswith("{"):
        return detail
    run = read(detail)
    text = f"round {run.round}; report {run.report or '?'}; validator {run.validator or '?'}; decision: {run.decision}"
    if run.failed:
        text += f"; failed: {run.failed}"
    return text + ("; UNSUPPORTED CLAIM" if run.unsupported else "")


def read(detail: str) -> RunResult:
    """The run a result line's detail describes; never raises (an unknown shape reads as empty)."""
    if detail.startswith("{"):
        try:
            data = json.loads(detail)
        except (ValueError, RecursionError):
            return RunResult()
        if not isinstance(data, dict):
            return RunResult()
        exit_code = data.get("exit")
        return RunResult(
            decision=str(data.get("decision") or ""),
            failed=str(data.get("failed") or ""),
            unsupported=data.get("unsupported") is True,
            round=data["round"] if isinstance(data.get("round"), int) else 0,
            exit=exit_code if isinstance(exit_code, int) else None,
            report=str(data.get("report") or ""),
            validator=str(data.get("validator") or ""),
        )
    m = _LEGACY_TAIL.search(detail)
    if m:
        return RunResult(decision=m.group("decision"), failed=m.group("failed") or "")
    m = _LEGACY_FAILED.search(detail)
    return RunResult(failed=m.group("failed") if m else "")


def cause(text: str) -> str:
    """A failure or decision reduced to its shape, so that repeats compare equal: numbers become
    N, whitespace is collapsed, the length is bounded."""
    return " ".join(_NUMBER.sub("N", text).split())[:160]
