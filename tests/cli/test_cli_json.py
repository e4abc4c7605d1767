"""Every listing command's --json prints one JSON document on stdout and nothing else
(docs/json.md), on a room that has been through the demo."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

LISTINGS = [
    ["status"], ["task", "list"], ["route", "list"], ["graveyard", "list"], ["ledger", "tail"],
    ["ledger", "stats"], ["ledger", "verify"], ["findings"], ["scorecard"], ["adapters"],
    ["lever", "list"], ["branch", "list"], ["cleanup", "--dry-run"], ["schedule", "--status"],
]  # fmt: skip


@pytest.fixture(scope="module")
def demo_room(tmp_path_factory: pytest.TempPathFactory, exe: str) -> Path:
    root = tmp_path_factory.mktemp("json") / "demo"
    done = subprocess.run([exe, "demo", str(root)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return root


@pytest.mark.parametrize("argv", LISTINGS, ids=lambda a: " ".join(a))
def test_json_is_one_document(exe: str, demo_room: Path, argv: list[str]) -> None:
    done = subprocess.run(
        [exe, "--room", str(demo_room), *argv, "--json"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert isinstance(json.loads(done.stdout), (dict, list))
