"""control_room.knowledge.digest: DIGEST.md is capped and incremental; a prompt's route history."""

from __future__ import annotations

import shutil
import sys

import pytest
from support import drop_task as drop
from support import probe_task as task

from control_room.dispatch.run import cycle
from control_room.knowledge import digest, graveyard, history
from control_room.ledger.line import HEADER
from control_room.room import settings as control
from control_room.room.layout import Room

PY = sys.executable


def test_the_prompt_carries_the_routes_tombstone_and_history(room: Room) -> None:
    drop(room, task("h-1", route="hist"))
    cycle.cycle(room)
    graveyard.kill(room, "hist", "too slow by 10x", "a 10x faster machine", ["h-1"])
    graveyard.reopen(room, "hist", "we got the faster machine")
    drop(room, task("h-2", route="hist"))
    cycle.cycle(room)
    prompt = (room.swarm / "outbox" / "h-2.md").read_text()
    section = prompt[prompt.index("## This route so far") : prompt.index("## Your task")]
    assert "Tombstone (graveyard/hist.md, state reopened)" in section
    assert "too slow by 10x" in section and "we got the faster machine" in section
    assert "1 attempt (1 passed, 0 failed)" in section


def big_ledger(room: Room, n: int) -> None:
    """``n`` result lines written fast (the digest does not check the chain; verify would)."""
    with open(room.ledger, "a", encoding="utf-8") as f:
        chunk = []
        for i in range(n):
            outcome = "pass" if i % 3 == 0 else "fail"
            failed = "" if outcome == "pass" else f"; failed: validator exited 1: case {i % 50} wrong"
            chunk.append(
                f"| 2026-01-{1 + i % 28:02d}T00:00:00Z | {i:016x} | bench | result | t-{i % 1000} | "
                f"route-{i % 40} | probe | {outcome} | 0.001 | round 1; decision: try variant "
                f"{i} of lever {i % 17}{failed} | - | 000000000000 |\n"
            )
            if len(chunk) == 50_000:
                f.write("".join(chunk))
                chunk.clear()
        f.write("".join(chunk))


@pytest.mark.slow
def test_the_digest_stays_under_its_cap_and_refreshes_incrementally(room: Room) -> None:
    gate = control.load(room)
    digest.refresh(room, gate)
    before = room.ledger.stat().st_size
    big_ledger(room, 1_000_000)
    path, read = digest.refresh(room, gate)
    text = path.read_text()
    assert len(text.encode()) <= gate.digest_max_bytes == 8192
    assert "## Live routes: what each has learned" in text and "route-39" in text
    assert read == room.ledger.stat().st_size - before  # it read the million new lines, once
    (room.cache / "digest").unlink()
    digest.refresh(room, gate)
    assert "lines, since " in path.read_text()  # deleted: a first refresh reads the recent lines
    history.state(room, whole=True)  # what the background fold does
    digest.refresh(room, gate)
    assert path.read_text() == text  # deleting the checkpoint only costs a rebuild
    size = room.ledger.stat().st_size
    big_ledger(room, 10)
    _, read = digest.refresh(room, gate)
    assert read == room.ledger.stat().st_size - size  # only the 10 new lines were read
    st, _ = history.state(room)
    assert st["lines"] == 1_000_011  # 1 init line + 1,000,010 results


def test_a_digest_rebuilt_from_scratch_equals_the_incremental_one(room: Room) -> None:
    gate = control.load(room)
    for n in range(4):
        drop(room, task(f"d-{n}", route=f"r{n % 2}",
                        validator=[PY, "-c", f"import sys; sys.exit({n % 2})"]))  # fmt: skip
        cycle.cycle(room)
        digest.refresh(room, gate)  # as the edge of each `control-room cycle` does
    incremental = room.digest.read_text()
    (room.cache / "digest").unlink()
    digest.refresh(room, gate)
    assert room.digest.read_text() == incremental


def test_the_ledger_header_is_untouched_by_the_digest(room: Room) -> None:
    digest.refresh(room, control.load(room))
    assert HEADER in room.ledger.read_text()


def test_a_digest_of_recent_lines_says_since_when(room: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a big ledger's first days the digest holds its recent lines only, and says so."""
    from support import many_lines

    from control_room.ledger import follow

    monkeypatch.setattr(follow, "SMALL", 20_000)
    monkeypatch.setattr(follow, "WINDOW", 4_000)
    monkeypatch.setattr(follow, "STEP", 8_000)
    many_lines(room.ledger, 300)
    shutil.rmtree(room.cache, ignore_errors=True)  # a fresh clone: no checkpoint yet
    settings = control.load(room)
    digest.refresh(room, settings)
    text = room.digest.read_text()
    st, _ = history.state(room)
    assert st["from"] and f"lines, since {st['from_time']}, up to" in text
    assert "older history is being folded in" in text
    history.state(room, whole=True)
    digest.refresh(room, settings)
    assert "since" not in room.digest.read_text().split("\n\n")[1]
