"""control_room.room.keys: the table of CONTROL.md's keys and how a value of each kind is checked."""

from __future__ import annotations

import pytest

from control_room.room import keys


def test_every_default_passes_its_own_kinds_check() -> None:
    for name, (default, kind, doc) in keys.KEYS.items():
        check, _ = keys.KINDS[kind]
        if default is not None or kind not in ("text", "command"):
            assert check(list(default) if isinstance(default, tuple) else default), name
        assert doc and "\n" not in doc, name
    assert tuple(keys.KEYS) == keys.NAMES


@pytest.mark.parametrize(
    ("kind", "good", "bad"),
    [
        ("posint", [1, 10_000], [0, -1, True, 1.5, "2"]),
        ("count", [0, 7], [-1, False, 0.5]),
        ("money", [0, 2.5], [-0.01, "1", True]),
        ("seconds", [0.5, 60], [0, -1]),
        ("text", [None, "x"], [3, ["x"]]),
        ("adapter", ["claude"], ["", "  ", None]),
        ("bool", [True, False], [0, "yes"]),
        ("command", [None, "notify-send", ["a", "b"]], ["", [], 3]),
        ("on_empty_queue", ["idle", "orchestrate"], ["sleep"]),
        ("review", [["a"], {"r1": ["a"], "*": []}], ["a", {"r1": "a"}, [1]]),
        ("review_when", ["pass", "always"], ["never"]),
    ],
)
def test_each_kind_takes_what_it_says_and_refuses_the_rest(
    kind: str, good: list[object], bad: list[object]
) -> None:
    check, _ = keys.KINDS[kind]
    assert [v for v in good if not check(v)] == []
    assert [v for v in bad if check(v)] == []


KNOWN = "(known: base_url, api_key_env, model, isolated)"
SETTINGS = "(base_url, api_key_env, model, isolated)"
NOT_A_KEY = "must be the NAME of an environment variable (letters, digits, _), never the key itself"


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({"claude": {"base_url": "http://127.0.0.1:8080"}}, None),
        ({"claude": None}, None),
        ([], "must be a mapping of adapter name -> settings (got [])"),
        ({"Bad Name": {}}, "'Bad Name' is not an adapter name"),
        ({"claude": "x"}, f"claude must be a mapping of settings {SETTINGS} (got 'x')"),
        ({"claude": {"baseurl": "x"}}, f"claude: unknown setting 'baseurl' {KNOWN}"),
        ({"claude": {"api_key_env": "sk-1 x"}}, f"claude.api_key_env {NOT_A_KEY} (got 'sk-1 x')"),
        (
            {"claude": {"base_url": "ftp://x"}},
            "claude.base_url must be a URL starting with http:// or https:// (got 'ftp://x')",
        ),
    ],
)
def test_adapters_problem_names_the_adapter_and_the_setting(value: object, problem: str | None) -> None:
    assert keys.adapters_problem(value) == problem
