"""JSON files: task files, claim files, a run's meta.json.

``read`` says what is wrong with a broken file in one line (``not valid JSON: ... (line L
column C)``) and never raises anything else for bad content; the caller names the file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from control_room.errors import InvalidError
from control_room.store.files import atomic_write, read_bytes

MAX_BYTES = 1 << 20


def parse(raw: bytes | str) -> Any:
    """The JSON value in ``raw``; an ``InvalidError`` saying what is wrong and where."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError as exc:
        raise InvalidError(f"not UTF-8 text (byte {exc.start})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidError(f"not valid JSON: {exc.msg} (line {exc.lineno} column {exc.colno})") from None
    except RecursionError:
        raise InvalidError("not valid JSON: nested too deeply") from None
    except ValueError:  # Python's limit on the digits of an integer (4300 by default)
        raise InvalidError("not valid JSON: a number with too many digits") from None


def head(path: Path | str, max_bytes: int = MAX_BYTES) -> bytes:
    """The bytes of the file at ``path``, at most ``max_bytes + 1`` of them: enough to tell a
    file that is too big. ``OSError`` when it cannot be read."""
    return read_bytes(path, max_bytes + 1)


def read(path: Path, max_bytes: int = MAX_BYTES) -> Any:
    """The JSON value in the file at ``path``. ``OSError`` when it cannot be read; an
    ``InvalidError`` when it is too big or not JSON."""
    raw = head(path, max_bytes)
    if len(raw) > max_bytes:
        raise InvalidError(f"larger than {max_bytes} bytes")
    return parse(raw)


def read_object(path: Path) -> dict[str, Any] | None:
    """The JSON object in ``path``, or None when it is missing, unreadable or not an object."""
    try:
        data = read(path)
    except (OSError, InvalidError):
        return None
    return data if isinstance(data, dict) else None


def dumps(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def write(path: Path, data: Any, *, durable: bool = True) -> None:
    """Write ``data`` as indented JSON, atomically (``durable``: as ``atomic_write``'s)."""
    atomic_write(path, dumps(data), durable=durable)
