"""control_room.store.records: one-line errors for bad JSON files, read_object, indented UTF-8 writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from control_room.errors import InvalidError
from control_room.store import records


def test_parse_good_json() -> None:
    assert records.parse(b'{"a": [1, 2.5, null, true]}') == {"a": [1, 2.5, None, True]}
    assert records.parse('"text"') == "text"


def test_parse_bad_utf8_names_the_byte() -> None:
    with pytest.raises(InvalidError) as err:
        records.parse(b'{"a": "\xff"}')
    assert str(err.value) == "not UTF-8 text (byte 7)"


def test_parse_bad_json_names_the_line_and_column() -> None:
    with pytest.raises(InvalidError) as err:
        records.parse('{\n  "a": 1\n  "b": 2\n}')
    assert str(err.value) == "not valid JSON: Expecting ',' delimiter (line 3 column 3)"


def test_parse_empty_input() -> None:
    with pytest.raises(InvalidError) as err:
        records.parse(b"")
    assert str(err.value) == "not valid JSON: Expecting value (line 1 column 1)"


def test_parse_a_number_python_will_not_convert() -> None:
    """Over 4300 digits json.loads raises a plain ValueError: still one line, never a traceback."""
    with pytest.raises(InvalidError) as err:
        records.parse('{"priority": ' + "1" * 5000 + "}")
    assert str(err.value) == "not valid JSON: a number with too many digits"


def test_parse_deeply_nested_value() -> None:
    with pytest.raises(InvalidError) as err:
        records.parse("[" * 100_000 + "]" * 100_000)
    assert str(err.value) == "not valid JSON: nested too deeply"


def test_read_refuses_a_file_bigger_than_max_bytes(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_bytes(b'{"a": "12345"}')  # 14 bytes
    with pytest.raises(InvalidError) as err:
        records.read(path, max_bytes=13)
    assert str(err.value) == "larger than 13 bytes"
    assert records.read(path, max_bytes=14) == {"a": "12345"}


def test_read_of_bad_json_file(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_bytes(b'{"a": 1,}')
    with pytest.raises(InvalidError) as err:
        records.read(path)
    assert (
        str(err.value)
        == "not valid JSON: Expecting property name enclosed in double quotes (line 1 column 9)"
    )


def test_read_of_a_missing_file_is_an_oserror(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        records.read(tmp_path / "missing.json")


def test_read_object(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text('{"id": "t1"}')
    assert records.read_object(good) == {"id": "t1"}


@pytest.mark.parametrize(
    "content",
    [
        None,
        "folder",
        b"[1, 2]",
        b'"text"',
        b"null",
        b"{broken",
        b"\xff\xfe",
        b'{"a": "' + b"x" * (1 << 20) + b'"}',
    ],
    ids=["missing", "unreadable", "list", "string", "null", "bad-json", "bad-utf8", "too-big"],
)
def test_read_object_is_none(tmp_path: Path, content: bytes | str | None) -> None:
    path = tmp_path / "t.json"
    if content == "folder":
        path.mkdir()  # open() fails with IsADirectoryError, even as root
    elif isinstance(content, bytes):
        path.write_bytes(content)
    assert records.read_object(path) is None


def test_write_then_read_round_trips_non_ascii(tmp_path: Path) -> None:
    path = tmp_path / "meta.json"
    data = {"objective": "café ✓ 日本語", "n": [1, 2], "nested": {"ok": True}}
    records.write(path, data)
    assert records.read(path) == data
    text = path.read_text(encoding="utf-8")
    assert text == (
        '{\n  "objective": "café ✓ 日本語",\n  "n": [\n    1,\n    2\n  ],\n'
        '  "nested": {\n    "ok": true\n  }\n}\n'
    )
    assert text.endswith("}\n")
    assert records.dumps(data) == text


def test_write_replaces_a_file(tmp_path: Path) -> None:
    path = tmp_path / "claim.json"
    records.write(path, {"a": 1})
    records.write(path, [])
    assert path.read_text(encoding="utf-8") == "[]\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["claim.json"]


def test_dumps_writes_what_json_writes_indented() -> None:
    import json
    import random

    from control_room.store import records

    rng = random.Random(7)
    words = ["", "a", "é", "tab\there", 'q"uote', "back\\slash", "\x00\x1f", "\u2028", "日本", "\U0001f600"]

    def value(depth: int) -> object:
        kind = rng.randrange(9 if depth < 4 else 6)
        return [
            lambda: rng.choice(words),
            lambda: rng.randint(-(10**20), 10**20),
            lambda: rng.choice([0.0, -0.0, 1.5, 1e-7, 1e300, float("inf"), float("-inf"), rng.random()]),
            lambda: rng.choice([True, False, None]),
            lambda: rng.randint(-3, 3),
            lambda: rng.choice(words) * 3,
            lambda: {
                rng.choice([*words, 1, 2.5, True, None]): value(depth + 1) for _ in range(rng.randrange(4))
            },
            lambda: [value(depth + 1) for _ in range(rng.randrange(4))],
            lambda: tuple(value(depth + 1) for _ in range(rng.randrange(3))),
        ][kind]()

    for _ in range(3000):
        v = value(0)
        assert records.dumps(v) == json.dumps(v, indent=2, ensure_ascii=False) + "\n", v
    assert records.dumps(float("nan")) == "NaN\n"


def test_a_kept_read_parses_again_only_a_changed_file_and_hands_out_copies(tmp_path: Path) -> None:
    path = tmp_path / "t1.claim"
    records.write(path, {"pid": 1})
    first = records.read_object_kept(path)
    assert first == {"pid": 1}
    first["pid"] = 99  # a caller's change is its own
    assert records.read_object_kept(path) == {"pid": 1}
    records.write(path, {"pid": 2})  # replaced whole, as every write
    assert records.read_object_kept(path) == {"pid": 2}
    path.write_text('{"pid": ')  # torn: no object, and none kept
    assert records.read_object_kept(path) is None
    records.write(path, {"pid": 3})
    assert records.read_object_kept(path) == {"pid": 3}
    path.unlink()
    assert records.read_object_kept(path) is None
