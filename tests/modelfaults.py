"""What the model server answers in a limited mode, as each vendor answers (tests/modelserver.py).

The vendor is the wire format the request came on: Anthropic ``/v1/messages``, OpenAI
``/chat/completions`` and ``/responses``, Gemini ``:generateContent`` / ``:streamGenerateContent``.
Each mode gives that vendor's own status, error body and headers (the shapes of the vendors'
public error references):

- ``rate_limit``: 429. Anthropic ``rate_limit_error`` with ``retry-after`` and the
  ``anthropic-ratelimit-requests-*`` headers (reset in RFC 3339); OpenAI ``rate_limit_exceeded``
  ("Please try again in 20s") with ``retry-after`` and ``x-ratelimit-*-requests`` (reset "20s");
  Gemini ``RESOURCE_EXHAUSTED`` "You exceeded your current quota" for a per-minute quota, with
  "Please retry in 20.0s" and a ``google.rpc.RetryInfo`` ``retryDelay``.
- ``overloaded``: Anthropic 529 ``overloaded_error``; OpenAI and Gemini 503.
- ``quota``: Anthropic 400 "Your credit balance is too low"; OpenAI 429 ``insufficient_quota``;
  Gemini 429 ``RESOURCE_EXHAUSTED`` "You exceeded your current quota" (a daily metric).
- ``context``: 400 with the vendor's context-length words: Anthropic "prompt is too long: N
  tokens > M maximum", OpenAI ``context_length_exceeded``, Gemini "The input token count (N)
  exceeds the maximum number of tokens allowed (M)".
"""

from __future__ import annotations

import time
import uuid
from datetime import datetime, timezone
from typing import Any

MODES = ("rate_limit", "overloaded", "quota", "context")
WINDOW = 200_000  # the context window the context mode says was exceeded
Answer = tuple[int, dict[str, str], Any]


def vendor(path: str) -> str | None:
    """Whose wire format ``path`` is: anthropic, openai or gemini; None for any other route."""
    if path.endswith("/messages"):
        return "anthropic"
    if path.endswith(("/chat/completions", "/responses")):
        return "openai"
    if ":generateContent" in path or ":streamGenerateContent" in path:
        return "gemini"
    return None


def answer(mode: str, path: str, retry_after: int, tokens: int, now: float | None = None) -> Answer | None:
    """(status, headers, body) for ``mode`` on ``path``; None when the route is no vendor's."""
    who = vendor(path)
    if who is None or mode not in MODES:
        return None
    now = time.time() if now is None else now
    tokens = max(tokens, WINDOW + 1)
    if who == "anthropic":
        return _anthropic(mode, retry_after, tokens, now)
    if who == "openai":
        return _openai(mode, retry_after, tokens)
    return _gemini(mode, retry_after, tokens)


