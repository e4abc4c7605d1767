"""Reading what a CLI printed: its JSON lines, its last JSON object, its last line, a number
from a field that may hold anything. An agent's output is untrusted: every helper takes any
text and never raises."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any


def as_object(line: str) -> dict[str, Any] | None:
    """The JSON object ``line`` (stripped) is, else None."""
    if not line.startswith("{"):
        return None
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


def json_lines(text: str) -> Iterator[dict[str, Any]]:
    """Each line of ``text`` that is a JSON object; other lines are skipped."""
    for line in text.splitlines():
        obj = as_object(line.strip())
        if obj is not None:
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


def last_line(text: str, skip: tuple[str, ...] = ()) -> str:
    """The last non-blank line of ``text`` that starts with none of ``skip``, on one line, cut
    at 200 characters."""
    for line in reversed(text.splitlines()):
        line = " ".join(line.split())
        if line and not line.startswith(skip):
            return line[:200]
    return ""


def as_int(v: object) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def as_float(v: object) -> float | None:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        try:
            f = float(v)
        except OverflowError:  # an int beyond any float
            return None
        return f if math.isfinite(f) else None
    return None
