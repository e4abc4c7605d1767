"""The detail of a ``result`` ledger line, in one place: written by the runner, read back by
the digest and findings.

Since 0.2 the detail is one JSON object, so no free text can be mistaken for a field::

    {"round": 1, "exit": 0, "seconds": 0.1, "report": "ok", "validator": "passed",
     "decision": "the command exited 0"}

with ``"failed"`` (what failed, for the next brief and death loops) on a failed run and
``"unsupported": true`` when the report claimed CONFIRMED success the validator did not bear
out. Since 0.3 it also names the ``"model"`` and the ``"role"`` the run used and, where the
adapter reports them, ``"input_tokens"`` and ``"output_tokens"`` (the scorecard reads them); a
line without them reads as an unknown model and role and no token counts. A review's or an
arbiter's run names the task it serves (``"serves"``): it is counted apart from the route's own
runs. Texts are cut
(``DECISION_MAX``, ``FAILED_MAX``) so a line stays readable with ``cat``; the whole of them
is in the run's ``swarm/results/<task>/meta.json``.

Lines written before 0.2 (``round 1; ...; decision: <text>; failed: <text>``) are still read,
with the pattern they were written in.
"""

from __future__ import annotations

import functools
import math
import re

DECISION_MAX = 160
FAILED_MAX = 240
TOO_BIG = "context window exceeded"  # how the failure of a run that overflowed its window starts
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


