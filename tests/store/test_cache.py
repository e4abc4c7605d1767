"""control_room.store.cache: derived values per source, damaged caches rebuilt, unwritable caches ignored."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from control_room.store import cache


class Counter:
    """A compute function that counts its calls and returns ``value-<n>``."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        return f"value-{self.calls}"


def test_derived_computes_once_while_the_source_is_unchanged(tmp_path: Path) -> None:
    source = tmp_path / "ROUTES.md"
    source.write_text("one")
    cache_file = tmp_path / ".cache" / "routes"
    compute = Counter()
    assert cache.derived(cache_file, source, compute) == "value-1"
    assert cache.derived(cache_file, source, compute) == "value-1"
    assert cache.derived(cache_file, source, compute) == "value-1"
    assert compute.calls == 1
    assert cache.load(cache_file) == {"source": cache.fingerprint(source), "value": "value-1"}


def test_derived_recomputes_after_the_source_changes(tmp_path: Path) -> None:
    source = tmp_path / "ROUTES.md"
    source.write_text("one")
    cache_file = tmp_path / ".cache" / "routes"
    compute = Counter()
    assert cache.derived(cache_file, source, compute) == "value-1"
    source.write_text("two, and longer")  # another size: changed whatever the mtime resolution
    assert cache.derived(cache_file, source, compute) == "value-2"
    assert cache.derived(cache_file, source, compute) == "value-2"
    assert compute.calls == 2


def test_derived_without_a_source_computes_every_time_and_saves_nothing(tmp_path: Path) -> None:
    cache_file = tmp_path / ".cache" / "x"
    compute = Counter()
    assert cache.derived(cache_file, tmp_path / "missing.md", compute) == "value-1"
    assert cache.derived(cache_file, tmp_path / "missing.md", compute) == "value-2"
    assert cache_file.exists() is False


@pytest.mark.parametrize(
    "damage",
    [b"\x00\xffgarbage\x13\x37", cache._MAGIC + b"\xff\xfe\xfd", cache._MAGIC, b""],
    ids=["garbage", "bad-marshal", "magic-only", "empty"],
)
def test_a_damaged_cache_reads_as_missing_and_is_rebuilt(tmp_path: Path, damage: bytes) -> None:
    source = tmp_path / "CONTROL.md"
    source.write_text("x")
    cache_file = tmp_path / "control"
    compute = Counter()
    assert cache.derived(cache_file, source, compute) == "value-1"
    cache_file.write_bytes(damage)
    assert cache.load(cache_file) is None
    assert cache.derived(cache_file, source, compute) == "value-2"
    assert compute.calls == 2
    assert cache.load(cache_file) == {"source": cache.fingerprint(source), "value": "value-2"}


def test_save_then_load(tmp_path: Path) -> None:
    cache_file = tmp_path / "a" / "b" / "c"
    cache.save(cache_file, {"k": [1, 2, "x"], "n": None})
    assert cache.load(cache_file) == {"k": [1, 2, "x"], "n": None}
    assert cache_file.read_bytes().startswith(cache._MAGIC)


def test_load_of_a_missing_cache(tmp_path: Path) -> None:
    assert cache.load(tmp_path / "nothing") is None


def test_fingerprint(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_text("12345")
    st = os.stat(path)
    assert cache.fingerprint(path) == [st.st_mtime_ns, 5, st.st_ino]
    assert cache.fingerprint(tmp_path / "missing") is None


@pytest.fixture
def unwritable(tmp_path: Path) -> Iterator[Path]:
    """A folder nothing can be created in: read-only by mode, or, where that does not stop us
    (running as root), a path under a regular file, so that mkdir fails."""
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        (folder / "probe").write_text("")
    except PermissionError:
        yield folder / ".cache"
        folder.chmod(stat.S_IRWXU)
        return
    folder.chmod(stat.S_IRWXU)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    yield blocker / ".cache"


def test_save_into_an_unwritable_folder_is_silent(unwritable: Path) -> None:
    cache_file = unwritable / "routes"
    cache.save(cache_file, {"a": 1})
    assert cache.load(cache_file) is None


def test_derived_with_an_unwritable_cache_still_computes(tmp_path: Path, unwritable: Path) -> None:
    source = tmp_path / "ROUTES.md"
    source.write_text("x")
    compute = Counter()
    assert cache.derived(unwritable / "routes", source, compute) == "value-1"
    assert cache.derived(unwritable / "routes", source, compute) == "value-2"
