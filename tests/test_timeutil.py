"""control_room.timeutil: now_iso/today in UTC to the second, parse_iso only of that form,
parse_duration's units, sums and one-line refusals."""

from __future__ import annotations

import pytest

from control_room import timeutil

NOON = 1769860800.0  # 2026-01-31T12:00:00Z


def test_now_iso_is_utc_to_the_second() -> None:
    assert timeutil.now_iso(0) == "1970-01-01T00:00:00Z"
    assert timeutil.now_iso(NOON + 0.9) == "2026-01-31T12:00:00Z"  # cut, never rounded up


def test_now_iso_and_today_read_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(timeutil.time, "time", lambda: NOON + 12 * 3600 - 1)
    assert timeutil.now_iso() == "2026-01-31T23:59:59Z"
    assert timeutil.today() == "2026-01-31"


def test_now_iso_follows_the_clock_from_one_second_to_the_next(monkeypatch: pytest.MonkeyPatch) -> None:
    said = []  # now_iso formats each second once: what it says must still be the clock's
    for t in (NOON, NOON + 0.9, NOON + 1, NOON + 0.5, NOON + 3600):
        monkeypatch.setattr(timeutil.time, "time", lambda t=t: t)
        said.append(timeutil.now_iso())
    assert said == ["2026-01-31T12:00:00Z"] * 2 + ["2026-01-31T12:00:01Z", "2026-01-31T12:00:00Z"] + [
        "2026-01-31T13:00:00Z"
    ]


def test_parse_iso_reads_back_what_now_iso_wrote() -> None:
    assert timeutil.parse_iso("2026-01-31T12:00:00Z") == NOON
    assert timeutil.parse_iso(timeutil.now_iso(NOON + 59.5)) == NOON + 59


@pytest.mark.parametrize(
    "text", ["2026-01-31 12:00:00Z", "2026-01-31T12:00:00+00:00", "2026-01-31T12:00Z", "2026-01-31", ""]
)
def test_parse_iso_refuses_any_other_form(text: str) -> None:
    with pytest.raises(ValueError):
        timeutil.parse_iso(text)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90", 90.0),
        ("90s", 90.0),
        ("30m", 1800.0),
        ("1h", 3600.0),
        ("2d", 172800.0),
        ("250ms", 0.25),
        ("1.5h", 5400.0),
        ("1h30m", 5400.0),
        ("1m30", 90.0),  # a bare number is seconds, wherever it stands
        (" 1H ", 3600.0),
        ("1 h", 3600.0),
        ("1h 30m", 5400.0),
        ("1m 30", 90.0),
    ],
)
def test_parse_duration_reads_units_and_sums_them(text: str, seconds: float) -> None:
    assert timeutil.parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["abc", "10x", "-5", "h", "1 20", "1h,30m", "1h 30x"])
def test_parse_duration_refuses_what_is_not_a_duration(text: str) -> None:
    with pytest.raises(ValueError) as err:
        timeutil.parse_duration(text)
    assert str(err.value) == f"not a duration: {text!r} (try 90, 90s, 30m, 1h)"


@pytest.mark.parametrize("text", ["", "   ", "0", "0s", "0h0m"])
def test_parse_duration_refuses_nothing_and_zero(text: str) -> None:
    with pytest.raises(ValueError) as err:
        timeutil.parse_duration(text)
    assert str(err.value) == f"not a positive duration: {text!r} (try 90, 90s, 30m, 1h)"


def test_parse_duration_takes_zero_only_where_allowed() -> None:
    assert timeutil.parse_duration("0", zero=True) == 0.0
    assert timeutil.parse_duration("0s0m", zero=True) == 0.0
    with pytest.raises(ValueError):
        timeutil.parse_duration("", zero=True)  # nothing is still not a duration
