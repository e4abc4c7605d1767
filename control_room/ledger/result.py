"""The detail of a ``result`` ledger line, in one place: written by the runner, read back by
the digest and findings.

    round 1; agent exit 0 in 1.2s; report ok; validator passed; prompt 9 KB ...; decision: <DECISION>
    ...; decision: <DECISION>; failed: <what failed>
"""

from __future__ import annotations

import re

_TAIL = re.compile(r"(?:^|; )decision: (?P<decision>.*?)(?:; failed: (?P<failed>.*))?$", re.S)
_FAILED_ONLY = re.compile(r"(?:^|; )failed: (?P<failed>.*)$", re.S)
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def detail(summary: str, decision: str, failed: str = "") -> str:
    parts = [p for p in (summary, f"decision: {' '.join(decision.split()) or '(none)'}") if p]
    if failed:
        parts.append(f"failed: {failed}")
    return "; ".join(parts)


def parse(text: str) -> tuple[str, str]:
    """(decision, what failed) of a result line's detail; empty strings where absent."""
    m = _TAIL.search(text)
    if m:
        return m.group("decision"), m.group("failed") or ""
    m = _FAILED_ONLY.search(text)
    return "", m.group("failed") if m else ""


def cause(text: str) -> str:
    """A failure or decision reduced to its shape, so that repeats compare equal: numbers become
    N, whitespace is collapsed, the length is bounded."""
    return " ".join(_NUMBER.sub("N", text).split())[:160]
