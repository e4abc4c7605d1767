"""Time in one format (UTC, ISO 8601, seconds) and durations like ``30m``."""

from __future__ import annotations

import re
import time

_DURATION = r"(\d+(?:\.\d+)?)(?:\s*(ms|s|m|h|d))?"  # compiled on first use: few commands parse one
_UNIT = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, None: 1}


_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
_said: tuple[int, str] = (-1, "")  # the current second and how it is written: one strftime a second


def now_iso(t: float | None = None) -> str:
    global _said
    if t is not None:
        return time.strftime(_FORMAT, time.gmtime(t))
    second, said = int(time.time()), _said  # one read of _said: another thread may replace it
    if said[0] != second:
        said = _said = (second, time.strftime(_FORMAT, time.gmtime(second)))
    return said[1]


def parse_iso(text: str) -> float:
    """Seconds since the epoch of a time ``now_iso`` wrote (``2026-01-31T12:00:00Z``, UTC);
    ValueError for anything else."""
    import calendar  # small; only where a written time is read back

    return float(calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%SZ")))


def today() -> str:
    return now_iso()[:10]


def parse_duration(text: str, *, zero: bool = False) -> float:
    """Seconds in ``text``: ``90``, ``90s``, ``30m``, ``1h``, ``1h30m``, ``1h 30m``; ``0`` only
    where ``zero`` allows it. Raises ValueError."""
    s = text.strip().lower()
    pos, total = 0, 0.0
    while pos < len(s):
        m = re.compile(_DURATION).match(s, pos)
        if not m or m.end() == pos:
            raise ValueError(f"not a duration: {text!r} (try 90, 90s, 30m, 1h)")
        total += float(m.group(1)) * _UNIT[m.group(2)]
        pos = m.end()
        if m.group(2):  # "1h 30m": a space may follow a unit (never a bare number: "1 20")
            while pos < len(s) and s[pos] == " ":
                pos += 1
    if not s or total < 0 or (total == 0 and not zero):
        raise ValueError(f"not a positive duration: {text!r} (try 90, 90s, 30m, 1h)")
    return total
