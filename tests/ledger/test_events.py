"""control_room.ledger.events: Event.check, approval_needed, intelligence, distinct names, append refuses."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from control_room.ledger import append, events
from control_room.ledger.line import PREAMBLE


def test_check_gives_the_default_outcome() -> None:
    assert events.INIT.check(None, {}) == "ok"
    assert events.RESULT.check(None, {"task": "t1", "cost_usd": 0.5}) == "pass"
    assert events.LEVER_SET.check(None, {"detail": "x"}) == "untested"


def test_check_accepts_a_listed_outcome() -> None:
    assert events.RESULT.check("fail", {"task": "t1"}) == "fail"
    assert events.LEVER_SET.check("killed", {"detail": "x"}) == "killed"


def test_check_refuses_an_outcome_not_listed() -> None:
    with pytest.raises(ValueError) as err:
        events.RESULT.check("maybe", {})
    assert str(err.value) == "ledger event result: outcome 'maybe' not in ('pass', 'fail')"


def test_check_refuses_a_column_the_event_does_not_fill() -> None:
    with pytest.raises(ValueError) as err:
        events.INIT.check(None, {"task": "t"})
    assert str(err.value) == "ledger event init does not fill task"
    with pytest.raises(ValueError) as err:
        events.RESUME.check(None, {"task": "t", "route": "", "detail": "x", "cost_usd": 1.5})
    assert str(err.value) == "ledger event resume does not fill task, detail, cost_usd"


def test_check_ignores_empty_columns() -> None:
    empty = {"task": "", "route": "", "adapter": "", "cost_usd": 0.0, "detail": ""}
    assert events.RESUME.check(None, empty) == "resumed"
    assert events.INIT.check(None, {**empty, "detail": "created"}) == "ok"


def test_an_event_without_outcomes_takes_any_and_defaults_to_empty() -> None:
    assert events.WARNING.outcomes == ()
    assert events.WARNING.check(None, {"task": "t"}) == ""
    assert events.WARNING.check("whatever", {}) == "whatever"


def test_approval_needed() -> None:
    gpu = events.approval_needed("gpu")
    assert gpu.name == "gpu-approval-needed"
    assert events.approval_needed("submit").name == "submit-approval-needed"
    assert (gpu.outcomes, gpu.columns, gpu.when) == (
        events.APPROVAL_NEEDED.outcomes, events.APPROVAL_NEEDED.columns, events.APPROVAL_NEEDED.when,
    )  # fmt: skip
    assert events.APPROVAL_NEEDED.name == "<gate>-approval-needed"  # the template is not renamed
    assert repr(gpu) == "Event('gpu-approval-needed')"


def test_every_name_is_lower_kebab() -> None:
    for e in events.EVENTS:
        assert re.fullmatch(r"[a-z<>]+(-[a-z<>]+)*", e.name), e.name


@pytest.mark.parametrize(
    ("old", "new"),
    [("BUDGET_HOLD", "budget-hold"), ("ROUTE_HELD", "route-held"),
     ("GPU_APPROVAL_NEEDED", "gpu-approval-needed"), ("SUBMIT_APPROVAL_NEEDED", "submit-approval-needed"),
     ("BIG_GPU_APPROVAL_NEEDED", "big_gpu-approval-needed")],
)  # fmt: skip
def test_names_written_before_0_3_read_as_today_s(old: str, new: str) -> None:
    assert events.canonical(old) == new
    assert events.canonical(new) == new


@pytest.mark.parametrize("name", ["result", "claim", "_APPROVAL_NEEDED", "anything-else", ""])
def test_other_names_are_kept(name: str) -> None:
    assert events.canonical(name) == name


def test_intelligence() -> None:
    assert events.intelligence("branch", "set") is events.BRANCH_SET
    assert events.intelligence("branch", "add") is events.BRANCH_ADD
    assert events.intelligence("lever", "set") is events.LEVER_SET
    assert events.intelligence("lever", "add") is events.LEVER_ADD
    with pytest.raises(KeyError):
        events.intelligence("lever", "kill")


def test_every_event_has_a_distinct_name() -> None:
    names = [e.name for e in events.EVENTS]
    assert len(names) == len(set(names))
    assert len({e.name for e in events.EVENTS}) == len(events.EVENTS)


def test_every_event_fills_only_known_columns() -> None:
    known = {"task", "route", "adapter", "cost_usd", "detail"}
    assert [e.name for e in events.EVENTS if not set(e.columns) <= known] == []
    assert [e.name for e in events.EVENTS if not e.when] == []


def test_append_refuses_a_column_and_writes_nothing(tmp_path: Path) -> None:
    ledger = tmp_path / "LEDGER.md"
    ledger.write_text(PREAMBLE, encoding="utf-8")
    before = ledger.read_bytes()
    with pytest.raises(ValueError) as err:
        append(ledger, events.RESUME, detail="x")
    assert str(err.value) == "ledger event resume does not fill detail"
    assert ledger.read_bytes() == before


def test_append_refuses_an_outcome_and_writes_nothing(tmp_path: Path) -> None:
    ledger = tmp_path / "LEDGER.md"
    ledger.write_text(PREAMBLE, encoding="utf-8")
    with pytest.raises(ValueError) as err:
        append(ledger, events.RESUME, outcome="stopped")
    assert str(err.value) == "ledger event resume: outcome 'stopped' not in ('resumed',)"
    assert ledger.read_bytes() == PREAMBLE.encode("utf-8")


def test_append_writes_the_default_outcome(tmp_path: Path) -> None:
    ledger = tmp_path / "LEDGER.md"
    ledger.write_text(PREAMBLE, encoding="utf-8")
    entry = append(ledger, events.RESUME)
    assert (entry.event, entry.outcome, entry.task, entry.detail) == ("resume", "resumed", "", "")
    assert ledger.read_text(encoding="utf-8").startswith(PREAMBLE)
    assert ledger.read_text(encoding="utf-8").count("\n") == PREAMBLE.count("\n") + 1
