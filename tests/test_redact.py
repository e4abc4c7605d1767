"""redact.py: the secrets of the environment, replaced by ``[redacted:NAME]``."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from control_room import proc, redact
from control_room.store.files import atomic_write


@pytest.fixture(autouse=True)
def fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in [n for n in os.environ if redact.looks_secret(n)]:
        monkeypatch.delenv(name)
    redact.reset()
    yield
    redact.reset()


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("ANTHROPIC_API_KEY", True),
        ("MY_SERVICE_TOKEN", True),
        ("DB_PASSWORD", True),
        ("AWS_SECRET_ACCESS_KEY", True),
        ("some_passwd", True),
        ("GOOGLE_CREDENTIALS", True),
        ("SSL_KEY_FILE", False),  # a place, not a secret
        ("PASSWORD_STORE_DIR", False),
        ("PATH", False),
        ("HOME", False),
    ],
)
def test_a_secret_is_known_by_its_name(name: str, secret: bool) -> None:
    assert redact.looks_secret(name) is secret


def test_values_of_secret_variables_are_replaced_longest_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("A_TOKEN", "abcdefgh")
    monkeypatch.setenv("B_KEY", "abcdefgh-longer")
    monkeypatch.setenv("SHORT_TOKEN", "1234567")  # under 8 characters: a word, not a secret
    monkeypatch.setenv("PLAIN", "abcdefgh-plain")
    redact.reset()
    text = "x abcdefgh-longer y abcdefgh z 1234567"
    assert redact.scrub(text) == "x [redacted:B_KEY] y [redacted:A_TOKEN] z 1234567"
    assert redact.scrub_bytes(text.encode()) == redact.scrub(text).encode()


def test_a_variable_an_adapter_names_is_secret_whatever_its_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GATEWAY", "gw-value-123")
    redact.reset()
    assert redact.scrub("gw-value-123") == "gw-value-123"
    redact.watch("GATEWAY")
    assert redact.scrub("key gw-value-123.") == "key [redacted:GATEWAY]."


def test_without_a_secret_nothing_changes() -> None:
    assert redact.table() == {}
    assert redact.scrub("[anything] *") == "[anything] *"


def test_what_the_store_writes_and_a_runs_capture_hold_no_secret(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", "s3cr3t-value-xyz")
    redact.reset()
    atomic_write(tmp_path / "f.md", "token s3cr3t-value-xyz\n")
    assert (tmp_path / "f.md").read_text() == "token [redacted:MY_SERVICE_TOKEN]\n"
    res = proc.run(
        ["sh", "-c", "echo out s3cr3t-value-xyz; echo err s3cr3t-value-xyz >&2"],
        cwd=tmp_path,
        stdout_path=tmp_path / "out.txt",
        stderr_path=tmp_path / "err.txt",
        timeout_s=30,
    )
    assert res.ok
    assert (tmp_path / "out.txt").read_text() == "out [redacted:MY_SERVICE_TOKEN]\n"
    assert (tmp_path / "err.txt").read_text() == "err [redacted:MY_SERVICE_TOKEN]\n"