def reset_stamp(now: float, seconds: int) -> str:
    """RFC 3339 in UTC, as ``anthropic-ratelimit-requests-reset`` gives it."""
    return datetime.fromtimestamp(int(now) + seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _anthropic(mode: str, retry_after: int, tokens: int, now: float) -> Answer:
    def body(kind: str, message: str) -> dict[str, Any]:
        return {"type": "error", "error": {"type": kind, "message": message},
                "request_id": f"req_{uuid.uuid4().hex[:24]}"}  # fmt: skip

    if mode == "rate_limit":
        reset = reset_stamp(now, retry_after)
        headers = {"retry-after": str(retry_after), "anthropic-ratelimit-requests-limit": "50",
                   "anthropic-ratelimit-requests-remaining": "0",
                   "anthropic-ratelimit-requests-reset": reset,
                   "anthropic-ratelimit-tokens-reset": reset}  # fmt: skip
        message = ("This request would exceed the rate limit for your organization of 50 requests per "
                   "minute. For details, refer to: https://docs.claude.com/en/api/rate-limits.")  # fmt: skip
        return 429, headers, body("rate_limit_error", message)
    if mode == "overloaded":
        return 529, {}, body("overloaded_error", "Overloaded")
    if mode == "quota":
        message = ("Your credit balance is too low to access the Anthropic API. Please go to Plans & "
                   "Billing to upgrade or purchase credits.")  # fmt: skip
        return 400, {}, body("invalid_request_error", message)
    return 400, {}, body("invalid_request_error", f"prompt is too long: {tokens} tokens > {WINDOW} maximum")


def _openai(mode: str, retry_after: int, tokens: int) -> Answer:
    def body(message: str, kind: str, code: str | None, param: str | None = None) -> dict[str, Any]:
        return {"error": {"message": message, "type": kind, "param": param, "code": code}}

    if mode == "rate_limit":
        headers = {"retry-after": str(retry_after), "x-ratelimit-limit-requests": "60",
                   "x-ratelimit-remaining-requests": "0",
                   "x-ratelimit-reset-requests": f"{retry_after}s",
                   "x-ratelimit-limit-tokens": "150000", "x-ratelimit-remaining-tokens": "149000",
                   "x-ratelimit-reset-tokens": "6ms"}  # fmt: skip
        message = ("Rate limit reached for mock-model in organization org-mock on requests per min (RPM): "
                   f"Limit 60, Used 60, Requested 1. Please try again in {retry_after}s. Visit "
                   "https://platform.openai.com/account/rate-limits to learn more.")  # fmt: skip
        return 429, headers, body(message, "requests", "rate_limit_exceeded")
    if mode == "overloaded":
        message = "The server is overloaded or not ready yet."
        return 503, {}, body(message, "server_error", "server_is_overloaded")
    if mode == "quota":
        message = ("You exceeded your current quota, please check your plan and billing details. For more "
                   "information on this error, read the docs: "
                   "https://platform.openai.com/docs/guides/error-codes/api-errors.")  # fmt: skip
        return 429, {}, body(message, "insufficient_quota", "insufficient_quota")
    message = (f"This model's maximum context length is {WINDOW} tokens. However, your messages resulted "
               f"in {tokens} tokens. Please reduce the length of the messages.")  # fmt: skip
    return 400, {}, body(message, "invalid_request_error", "context_length_exceeded", "messages")


def _gemini(mode: str, retry_after: int, tokens: int) -> Answer:
    def body(code: int, status: str, message: str, details: list[Any] | None = None) -> dict[str, Any]:
        error: dict[str, Any] = {"code": code, "message": message, "status": status}
        if details:
            error["details"] = details
        return {"error": error}

    def retry(metric: str, quota_id: str) -> list[Any]:
        return [
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [
                {"quotaMetric": f"generativelanguage.googleapis.com/{metric}", "quotaId": quota_id,
                 "quotaDimensions": {"location": "global", "model": "mock-model"}, "quotaValue": "10"}]},
            {"@type": "type.googleapis.com/google.rpc.Help", "links": [
                {"description": "Learn more about Gemini API quotas",
                 "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}]},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{retry_after}s"},
        ]  # fmt: skip

    quota_words = ("You exceeded your current quota, please check your plan and billing details. For more "
                   "information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\n"
                   "* Quota exceeded for metric: generativelanguage.googleapis.com/")  # fmt: skip
    if mode == "rate_limit":  # a per-minute quota: the same words, with a retry delay
        message = (f"{quota_words}generate_content_requests, limit: 10, model: mock-model\n"
                   f"Please retry in {retry_after}.0s.")  # fmt: skip
        details = retry("generate_content_requests", "GenerateRequestsPerMinutePerProjectPerModel")
        return 429, {"retry-after": str(retry_after)}, body(429, "RESOURCE_EXHAUSTED", message, details)
    if mode == "overloaded":
        return 503, {}, body(503, "UNAVAILABLE", "The model is overloaded. Please try again later.")
    if mode == "quota":  # a daily quota: no retry delay
        message = f"{quota_words}generate_content_free_tier_requests, limit: 0, model: mock-model"
        details = retry(
            "generate_content_free_tier_requests", "GenerateRequestsPerDayPerProjectPerModel-FreeTier"
        )
        return 429, {}, body(429, "RESOURCE_EXHAUSTED", message, details[:2])
    message = f"The input token count ({tokens}) exceeds the maximum number of tokens allowed ({WINDOW})."
    return 400, {}, body(400, "INVALID_ARGUMENT", message)
