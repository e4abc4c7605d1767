"""Lint and types, run by the tests so that CI checks the house on every run: ruff (lint and
format) on the package, the tests and the benches in the default tier, ``mypy --strict`` on the
package in the slow tier (a cold run takes half a minute). Settings are in pyproject.toml."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINTED = ("control_room", "tests", "bench")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True)


def test_ruff_finds_nothing() -> None:
    done = run("ruff", "check", "--no-cache", *LINTED)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_code_is_formatted() -> None:
    done = run("ruff", "format", "--check", "--no-cache", *LINTED)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
def test_mypy_strict_finds_nothing(tmp_path: Path) -> None:
    done = run("mypy", "--cache-dir", str(tmp_path / "mypy"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("Success: no issues found"), done.stdout
