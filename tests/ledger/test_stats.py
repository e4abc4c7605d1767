"""control_room.ledger.stats: stats and summary count events, outcomes and spend exactly."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import ev

from control_room.ledger import append
from control_room.ledger.stats import named_tasks, stats, summary


@pytest.fixture
def spending(ledger: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Four events over two days, two adapters, two routes."""
    import control_room.ledger.write as write

    rows = [
        ("2025-01-01T10:00:00Z", dict(adapter="claude", route="r1", outcome="pass", cost_usd=0.1)),
        ("2025-01-01T23:59:59Z", dict(adapter="claude", route="r2", outcome="fail", cost_usd=0.2)),
        ("2025-01-02T00:00:00Z", dict(adapter="codex", route="r1", outcome="pass", cost_usd=1.25)),
        ("2025-01-02T08:00:00Z", dict()),
    ]
    for when, fields in rows:
        monkeypatch.setattr(write, "now_iso", lambda t=None, when=when: when)
        append(ledger, ev("result"), **fields)  # type: ignore[arg-type]
    return ledger


def test_stats_sums_spend_and_outcomes_exactly(spending: Path) -> None:
    def b(events: int, outcomes: dict[str, int], spend: float) -> dict[str, object]:
        return {"events": events, "outcomes": outcomes, "spend_usd": spend}

    assert stats(spending) == {
        "total": b(4, {"pass": 2, "fail": 1}, 1.55),
        "by_day": {
            "2025-01-01": b(2, {"pass": 1, "fail": 1}, 0.3),
            "2025-01-02": b(2, {"pass": 1}, 1.25),
        },
        "by_adapter": {
            "-": b(1, {}, 0.0),
            "claude": b(2, {"pass": 1, "fail": 1}, 0.3),
            "codex": b(1, {"pass": 1}, 1.25),
        },
        "by_route": {
            "-": b(1, {}, 0.0),
            "r1": b(2, {"pass": 2}, 1.35),
            "r2": b(1, {"fail": 1}, 0.2),
        },
    }


def test_summary_counts_lines_events_and_spend(spending: Path, tmp_path: Path) -> None:
    s = summary(spending, tmp_path / "cache.json")
    assert (s["lines"], s["events"], s["spend_by_day"]) == (
        4, {"result": 4}, {"2025-01-01": 0.3, "2025-01-02": 1.25},
    )  # fmt: skip
    assert s["size"] == spending.stat().st_size


def test_named_tasks_are_the_task_column_kept_current(ledger: Path, tmp_path: Path) -> None:
    cache = tmp_path / "ledger-tasks"
    append(ledger, ev("e"), task="t1", detail="t2 named in a detail is not about t2")
    append(ledger, ev("e"), detail="no task")
    assert named_tasks(ledger, cache) == {"t1"}
    append(ledger, ev("e"), task="t|3")  # escaped in its cell, read back as written
    assert named_tasks(ledger, cache) == {"t1", "t|3"}
    cache.unlink()  # a cache, rebuilt
    assert named_tasks(ledger, cache) == {"t1", "t|3"}
