"""Derived, disposable caches: files under ``control-room/.cache/``, in Python's ``marshal``
format (no import cost, several times faster than JSON for big indexes; a file written by
another Python version, or damaged, reads as missing and is rebuilt).

A cache holds something computed from a source file together with that file's fingerprint
(mtime, size, inode). When the fingerprint no longer matches, the value is recomputed. Deleting
the whole ``.cache`` folder is always safe: it only costs one recomputation. Writes are atomic
and take no lock (two processes racing both write a valid value); a room on a read-only disk
simply runs without its caches.

A reader that must write nothing (``dashboard --serve``) works inside ``held(memory)``: caches are
read from ``memory`` first (else from disk, as always) and saved only into it, so its folds stay
incremental from one request to the next without a byte written.
"""

from __future__ import annotations

import marshal
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from control_room.store.files import atomic_write, read_bytes

T = TypeVar("T")


def fingerprint(path: Path) -> list[int] | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return [st.st_mtime_ns, st.st_size, st.st_ino]


_MAGIC = b"control-room-cache-1\n"
_held: dict[str, bytes] | None = None  # inside `held`: where caches are saved instead of disk


@contextmanager
def held(memory: dict[str, bytes]) -> Iterator[None]:
    """Inside, every cache is saved into ``memory`` (marshalled, keyed by its path), never to
    disk, and read from it before the disk."""
    global _held
    before, _held = _held, memory
    try:
        yield
    finally:
        _held = before


def load(cache_file: Path, *, disk: bool = False) -> Any:
    """The cached value, or None when there is none (or it cannot be read: a rebuild);
    ``disk``: as saved on disk, even inside ``held``."""
    if _held is not None and not disk and str(cache_file) in _held:
        try:
            return marshal.loads(_held[str(cache_file)])
        except (ValueError, EOFError, TypeError):
            return None
    try:
        data = read_bytes(cache_file)
        if not data.startswith(_MAGIC):
            return None
        return marshal.loads(data[len(_MAGIC) :])
    except (OSError, ValueError, EOFError, TypeError):
        return None


def holding() -> bool:
    """Whether caches are saved into memory now (inside ``held``)."""
    return _held is not None


def save(cache_file: Path, data: Any) -> None:
    if _held is not None:
        try:
            _held[str(cache_file)] = marshal.dumps(data)
        except ValueError:  # a value marshal cannot hold: a bug, but only a slower next run
            pass
        return
    try:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(cache_file, _MAGIC + marshal.dumps(data), durable=False)
    except Exception:  # a cache that cannot be written is only a slower next run
        pass


def derived(cache_file: Path, source: Path, compute: Callable[[], T]) -> T:
    """``compute()``, cached in ``cache_file`` for as long as ``source`` is unchanged."""
    fp = fingerprint(source)
    data = load(cache_file)
    if fp is not None and isinstance(data, dict) and data.get("source") == fp:
        return data["value"]  # type: ignore[no-any-return]
    value = compute()
    if fp is not None:
        save(cache_file, {"source": fp, "value": value})
    return value
