"""A person at the keyboard (#23): an editor saves ROUTES.md, CONTROL.md and CURRENT_CONTEXT.md
over and over (atomic replace, and in-place truncate and write) while cycles run and rewrite
their auto parts: no edit a person made is lost, and nothing crashes. (On the tree before, about
one run in four lost a save of ROUTES.md: control-room checked for a person's save, then spent
the fsync of its own write before the rename, long enough for the save to land in between.)"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from support import probe_task, queue, where

from control_room.room.layout import Room

TASKS = 12
EDITS_MAX = 2000


def save(path: Path, line: str, in_place: bool) -> None:
    """An editor adding ``line`` at the end: read, then write the whole file back."""
    text = path.read_text(encoding="utf-8") + line + "\n"
    if in_place:  # vi with backupcopy=yes, many editors: truncate, then write
        with open(path, "r+", encoding="utf-8") as f:
            f.truncate(0)
            f.write(text)
    else:  # write a temp file, rename it over
        tmp = path.with_name(f".{path.name}.swp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)


def test_no_edit_of_a_person_is_lost_while_cycles_run(cr: Any, room: Room) -> None:
    for k in range(TASKS):
        queue(room, f"t{k:02d}", route="r1", **{f: v for f, v in probe_task("x").items() if f == "command"})
    assert cr("route", "add", "r1", "--title", "the route").returncode == 0
    run = subprocess.Popen([cr.exe, "run", "--cycles", str(TASKS), "--every", "0"], cwd=room.root, env=cr.env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
    files = (room.context, room.routes, room.control)
    edits: list[tuple[Path, str]] = []

    def edit() -> None:  # as long as the cycles run, a save every 20 ms
        k = 0
        while run.poll() is None and k < EDITS_MAX:
            path = files[k % len(files)]
            line = f"<!-- a person's note {k} -->"
            save(path, line, in_place=bool(k % 2))
            edits.append((path, line))
            k += 1
            time.sleep(0.02)

    editor = threading.Thread(target=edit)
    editor.start()
    editor.join()
    out, _ = run.communicate(timeout=300)
    assert "Traceback" not in out, out
    assert run.returncode == 0, out
    assert all(where(room, f"t{k:02d}") == ["done"] for k in range(TASKS)), out
    assert len(edits) > 3 * len(files), len(edits)  # the saves overlapped the cycles
    for path, line in edits:
        assert line in path.read_text(encoding="utf-8"), (path.name, line)
    assert cr("ledger", "verify").returncode == 0
