"""Secrets never land in the room: the value of every variable of this process's environment
that looks secret is replaced by ``[redacted:NAME]`` in what the room writes or shows.

A variable looks secret when its name holds KEY, TOKEN, SECRET, PASSWORD, PASSWD or CREDENTIAL
(a name ending in _FILE, _DIR, _PATH, _HOME or _SOCK names a place, not a secret), or when an
adapter's ``api_key_env`` names it (``watch``), and its value has at least ``MIN_CHARS``
characters (shorter ones are words like ``1`` or ``true``, found everywhere). The table is
built once per process from ``os.environ``, on first use; with no secret set, ``scrub`` costs
one dictionary test. It is applied where text enters the room's files (``store/files.py``
writes, ledger lines, a run's captured output once it ended in ``proc.py``) and where the room is shown
(``cli/common.py`` echo, the dashboard's pages).
"""

from __future__ import annotations

import os
import re

MIN_CHARS = 8
_SECRET_WORDS = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.I)
_PLACES = ("_FILE", "_DIR", "_PATH", "_HOME", "_SOCK")

_named: set[str] = set()  # names given by ``watch`` (an adapter's ``api_key_env``)
_table: dict[str, str] | None = None  # value -> name
_text: re.Pattern[str] | None = None
_bytes: re.Pattern[bytes] | None = None


def looks_secret(name: str) -> bool:
    """Whether the variable ``name`` holds a secret, by its name alone."""
    if name in _named:
        return True
    upper = name.upper()
    return bool(_SECRET_WORDS.search(upper)) and not upper.endswith(_PLACES)


def watch(*names: str) -> None:
    """Treat the variables ``names`` as secret too (an adapter setup's ``api_key_env``)."""
    global _table
    new = {n for n in names if n and n not in _named}
    if new:
        _named.update(new)
        _table = None


def reset() -> None:
    """Forget the table (the environment changed: tests); ``watch``ed names stay."""
    global _table
    _table = None


def table() -> dict[str, str]:
    """value -> name of every secret in this process's environment."""
    global _table, _text, _bytes
    if _table is None:
        found: dict[str, str] = {}
        for name, value in os.environ.items():
            if len(value) >= MIN_CHARS and looks_secret(name):
                found.setdefault(value, name)
        _table = found
        if found:  # longest first: a value inside another is never half-replaced
            values = sorted(found, key=len, reverse=True)
            _text = re.compile("|".join(re.escape(v) for v in values))
            _bytes = re.compile(b"|".join(re.escape(v.encode("utf-8", "surrogateescape")) for v in values))
        else:
            _text = _bytes = None
    return _table


def mark(name: str) -> str:
    return f"[redacted:{name}]"


def scrub(text: str) -> str:
    """``text`` with every secret value replaced by ``[redacted:NAME]``."""
    found = _table if _table is not None else table()  # the table, made on first use
    if not found or _text is None:
        return text
    return _text.sub(lambda m: mark(found[m.group(0)]), text)


def scrub_bytes(data: bytes) -> bytes:
    """``scrub`` for bytes (a capture file, a write of bytes)."""
    found = table()
    if not found or _bytes is None:
        return data
    return _bytes.sub(lambda m: mark(found[m.group(0).decode("utf-8", "surrogateescape")]).encode(), data)