@functools.cache
def _legacy() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The patterns of the pre-0.2 form, compiled once, on the first old line read."""
    tail = re.compile(r"(?:^|; )decision: (?P<decision>.*?)(?:; failed: (?P<failed>.*))?$", re.DOTALL)
    return tail, re.compile(r"(?:^|; )failed: (?P<failed>.*)$", re.DOTALL)


def cut(text: str, limit: int = FAILED_MAX) -> str:
    """``text`` on one line, at most ``limit`` characters (the rest is in the run's results)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class RunResult:
    """What a ``result`` line says about a run."""

    __slots__ = (
        "decision",
        "estimated",
        "exit",
        "failed",
        "fingerprint",
        "input_tokens",
        "metrics",
        "model",
        "output_tokens",
        "report",
        "role",
        "round",
        "seconds",
        "serves",
        "unsupported",
        "validator",
    )

    def __init__(
        self,
        decision: str = "",
        failed: str = "",
        unsupported: bool = False,
        round: int = 0,
        exit: int | None = None,
        seconds: float = 0.0,
        report: str = "",  # ok | broken
        validator: str = "",  # passed | exited N | timed out | could not start
        model: str = "",  # "": not recorded (before 0.3); "default": the CLI's own default
        role: str = "",  # "": not recorded (a line written before 0.3)
        input_tokens: int | None = None,  # None: not reported
        output_tokens: int | None = None,
        metrics: dict[str, float] | None = None,  # `METRIC name=value` lines of the validator
        serves: str = "",  # a review's or an arbiter's run: the task it reviews ("": an own run)
        fingerprint: str = "",  # a failed round's: its change and its failure's shape (``fingerprint``)
        estimated: bool = False,  # its cost is an estimate from tokens and CONTROL.md prices:
    ) -> None:
        self.decision, self.failed, self.unsupported = decision, failed, unsupported
        self.round, self.exit, self.seconds = round, exit, seconds
        self.report, self.validator = report, validator
        self.model, self.role = model, role
        self.input_tokens, self.output_tokens = input_tokens, output_tokens
        self.metrics = metrics or {}
        self.serves, self.fingerprint, self.estimated = serves, fingerprint, estimated

    def detail(self) -> str:
        """The detail cell: a short JSON object."""
        import json  # ~2 ms: `status` reads no result line unless the ledger grew

        data: dict[str, object] = {
            "round": self.round,
            "exit": self.exit,
            "seconds": round(self.seconds, 1),
            "report": self.report,
            "validator": self.validator,
        }
        if self.unsupported:
            data["unsupported"] = True
        if self.model:
            data["model"] = self.model
        if self.role:
            data["role"] = self.role
        if self.serves:
            data["serves"] = self.serves
        if self.input_tokens is not None:
            data["input_tokens"] = self.input_tokens
        if self.output_tokens is not None:
            data["output_tokens"] = self.output_tokens
        if self.metrics:
            data["metrics"] = self.metrics
        if self.fingerprint:
            data["fingerprint"] = self.fingerprint
        if self.estimated:
            data["cost"] = "estimated"
        data["decision"] = cut(self.decision, DECISION_MAX) or "(none)"
        if self.failed:
            data["failed"] = cut(self.failed, FAILED_MAX)
        return json.dumps(data, ensure_ascii=False, separators=(", ", ": "))


_PATH = r"(?:[A-Za-z]:)?[\\/][^\s:'\"()\[\],;]+"  # an absolute path (a run's own tmp dir, its results)


def fingerprint(failed: str, change: str) -> str:
    """What a failed round did and how it failed, in 16 hex digits: the hash of its change (the
    work dir's diff; "" without one) and of its failure's shape (numbers as ``N``, absolute paths
    as ``<path>``: ``cause``). Two rounds with the same fingerprint made no progress."""
    import hashlib  # only where a round failed
    import re  # likewise

    shape = cause(re.sub(_PATH, "<path>", failed))
    diff = hashlib.sha256(change.encode("utf-8", "replace")).hexdigest()
    return hashlib.sha256(f"{diff}\0{shape}".encode()).hexdigest()[:16]


def for_people(detail: str) -> str:
    """A result line's detail for ``status`` and ``ledger tail``: its fields without the JSON
    punctuation (``round: 1, report: ok, ...``). Costs no JSON parser: a view of the text."""
    if not (detail.startswith("{") and detail.endswith("}")):
        return detail
    return detail[1:-1].replace('\\"', "'").replace('"', "")


def read(detail: str) -> RunResult:
    """The run a result line's detail describes; never raises (an unknown shape reads as empty)."""
    if detail.startswith("{"):
        import json  # see RunResult.detail

        try:
            data = json.loads(detail)
        except (ValueError, RecursionError):
            return RunResult()
        if not isinstance(data, dict):
            return RunResult()
        exit_code, rounds, seconds = data.get("exit"), data.get("round"), data.get("seconds")
        return RunResult(
            decision=str(data.get("decision") or ""),
            failed=str(data.get("failed") or ""),
            unsupported=data.get("unsupported") is True,
            round=rounds if isinstance(rounds, int) and not isinstance(rounds, bool) else 0,
            exit=exit_code if isinstance(exit_code, int) and not isinstance(exit_code, bool) else None,
            seconds=_number(seconds) or 0.0,
            report=str(data.get("report") or ""),
            validator=str(data.get("validator") or ""),
            model=str(data.get("model") or ""),
            role=str(data.get("role") or ""),
            serves=str(data.get("serves") or ""),
            input_tokens=_count(data.get("input_tokens")),
            output_tokens=_count(data.get("output_tokens")),
            metrics=_metrics(data.get("metrics")),
            fingerprint=str(data.get("fingerprint") or ""),
            estimated=data.get("cost") == "estimated",
        )
    tail, failed_only = _legacy()
    m = tail.search(detail)
    if m:
        return RunResult(m.group("decision"), m.group("failed") or "")
    m = failed_only.search(detail)
    return RunResult("", m.group("failed") if m else "")


def _metrics(value: object) -> dict[str, float]:
    if not isinstance(value, dict):
        return {}
    return {str(k): n for k, v in value.items() if (n := _number(v)) is not None}


def _number(value: object) -> float | None:
    """``value`` as a finite float, or None: a line edited by hand may hold ``true``, ``NaN``
    or a 400-digit integer, which no float holds (``float()`` raises on it)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        n = float(value)
    except OverflowError:
        return None
    return n if math.isfinite(n) else None


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def cause(text: str) -> str:
    """A failure or decision reduced to its shape, so that repeats compare equal: numbers become
    N, whitespace is collapsed, the length is bounded."""
    return " ".join(_NUMBER.sub("N", text).split())[:160]
