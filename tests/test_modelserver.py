"""tests/modelserver.py, the model server the real-CLI tier drives the CLIs against: each wire
format, the scripted tool call and its result, the error modes, the record of requests. (The
real-CLI tier is not in the default run; these keep the server honest in every run.)"""

from __future__ import annotations

import json
import re
import threading
import urllib.error
import urllib.request
from typing import Any

import modelfaults
import pytest
from modelserver import REPORT, ModelServer, Tool, refused

TOOL = Tool("write_file", {"file_path": "out.txt", "content": "hello\n"})


def post(url: str, body: dict[str, Any], timeout: float = 10) -> tuple[int, str]:
    req = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def sse(text: str) -> list[Any]:
    """The data payloads of an event stream, JSON-decoded where they are JSON."""
    out = []
    for block in text.split("\n\n"):
        for line in block.splitlines():
            if line.startswith("data: "):
                data = line[6:]
                out.append(data if data == "[DONE]" else json.loads(data))
    return out


def test_anthropic_messages_stream_and_json() -> None:
    with ModelServer() as s:
        code, text = post(f"{s.url}/v1/messages?beta=true", {"model": "m", "stream": True, "messages": []})
        events = sse(text)
        assert code == 200 and [e["type"] for e in events] == [
            "message_start", "content_block_start", "content_block_delta", "content_block_stop",
            "message_delta", "message_stop"]  # fmt: skip
        assert events[2]["delta"] == {"type": "text_delta", "text": REPORT}
        code, text = post(f"{s.url}/v1/messages", {"model": "m", "messages": []})
        body = json.loads(text)
        assert (body["content"], body["stop_reason"]) == ([{"type": "text", "text": REPORT}], "end_turn")
        assert body["usage"]["input_tokens"] > 0


def test_anthropic_tool_call_then_reply_once_the_result_comes_back() -> None:
    with ModelServer(tool=TOOL) as s:
        first = json.loads(post(f"{s.url}/v1/messages", {"messages": [{"role": "user", "content": "go"}]})[1])
        assert first["stop_reason"] == "tool_use"
        (use,) = first["content"]
        assert (use["type"], use["name"], use["input"]) == ("tool_use", "write_file", TOOL.args)
        result = {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": use["id"], "content": "ok"}],
        }
        second = json.loads(post(f"{s.url}/v1/messages", {"messages": [result]})[1])
        assert second["content"] == [{"type": "text", "text": REPORT}]


def test_chat_completions_stream_with_usage_and_a_tool_call() -> None:
    with ModelServer(tool=TOOL) as s:
        body = {"model": "m", "stream": True, "stream_options": {"include_usage": True},
                "messages": [{"role": "user", "content": "go"}]}  # fmt: skip
        chunks = sse(post(f"{s.url}/v1/chat/completions", body)[1])
        assert chunks[-1] == "[DONE]" and chunks[-2]["usage"]["completion_tokens"] > 0
        call = chunks[1]["choices"][0]["delta"]["tool_calls"][0]
        assert (call["function"]["name"], json.loads(call["function"]["arguments"])) == (
            "write_file",
            TOOL.args,
        )
        assert chunks[2]["choices"][0]["finish_reason"] == "tool_calls"
        body["messages"].append({"role": "tool", "tool_call_id": call["id"], "content": "ok"})
        chunks = sse(post(f"{s.url}/v1/chat/completions", body)[1])
        assert chunks[1]["choices"][0]["delta"] == {"content": REPORT}


def test_responses_stream_ends_completed_with_usage() -> None:
    with ModelServer() as s:
        events = sse(post(f"{s.url}/v1/responses", {"model": "m", "input": "go", "stream": True})[1])
        kinds = [e["type"] for e in events]
        assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
        assert "response.output_text.delta" in kinds
        done = events[-1]["response"]
        assert done["output"][0]["content"][0]["text"] == REPORT and done["usage"]["output_tokens"] > 0


