"""control_room.ledger.follow (via summary): reads only appended bytes; rebuilds when rewritten."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support import data_lines, ev, five_lines, many_lines, rewrite

from control_room.ledger import append, follow
from control_room.ledger import stats as stats_module
from control_room.ledger.stats import summary
from control_room.timeutil import today


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


# a big ledger's first call: recent lines first, the whole history behind them -----------------


@pytest.fixture
def small_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows of a few kilobytes, so that a ledger of a few hundred lines is a big one."""
    monkeypatch.setattr(follow, "WINDOW", 4000)
    monkeypatch.setattr(follow, "STEP", 8000)
    monkeypatch.setattr(follow, "SMALL", 12000)
    monkeypatch.setattr(follow, "WINDOW_MAX", 16000)
    follow.BEHIND.clear()


def test_a_first_call_on_a_big_ledger_folds_only_its_last_lines(
    ledger: Path, tmp_path: Path, small_window: None
) -> None:
    many_lines(ledger, 600, days=30)  # 20 lines a day: a window of a few days
    cache_file = tmp_path / "cache" / "summary"
    s = summary(ledger, cache_file)
    tail_lines = data_lines(ledger)[-s["lines"] :]
    assert 0 < s["lines"] < 600 and s["from"] == ledger.stat().st_size - len(
        "".join(f"{x}\n" for x in tail_lines)
    )
    assert s["from_time"] == tail_lines[0].split(" | ")[0].lstrip("| ")
    assert s["from_time"][:10] < today()  # a state by day reaches back past today's first line
    assert {cache_file.parent: {"summary"}} == follow.BEHIND  # the command's edge starts the fold of the rest
    assert not cache_file.with_name("summary.older").exists()
    whole = summary(ledger, cache_file, whole=True)
    assert (whole["lines"], whole["from"]) == (600, 0)
    assert not cache_file.with_name("summary.older").exists()
    follow.BEHIND.clear()
    assert summary(ledger, cache_file) == whole and follow.BEHIND == {}  # whole from now on
    rebuilt = summary(ledger, tmp_path / "other", whole=True)
    assert rebuilt == whole


def test_the_whole_history_near_the_end_is_finished_by_the_next_call(
    ledger: Path, tmp_path: Path, small_window: None
) -> None:
    many_lines(ledger, 600)
    cache_file = tmp_path / "summary"
    assert summary(ledger, cache_file)["from"] > 0
    summary(ledger, tmp_path / "x", whole=True)  # the background fold, as far as the end then
    (tmp_path / "x").rename(cache_file.with_name("summary.older"))
    many_lines(ledger, 20, writer="new")  # appended since: fewer bytes than STEP
    s = summary(ledger, cache_file)
    assert (s["from"], s["lines"]) == (0, 620)
    assert not cache_file.with_name("summary.older").exists()


def test_a_window_without_a_day_rule_is_the_last_bytes(
    ledger: Path, tmp_path: Path, small_window: None
) -> None:
    many_lines(ledger, 600, days=1)  # all of today: a by-day window would reach WINDOW_MAX
    fd = os.open(ledger, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        plain, by_day = follow.window_start(fd, size), follow.day_window_start(fd, size)
    finally:
        os.close(fd)
    assert size - 4000 <= plain < size - 3000
    assert size - 16000 <= by_day < size - 15000


# kept: a run loop's states in memory, checkpoints saved at most once a second


def test_kept_states_are_saved_at_most_every_save_s_and_when_it_ends(
    ledger: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache_file = tmp_path / "cache.json"
    five_lines(ledger)
    clock = [1000.0]
    monkeypatch.setattr(follow.time, "monotonic", lambda: clock[0])
    with follow.kept():
        assert summary(ledger, cache_file)["lines"] == 5  # a first fold: saved
        append(ledger, ev("spend"), cost_usd=0.5)
        seen = counting(monkeypatch)
        assert summary(ledger, cache_file)["lines"] == 6  # from memory: only the new line folded
        assert len(seen) == 1
        assert summary(ledger, tmp_path / "other.json")["lines"] == 6
        assert follow.cache.load(cache_file)["lines"] == 5  # not saved again within SAVE_S
        clock[0] += follow.SAVE_S
        append(ledger, ev("spend"), cost_usd=0.5)
        assert summary(ledger, cache_file)["lines"] == 7
        assert follow.cache.load(cache_file)["lines"] == 7  # a second on: saved
        append(ledger, ev("spend"), cost_usd=0.5)
        assert summary(ledger, cache_file)["lines"] == 8
        assert follow.cache.load(cache_file)["lines"] == 7
    assert follow.cache.load(cache_file)["lines"] == 8  # saved when it ends
    assert follow._KEPT == {}


def test_a_kept_state_takes_a_checkpoint_another_process_saved_further_on(
    ledger: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache_file = tmp_path / "cache.json"
    five_lines(ledger)
    with follow.kept():
        assert summary(ledger, cache_file)["lines"] == 5
        for _ in range(3):
            append(ledger, ev("spend"), cost_usd=0.5)
        theirs = summary(ledger, tmp_path / "theirs.json")  # as another process folds them...
        follow.cache.save(cache_file, follow.cache.load(tmp_path / "theirs.json"))  # ...and saves
        seen = counting(monkeypatch)
        assert summary(ledger, cache_file) == theirs
        assert seen == []  # taken from the checkpoint, not folded again
