"""adapters/faults: the provider's words told apart, and the reset times they give."""

from __future__ import annotations

import time

import pytest

from control_room.adapters import faults
from control_room.adapters.faults import recognise, reset_time

NOW = 1_764_860_000.0  # 2025-12-04T14:53:20Z


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ('API Error: 429 {"type":"error","error":{"type":"rate_limit_error"}}', faults.RATE_LIMIT),
        ("Claude AI usage limit reached|1764867600", faults.RATE_LIMIT),
        ("ERROR: You've hit your usage limit. Try again in 3h 20m.", faults.RATE_LIMIT),
        ("Error: 429 Too Many Requests", faults.RATE_LIMIT),
        (
            "insufficient_quota: You exceeded your current quota, please check your plan and billing",
            faults.QUOTA,
        ),
        ("Your credit balance is too low to access the Anthropic API", faults.QUOTA),
        ("[API Error: RESOURCE_EXHAUSTED]", faults.QUOTA),
        ('API Error: 529 {"type":"overloaded_error","message":"Overloaded"}', faults.OVERLOADED),
        ("503 Service Unavailable", faults.OVERLOADED),
        (
            'API Error: 401 {"error":{"type":"authentication_error","message":"invalid x-api-key"}}',
            faults.AUTH,
        ),
        ("Invalid API key · Please run /login", faults.AUTH),
        ("prompt is too long: 215000 tokens > 200000 maximum", faults.CONTEXT),
        ("This model's maximum context length is 128000 tokens", faults.CONTEXT),
        ("context_length_exceeded", faults.CONTEXT),
    ],
)
def test_each_vendors_words_name_their_kind(text: str, kind: str) -> None:
    found = recognise(f"some earlier line\n{text}\n", NOW)
    assert found is not None and found.kind == kind
    assert found.detail == " ".join(text.split())[:200]
    assert found.is_providers() == (kind != faults.CONTEXT)


@pytest.mark.parametrize(
    "text",
    [
        "claude exited 1 (API error or max turns reached): Reached max turns (8)",
        "SyntaxError: invalid syntax",
        "exit 1: the tests failed: 3 failures, line 503 of x.py, 429 passed",
        "",
    ],
)
def test_a_tasks_own_failure_is_no_fault(text: str) -> None:
    assert recognise(text, NOW) is None  # a bare 503 or 429 in a test's output is not a status


def test_the_reset_times_each_cli_gives() -> None:
    assert reset_time("usage limit reached|1764867600", NOW) == 1764867600.0
    assert reset_time("rate limited; retry-after: 30", NOW) == NOW + 30
    assert reset_time('{"retry_after": 12.5}', NOW) == NOW + 12.5
    assert reset_time("Try again in 3h 20m.", NOW) == NOW + 3 * 3600 + 20 * 60
    assert reset_time("please try again in 45 seconds", NOW) == NOW + 45
    assert reset_time("Limit resets at 2025-12-04T17:00:00Z", NOW) == 1764867600.0
    assert reset_time("rate limited", NOW) is None


def test_a_clock_time_is_the_next_one_on_this_machine() -> None:
    at = reset_time("5-hour limit reached ∙ resets 5pm", NOW)
    assert at is not None and NOW < at <= NOW + 86400
    local = time.localtime(at)
    assert (local.tm_hour, local.tm_min) == (17, 0)
