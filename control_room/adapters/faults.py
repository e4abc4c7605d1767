"""Provider faults: the CLI failed because its provider refused, not because the task did.

A rate or usage limit, an exhausted quota or billing, an overloaded service and a refused login
are the provider's (or the person's set-up's) fault: they charge the task no round, and the
adapter cools down until the provider's reset time (docs/faults.md). A context window exceeded
is the task's: it is too big for one brief.

Only what the CLI itself says counts: its exit code, its stderr and its structured error
fields, read when the run failed. An agent's own words (a successful run's answer, the
``command`` and ``probe`` adapters' output, which the task's program prints) are never read for
a fault: a task could otherwise dodge its failed rounds by printing "rate limit".

``recognise`` knows the wording every vendor uses; an adapter whose CLI reports faults in a
structure of its own overrides ``Adapter.fault``.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

RATE_LIMIT = "rate-limit"  # too many requests, or a plan's usage limit (resets at a time)
QUOTA = "quota"  # credit, billing or quota exhausted: waits for a person, or the month's reset
OVERLOADED = "overloaded"  # 529, 503: the service is busy
AUTH = "auth"  # the key or the login was refused
CONTEXT = "context"  # the brief is too big for the model's window: the task's fault
KINDS = (RATE_LIMIT, QUOTA, OVERLOADED, AUTH, CONTEXT)
PROVIDERS = (RATE_LIMIT, QUOTA, OVERLOADED, AUTH)  # the kinds that are never the task's


@dataclass(frozen=True)
class Fault:
    kind: str  # one of KINDS
    detail: str  # the CLI's own words, one line
    reset_at: float | None = None  # when the provider said it resets (epoch seconds), if it did

    def is_providers(self) -> bool:
        return self.kind in PROVIDERS


def _code(n: int) -> str:
    """An HTTP status where the text says it is one ("API Error: 429", "status 503", "HTTP/1.1
    401"): never a bare number, which a failing test's output is full of."""
    return rf"(?:https?|status|error|code)\W{{0,12}}(?:\d\.\d\s)?{n}\b"


# Most specific first: a 429 body that says "quota" is a quota.
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        CONTEXT,
        re.compile(
            r"context[_ ]length[_ ]exceeded|maximum context length|context window|prompt is too long|"
            r"input is too long|too many tokens|exceeds? the (?:model's )?(?:context|token limit)|"
            r"input token count .* exceeds",
            re.I,
        ),
    ),
    (
        QUOTA,
        re.compile(
            r"insufficient[_ ]quota|quota (?:exceeded|exhausted)|exceeded your (?:current )?quota|"
            r"credit balance is too low|billing|payment required|" + _code(402) + r"|out of credits|"
            r"resource[_ ]exhausted",
            re.I,
        ),
    ),
    (
        RATE_LIMIT,
        re.compile(
            r"rate[_ -]?limit|usage limit|too many requests|" + _code(429) + r"|try again (?:in|after)|"
            r"retry[_ -]after",
            re.I,
        ),
    ),
    (
        OVERLOADED,
        re.compile(
            r"overloaded|"
            + _code(529)
            + "|"
            + _code(503)
            + r"|service unavailable|server is busy|(?:at|over) capacity",
            re.I,
        ),
    ),
    (
        AUTH,
        re.compile(
            r"invalid[_ ]api[_ ]key|invalid x-api-key|authentication[_ ]error|unauthori[sz]ed|"
            + _code(401)
            + r"|"
            r"not logged in|please (?:run /)?login|api key not valid|permission[_ ]denied.*api",
            re.I,
        ),
    ),
)

_UNITS = {"s": 1, "sec": 1, "second": 1, "m": 60, "min": 60, "minute": 60, "h": 3600, "hour": 3600}
_IN = re.compile(
    r"(?:try again|retry|resets?|available again)\s*(?:in|after)\s*:?\s*((?:\d+(?:\.\d+)?\s*[a-z]*\s*)+)",
    re.I,
)
_RETRY_AFTER = re.compile(r"retry[_-]after\"?\s*[:=]\s*\"?(\d+(?:\.\d+)?)", re.I)
_PART = re.compile(r"(\d+(?:\.\d+)?)\s*(h|hours?|m|mins?|minutes?|s|secs?|seconds?)?\b", re.I)
_EPOCH = re.compile(r"(?:limit reached|reset[s_]?(?: at)?)\s*[|:=]?\s*(1[6-9]\d{8})\b", re.I)
_ISO = re.compile(
    r"reset[s]?(?: at)?\s*:?\s*(\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)?)", re.I
)
_CLOCK = re.compile(r"resets?(?: at)?\s+(\d{1,2})(?::(\d\d))?\s*(am|pm)?\b", re.I)


def recognise(text: str, now: float | None = None) -> Fault | None:
    """The fault ``text`` (a failed CLI's own error words) describes, with the reset time where
    it gives one; None when it names none."""
    for kind, pattern in _PATTERNS:
        found = pattern.search(text)
        if found is not None:
            return Fault(kind, _line_of(text, found.start()), reset_time(text, now))
    return None


def reset_time(text: str, now: float | None = None) -> float | None:
    """When ``text`` says the limit resets (epoch seconds): "try again in 20s", "retry-after: 30",
    "resets at 2026-12-04T17:00Z", "usage limit reached|1764867600", "resets 5pm" (this
    machine's local time, the next such hour); None when it says no time."""
    now = time.time() if now is None else now
    if m := _EPOCH.search(text):
        return float(m.group(1))
    if m := _ISO.search(text):
        return _iso(m.group(1))
    if m := _RETRY_AFTER.search(text):
        return now + float(m.group(1))
    if m := _IN.search(text):
        seconds = _duration(m.group(1))
        if seconds is not None:
            return now + seconds
    if m := _CLOCK.search(text):
        return _next_clock(int(m.group(1)), int(m.group(2) or 0), (m.group(3) or "").lower(), now)
    return None


def _line_of(text: str, at: int) -> str:
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    line = " ".join(text[start : end if end >= 0 else len(text)].split())
    return line[:200]


def _duration(words: str) -> float | None:
    total, seen = 0.0, False
    for number, unit in _PART.findall(words):
        seen = True
        key = (unit or "s").lower().rstrip("s") or "s"
        total += float(number) * _UNITS.get(key, _UNITS.get(key[:1], 1))
    return total if seen else None


def _iso(stamp: str) -> float | None:
    from datetime import datetime  # only for a fault that gives a date

    try:  # without a zone: this machine's local time, as the CLI printed it
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _next_clock(hour: int, minute: int, half: str, now: float) -> float | None:
    if half == "pm" and hour < 12:
        hour += 12
    elif half == "am" and hour == 12:
        hour = 0
    if not (0 <= hour < 24 and 0 <= minute < 60):
        return None
    local = time.localtime(now)
    at = time.mktime((local.tm_year, local.tm_mon, local.tm_mday, hour, minute, 0, 0, 0, -1))
    return at if at > now else at + 86400