def test_responses_tool_call_is_a_function_call_item() -> None:
    with ModelServer(tool=TOOL) as s:
        events = sse(post(f"{s.url}/v1/responses", {"input": "go", "stream": True})[1])
        item = events[-1]["response"]["output"][0]
        assert (item["type"], item["name"], json.loads(item["arguments"])) == (
            "function_call",
            "write_file",
            TOOL.args,
        )
        back = {
            "input": [{"type": "function_call_output", "call_id": item["call_id"], "output": "ok"}],
            "stream": True,
        }
        events = sse(post(f"{s.url}/v1/responses", back)[1])
        assert events[-1]["response"]["output"][0]["type"] == "message"


def test_gemini_generate_and_stream_and_count_tokens() -> None:
    with ModelServer() as s:
        body = json.loads(post(f"{s.url}/v1beta/models/m:generateContent", {"contents": []})[1])
        assert body["candidates"][0]["content"]["parts"] == [{"text": REPORT}]
        (chunk,) = sse(post(f"{s.url}/v1beta/models/m:streamGenerateContent?alt=sse", {"contents": []})[1])
        assert chunk["usageMetadata"]["candidatesTokenCount"] > 0
        assert (
            json.loads(post(f"{s.url}/v1beta/models/m:countTokens", {"contents": []})[1])["totalTokens"] > 0
        )


def test_models_lists_the_model_in_both_shapes() -> None:
    with ModelServer(model="mock-model") as s, urllib.request.urlopen(f"{s.url}/v1/models") as r:
        (entry,) = json.loads(r.read())["data"]
    assert (entry["id"], entry["object"], entry["type"]) == ("mock-model", "model", "model")


@pytest.mark.parametrize(("mode", "code"), [("error", 500), ("auth", 401)])
def test_error_modes_answer_with_their_status(mode: str, code: int) -> None:
    with ModelServer(mode=mode) as s:
        status, text = post(f"{s.url}/v1/chat/completions", {"messages": []})
    assert status == code and "error" in json.loads(text)


def test_hang_never_answers_and_close_ends_it() -> None:
    s = ModelServer(mode="hang")
    try:
        with pytest.raises((TimeoutError, urllib.error.URLError)):
            post(f"{s.url}/v1/messages", {"messages": []}, timeout=0.5)
    finally:
        closer = threading.Thread(target=s.close)
        closer.start()
        closer.join(timeout=10)
    assert not closer.is_alive()


def test_refused_is_an_address_where_nothing_listens() -> None:
    with pytest.raises(urllib.error.URLError) as err:
        post(f"{refused()}/v1/messages", {"messages": []}, timeout=5)
    assert isinstance(err.value.reason, ConnectionRefusedError)


def test_every_request_is_recorded() -> None:
    with ModelServer() as s:
        post(f"{s.url}/v1/messages", {"model": "m", "messages": [{"role": "user", "content": "the brief"}]})
        (req,) = s.requests
    assert (req.method, req.path, req.json["model"]) == ("POST", "/v1/messages", "m")
    assert "the brief" in s.bodies() and req.headers["content-type"] == "application/json"


def test_each_model_gets_its_own_reply_and_the_models_asked_for_are_recorded() -> None:
    with ModelServer(replies={"mock-a": "from a"}) as s:
        for model in ("mock-a", "other"):
            post(f"{s.url}/v1/messages", {"model": model, "messages": []})
        code, text = post(f"{s.url}/v1/chat/completions", {"model": "mock-a", "messages": []})
        assert code == 200
        assert json.loads(text)["choices"][0]["message"]["content"] == "from a"
        assert s.models() == ["mock-a", "other", "mock-a"]
        assert (s.reply_for("mock-a"), s.reply_for("other")) == ("from a", REPORT)


ROUTES = {
    "anthropic": ("/v1/messages", {"model": "m", "stream": True, "messages": []}),
    "chat": ("/v1/chat/completions", {"model": "m", "stream": True, "messages": []}),
    "responses": ("/v1/responses", {"model": "m", "stream": True, "input": []}),
    "gemini": ("/v1beta/models/m:generateContent", {"contents": []}),
    "gemini-stream": ("/v1beta/models/m:streamGenerateContent?alt=sse", {"contents": []}),
}


