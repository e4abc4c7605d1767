"""The start-up budget: what the commands people and cron run most must not import.

Each lazy import in the package is backed by a figure in docs/performance.md; these tests pin
the ones that matter, so a top-level import of a heavy module cannot slip in unnoticed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("yaml", "frontmatter", "markdown_it", "filelock", "plistlib", "subprocess", "hashlib")


def loaded(room: Path, *args: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``control-room ARGS`` in ``room``."""
    code = (
        "import sys, json\n"
        "from control_room.cli import cli\n"
        "try:\n"
        f"    cli({list(args)!r}, prog_name='control-room', standalone_mode=False)\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
    )
    env = {**os.environ, "CONTROL_ROOM": str(room)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


@pytest.fixture(scope="module")
def warm_room(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A demo room whose caches are warm: what `status` meets on a working day."""
    root = tmp_path_factory.mktemp("startup") / "demo"
    subprocess.run([sys.executable, "-m", "control_room", "demo", str(root)], capture_output=True, check=True)
    loaded(root, "status")  # the first run may rebuild a cache
    return root


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY)


@pytest.mark.parametrize("args", [("status",), ("status", "--json"), ("task", "list"), ("ledger", "tail")])
def test_reading_commands_import_no_heavy_module(warm_room: Path, args: tuple[str, ...]) -> None:
    assert heavy(loaded(warm_room, *args)) == []


def test_status_does_not_load_the_engine(warm_room: Path) -> None:
    modules = loaded(warm_room, "status")
    assert (
        sorted(m for m in modules if m.startswith(("control_room.dispatch", "control_room.adapters"))) == []
    )
    assert "control_room.ledger.write" not in modules  # readers do not pay for the writer


def test_status_with_a_queue_loads_only_what_readiness_needs(warm_room: Path, tmp_path: Path) -> None:
    """Why each queued task waits is the cycle's own answer (dispatch/queue/ready.py), read from the
    queue index: status then loads that and the index, but no adapter, no admission (nothing to
    admit on a known queue), no heavy module and no ledger writer."""
    room = shutil.copytree(warm_room, tmp_path / "queued", symlinks=True)
    task = {"id": "t1", "objective": "o", "falsifier": "f", "validator": "true", "max_cost_usd": 0.1,
            "wall_clock_s": 60, "kill_condition": "k", "deps": ["sieve-1"], "gate": ["gpu"]}  # fmt: skip
    (room / "swarm" / "queue" / "t1.json").write_text(json.dumps(task))
    loaded(room, "status")  # the first run indexes the new file
    modules = loaded(room, "status")
    engine = sorted(m for m in modules if m.startswith(("control_room.dispatch", "control_room.adapters")))
    assert engine == [
        "control_room.dispatch", "control_room.dispatch.queue", "control_room.dispatch.queue.deps",
        "control_room.dispatch.queue.index", "control_room.dispatch.queue.ready",
        "control_room.dispatch.worktrees", "control_room.dispatch.worktrees.place",
    ]  # fmt: skip
    assert heavy(modules) == []
    assert "control_room.ledger.write" not in modules


def test_the_check_sees_a_heavy_import(warm_room: Path, tmp_path: Path) -> None:
    """A command that parses a changed CONTROL.md does load the YAML parser: the check can fail."""
    room = shutil.copytree(warm_room, tmp_path / "copy", symlinks=True)
    control = room / "control-room" / "CONTROL.md"
    control.write_text(control.read_text().replace("max_rounds: 2", "max_rounds: 3"))
    assert "yaml" in heavy(loaded(room, "status"))


def test_starting_a_background_fold_loads_no_web_server() -> None:
    """A command's edge on a big ledger's first days imports views/catch_up to start the fold; the
    dashboard's site (http.server, email, ssl: ~15 ms) is the fold's own, loaded where it builds."""
    code = "import sys, control_room.views.catch_up; print(sorted(m for m in sys.modules if m[:4] == 'http'))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
