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

from control_room.plain import Frozen

RATE_LIMIT = "rate-limit"  # too many requests, or a plan's usage limit (resets at a time)
QUOTA = "quota"  # credit, billing or quota exhausted: waits for a person, or the month's reset
OVERLOADED = "overloaded"  # 529, 503: the service is busy
AUTH = "auth"  # the key or the login was refused
CONTEXT = "context"  # the brief is too big for the model's window: the task's fault
KINDS = (RATE_LIMIT, QUOTA, OVERLOADED, AUTH, CONTEXT)
PROVIDERS = (RATE_LIMIT, QUOTA, OVERLOADED, AUTH)  # the kinds that are never the task's


class Fault(Frozen):
    """A provider's refusal, as a run's output told it."""

    __slots__ = ("detail", "kind", "reset_at")

    def __init__(self, kind: str, detail: str, reset_at: float | None = None) -> None:
        self.kind = kind  # one of KINDS
        self.detail = detail  # the CLI's own words, one line
        self.reset_at = reset_at  # when the provider said it resets (epoch seconds), if it did

    def is_providers(self) -> bool:
        return self.kind in PROVIDERS


def _code(n: int) -> str:
    """An HTTP status where the text says it is one ("API Error: 429", "status 503", "HTTP/1.1
    401"): never a bare number, which a failing test's output is full of."""
    return rf"(?:https?|status|error|code)\W{{0,12}}(?:\d\.\d\s)?{n}\b"


# Most specific first: a 429 body that says "quota" is a quota; a 529 that says "try again in a
# moment" is an overload.
_PATTERNS: tuple[tuple[str, str], ...] = (  # searched with re.I, compiled on first use
    (
        CONTEXT,
        (
            r"context[_ ]length[_ ]exceeded|maximum context length|context window|prompt is too long|"
            r"input is too long|too many tokens|exceeds? the (?:model's )?(?:context|token limit)|"
            r"input token count .* exceeds"
        ),
    ),
    (
        QUOTA,
        (
            r"insufficient[_ ]quota|quota (?:exceeded|exhausted)|exceeded your (?:current )?quota|"
            r"credit balance is too low|billing|payment required|" + _code(402) + r"|out of credits|"
            r"resource[_ ]exhausted"
        ),
    ),
    (
        OVERLOADED,
        (
            r"overloaded|"
            + _code(529)
            + "|"
            + _code(503)
            + r"|service unavailable|server is busy|(?:at|over) capacity"
        ),
    ),
    (
        RATE_LIMIT,
        (
            r"rate[_ -]?limit|usage limit|too many requests|" + _code(429) + r"|try again (?:in|after) \d|"
            r"retry[_ -]after"
        ),
    ),
    (
        AUTH,
        (
            r"invalid[_ ]api[_ ]key|invalid x-api-key|authentication[_ ]error|unauthori[sz]ed|"
            + _code(401)
            + r"|"
            r"not logged in|please (?:run /)?login|api key not valid|permission[_ ]denied.*api"
        ),
    ),
)

_UNITS = {"s": 1, "sec": 1, "second": 1, "m": 60, "min": 60, "minute": 60, "h": 3600, "hour": 3600}
# Patterns as text, searched with re.I and compiled on first use (``re`` keeps them): a cycle
# imports this module, and only a failed run reads its words.
_IN = r"(?:try again|retry|resets?|available again)\s*(?:in|after)\s*:?\s*((?:\d+(?:\.\d+)?\s*[a-z]*\s*)+)"
_RETRY_AFTER = r"retry[_-]after\"?\s*[:=]\s*\"?(\d+(?:\.\d+)?)"
_PART = r"(\d+(?:\.\d+)?)\s*(h|hours?|m|mins?|minutes?|s|secs?|seconds?)?(?![a-z])"  # 10h17m5.7s
_EPOCH = r"(?:limit reached|reset[s_]?(?: at)?)\s*[|:=]?\s*(1[6-9]\d{8})\b"
_ISO = r"reset[s]?(?: at)?\s*:?\s*(\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)?)"
_CLOCK = r"resets?(?: at)?\s+(\d{1,2})(?::(\d\d))?\s*(am|pm)?\b"


def recognise(text: str, now: float | None = None) -> Fault | None:
    """The fault ``text`` (a failed CLI's own error words) describes, with the reset time where
    it gives one; None when it names none."""
    for kind, pattern in _PATTERNS:
        found = re.search(pattern, text, re.I)
        if found is not None:
            return Fault(kind, _line_of(text, found.start()), reset_time(text, now))
    return None


# A provider's HTTP status, where a CLI passes it on in a field of its own (claude's
# ``api_error_status``, gemini's ``error.code``, copilot's ``statusCode``, opencode's).
_BY_STATUS = {429: RATE_LIMIT, 529: OVERLOADED, 503: OVERLOADED, 401: AUTH, 403: AUTH, 402: QUOTA}


def from_status(status: int | None, words: str, now: float | None = None) -> Fault | None:
    """The fault a provider's HTTP ``status`` and its error's ``words`` say together. The status
    decides where it is one of a fault's (a 529 that says "try again in a moment" is an
    overload), except that a 429 whose words say quota and give no retry delay is a quota; any
    other status (a 400) is read by its words alone ("prompt is too long", "credit balance")."""
    said = recognise(words, now)
    kind = _BY_STATUS.get(status) if status is not None else None
    if kind is None:
        return said
    reset = reset_time(words, now)
    if kind == RATE_LIMIT and said is not None and said.kind == QUOTA and reset is None:
        kind = QUOTA
    detail = " ".join(f"API error {status}: {words}".split())[:200]
    return Fault(kind, detail, reset if kind in (RATE_LIMIT, QUOTA) else None)


def reset_time(text: str, now: float | None = None) -> float | None:
    """When ``text`` says the limit resets (epoch seconds): "try again in 20s", "retry-after: 30",
    "resets at 2026-12-04T17:00Z", "usage limit reached|1764867600", "resets 5pm" (this
    machine's local time, the next such hour); None when it says no time."""
    now = time.time() if now is None else now
    if m := re.search(_EPOCH, text, re.I):
        return float(m.group(1))
    if m := re.search(_ISO, text, re.I):
        return _iso(m.group(1))
    if m := re.search(_RETRY_AFTER, text, re.I):
        return now + float(m.group(1))
    if m := re.search(_IN, text, re.I):
        seconds = _duration(m.group(1))
        if seconds is not None:
            return now + seconds
    if m := re.search(_CLOCK, text, re.I):
        return _next_clock(int(m.group(1)), int(m.group(2) or 0), (m.group(3) or "").lower(), now)
    return None


def _line_of(text: str, at: int) -> str:
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    line = " ".join(text[start : end if end >= 0 else len(text)].split())
    return line[:200]


def _duration(words: str) -> float | None:
    total, seen = 0.0, False
    for number, unit in re.findall(_PART, words, re.I):
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