def post_full(url: str, body: dict[str, Any]) -> tuple[int, dict[str, str], Any]:
    req = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, json.loads(e.read().decode())


@pytest.mark.parametrize(
    ("route", "mode", "status", "kind"),
    [
        ("anthropic", "rate_limit", 429, "rate_limit_error"),
        ("anthropic", "overloaded", 529, "overloaded_error"),
        ("anthropic", "quota", 400, "invalid_request_error"),
        ("anthropic", "context", 400, "invalid_request_error"),
        ("chat", "rate_limit", 429, "rate_limit_exceeded"),
        ("responses", "rate_limit", 429, "rate_limit_exceeded"),
        ("chat", "overloaded", 503, "server_is_overloaded"),
        ("responses", "quota", 429, "insufficient_quota"),
        ("chat", "quota", 429, "insufficient_quota"),
        ("chat", "context", 400, "context_length_exceeded"),
        ("responses", "context", 400, "context_length_exceeded"),
        ("gemini", "rate_limit", 429, "RESOURCE_EXHAUSTED"),
        ("gemini-stream", "rate_limit", 429, "RESOURCE_EXHAUSTED"),
        ("gemini", "overloaded", 503, "UNAVAILABLE"),
        ("gemini-stream", "quota", 429, "RESOURCE_EXHAUSTED"),
        ("gemini", "context", 400, "INVALID_ARGUMENT"),
    ],
)
def test_limited_modes_answer_as_the_vendor_of_the_wire_format(
    route: str, mode: str, status: int, kind: str
) -> None:
    path, body = ROUTES[route]
    with ModelServer(mode=mode, retry_after=7) as s:
        code, headers, answer = post_full(s.url + path, body)
    assert code == status
    error = answer["error"]
    if route == "anthropic":
        assert answer["type"] == "error" and error["type"] == kind
    elif route.startswith("gemini"):
        assert (error["code"], error["status"]) == (status, kind)
    else:
        assert kind in (error["type"], error["code"])
    words = {"rate_limit": "", "overloaded": "verloaded", "quota": "quota",
             "context": "context length" if route in ("chat", "responses") else "token"}  # fmt: skip
    if route == "anthropic":
        words.update(quota="credit balance is too low", context="prompt is too long: ")
    assert words[mode] in error["message"]
    if mode == "rate_limit":
        assert headers["retry-after"] == "7"


def test_a_rate_limit_gives_each_vendors_reset_headers() -> None:
    with ModelServer(mode="rate_limit", retry_after=30) as s:
        _, anthropic, _ = post_full(s.url + ROUTES["anthropic"][0], ROUTES["anthropic"][1])
        _, openai, body = post_full(s.url + ROUTES["chat"][0], ROUTES["chat"][1])
        _, _, gemini = post_full(s.url + ROUTES["gemini"][0], ROUTES["gemini"][1])
    reset = anthropic["anthropic-ratelimit-requests-reset"]
    assert (
        re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", reset)
        and anthropic["anthropic-ratelimit-requests-remaining"] == "0"
    )
    assert openai["x-ratelimit-reset-requests"] == "30s" and openai["x-ratelimit-remaining-requests"] == "0"
    assert "Please try again in 30s." in body["error"]["message"]
    (retry,) = [d for d in gemini["error"]["details"] if d["@type"].endswith("RetryInfo")]
    assert retry["retryDelay"] == "30s"


def test_the_anthropic_reset_stamp_is_now_plus_the_wait_in_utc() -> None:
    assert modelfaults.reset_stamp(1_764_867_600.7, 20) == "2025-12-04T17:00:20Z"


def test_limited_modes_leave_other_routes_alone() -> None:
    with ModelServer(mode="rate_limit") as s:
        status, text = post(f"{s.url}/v1beta/models/m:countTokens", {"contents": []})
        assert status == 200 and "totalTokens" in json.loads(text)
        with urllib.request.urlopen(f"{s.url}/v1/models", timeout=10) as r:
            assert r.status == 200
