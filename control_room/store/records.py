"""JSON files: task files, claim files, a run's meta.json.

``read`` says what is wrong with a broken file in one line (``not valid JSON: ... (line L
column C)``) and never raises anything else for bad content; the caller names the file.
"""

from __future__ import annotations

import json
import os
from json.encoder import encode_basestring  # the C one where there is one (``ensure_ascii=False``)
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


def read_object_kept(path: Path) -> dict[str, Any] | None:
    """``read_object``, parsed again only when the file changed (mtime, size, inode): for a
    file replaced whole whenever it is written and read over and over (claims, running tasks,
    which each of eight racing loops reads every cycle). A copy each time; a file that reads as
    no object is not kept."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    key = (st.st_mtime_ns, st.st_size, st.st_ino)
    hit = _KEPT.get(path)
    if hit is not None and hit[0] == key:
        return dict(hit[1])
    data = read_object(path)
    if data is not None:
        if len(_KEPT) > 512:
            _KEPT.clear()
        _KEPT[path] = (key, dict(data))
    return data


_KEPT: dict[Path, tuple[tuple[int, int, int], dict[str, Any]]] = {}


def dumps(data: Any) -> str:
    """``data`` as ``json.dumps(data, indent=2, ensure_ascii=False)`` writes it, and a newline.
    Written here because ``json`` encodes indented text in pure Python, generators and all: a
    cycle writes six such files, and this takes a third of the time (``tests/store/test_records.py``
    checks the two agree)."""
    return _indented(data, "\n") + "\n"


def _indented(v: Any, nl: str) -> str:
    """One value at the indentation ``nl`` (a newline and the spaces of its line)."""
    if isinstance(v, str):
        return encode_basestring(v)
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return int.__repr__(v)
    if isinstance(v, float):
        return _float(v)
    inner = nl + "  "
    if isinstance(v, dict):
        if not v:
            return "{}"
        items = (f"{_key(k)}: {_indented(x, inner)}" for k, x in v.items())
        return "{" + inner + ("," + inner).join(items) + nl + "}"
    if isinstance(v, (list, tuple)):
        if not v:
            return "[]"
        return "[" + inner + ("," + inner).join(_indented(x, inner) for x in v) + nl + "]"
    raise TypeError(f"Object of type {type(v).__name__} is not JSON serializable")


def _float(v: float) -> str:
    if v != v:
        return "NaN"
    if v in (float("inf"), float("-inf")):
        return "Infinity" if v > 0 else "-Infinity"
    return float.__repr__(v)


def _key(k: Any) -> str:
    """A key as ``json`` writes it: a string, or a number, a boolean or null made one."""
    if isinstance(k, str):
        return encode_basestring(k)
    if k is None or isinstance(k, (int, float)):  # (a bool is an int)
        return f'"{_indented(k, "")}"'
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(k).__name__}")


def write(path: Path, data: Any, *, durable: bool = True) -> None:
    """Write ``data`` as indented JSON, atomically (``durable``: as ``atomic_write``'s)."""
    atomic_write(path, dumps(data), durable=durable)
