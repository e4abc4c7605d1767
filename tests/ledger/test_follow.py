"""control_room.ledger.follow (via summary): reads only appended bytes; rebuilds when rewritten."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import data_lines, ev, five_lines, rewrite

from control_room.ledger import append
from control_room.ledger import stats as stats_module
from control_room.ledger.stats import summary


def counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The event ids of the lines the summary folds in from now on."""
    seen: list[str] = []
    real = stats_module._count

    def count(state, cells):  # type: ignore[no-untyped-def]
        seen.append(cells[1])
        real(state, cells)

    monkeypatch.setattr(stats_module, "_count", count)
    return seen


def test_summary_reads_only_the_new_bytes(
    ledger: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache_file = tmp_path / "cache.json"
    five_lines(ledger)
    first = summary(ledger, cache_file)
    assert first["lines"] == 5
    for k in range(10):
        append(ledger, ev("spend"), cost_usd=0.5, detail=f"more {k}")
    seen = counting(monkeypatch)
    second = summary(ledger, cache_file)
    new_ids = [line.split(" | ")[1] for line in data_lines(ledger)[5:]]
    assert seen == new_ids  # exactly the 10 new lines, nothing else
    assert second["size"] == ledger.stat().st_size > first["size"]
    assert (second["lines"], second["events"]) == (15, {"e": 5, "spend": 10})
    seen.clear()
    assert summary(ledger, cache_file) == second and seen == []  # nothing new: nothing read
    assert summary(ledger, tmp_path / "fresh.json") == second  # equals a rebuild from scratch


def test_summary_rebuilds_after_the_file_shrank(
    ledger: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache_file = tmp_path / "cache.json"
    lines = five_lines(ledger)
    assert summary(ledger, cache_file)["lines"] == 5
    rewrite(ledger, lines[:3])
    seen = counting(monkeypatch)
    s = summary(ledger, cache_file)
    assert s["lines"] == 3 and s["size"] == ledger.stat().st_size
    assert len(seen) == 3  # every line folded in again, from the start
    assert s == summary(ledger, tmp_path / "fresh.json")


def test_summary_rebuilds_after_an_edit_before_the_checkpoint(ledger: Path, tmp_path: Path) -> None:
    cache_file = tmp_path / "cache.json"
    for k in range(5):
        append(ledger, ev("spend"), cost_usd=0.5, detail=f"d{k}")
    assert summary(ledger, cache_file)["events"] == {"spend": 5}
    lines = data_lines(ledger)
    lines[1] = lines[1].replace("| spend |", "| refund |")  # a hand edit, longer line
    rewrite(ledger, lines)
    append(ledger, ev("spend"), cost_usd=0.5)
    s = summary(ledger, cache_file)
    assert (s["lines"], s["events"]) == (6, {"spend": 5, "refund": 1})
    assert s == summary(ledger, tmp_path / "fresh.json")
