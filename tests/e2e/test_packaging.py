"""The built wheel carries the default room content and the templates (they live at the top
of the repository and are force-included under control_room/defaults/)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_wheel_contains_the_default_room_content(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path),
                           str(REPO)], capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (wheel,) = tmp_path.glob("control_room-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {f"control_room/defaults/{p.relative_to(REPO).as_posix()}"
                for d in ("agents", "skills", "intelligence", "graveyard", "swarm")
                for p in (REPO / d).rglob("*") if p.is_file()}  # fmt: skip
    expected |= {f"control_room/templates/{p.name}" for p in (REPO / "control_room" / "templates").iterdir()}
    assert len(expected) >= 20
    assert expected <= names, sorted(expected - names)
    assert "control_room/defaults/agents/orchestrator.md" in names
