"""A model server for tests: the wire formats the real agent CLIs speak, on 127.0.0.1, stdlib only.

- Anthropic ``POST /v1/messages`` (SSE when ``"stream": true``, JSON otherwise);
- OpenAI ``POST /v1/chat/completions`` (streaming, with a usage chunk) and ``POST /v1/responses``
  (streaming events);
- Gemini ``POST /v1beta/models/M:generateContent`` and ``:streamGenerateContent?alt=sse``,
  ``:countTokens``;
- ``GET /v1/models`` (OpenAI and Anthropic fields in one answer).

What it answers is scripted: ``reply`` (a SPEC §5 report by default), optionally one ``Tool``
call first (the next request that carries the tool's result gets the reply; ``endless``: every
request that offers tools gets the call again, each reporting ``usage`` tokens, a model that
spends until its cap ends it), ``replies`` (a
reply per model name the request asks for, e.g. ``{"mock-a": ACCEPT}``; any other model gets
``reply``), and a ``mode``:
``ok``, ``error`` (HTTP 500), ``auth`` (HTTP 401), ``hang`` (never answers), or a limited mode
answered as the vendor of the wire format answers it (tests/modelfaults.py: ``rate_limit``,
``overloaded``, ``quota``, ``context``; ``retry_after`` seconds in the rate limit). ``refused()``
gives an address where nothing listens. Every request is recorded (``requests``) for
assertions.

    with ModelServer(reply=REPORT) as server:
        env["ANTHROPIC_BASE_URL"] = server.url
        ...
        assert "Brief for task t1" in server.requests[-1].text
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import modelfaults

REPORT = """DECISION: done
WHY: the mock model did what the brief asked
EVIDENCE:
- CONFIRMED: the brief reached the model (the mock server recorded it)
MISSING: nothing
NEXT COMMAND: control-room status
STOP RULE: stop when the validator passes
"""
MODEL = "mock-model"


@dataclass(frozen=True)
class Tool:
    """One tool call the model makes before its reply: ``name`` and its ``args``."""

    name: str
    args: dict[str, Any]


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    text: str
    json: Any = None


@dataclass
class ModelServer:
    reply: str = REPORT
    tool: Tool | None = None
    mode: str = "ok"  # ok | error | auth | hang | rate_limit | overloaded | quota | context
    retry_after: int = 20  # seconds, in a rate limit's headers and words
    model: str = MODEL
    replies: dict[str, str] = field(default_factory=dict)  # model name -> its reply
    endless: bool = False  # every request answers ``tool`` again, its result or not (a spending loop)
    usage: tuple[int, int] | None = None  # (input, output) tokens a tool call reports; None: counted
    reply_usage: tuple[int, int] | None = None  # ... and a reply (no tool call); None: counted
    delay: float = 0.0  # seconds each model answer takes (a real model is not instant)
    requests: list[Request] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._stop = threading.Event()
        server = _Server(("127.0.0.1", 0), _Handler)
        server.daemon_threads = True
        server.model_server = self  # type: ignore[attr-defined]
        self._server = server
        self.port = server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def __enter__(self) -> ModelServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._stop.set()  # a hanging handler returns
        self._server.shutdown()
        self._server.server_close()

    def record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    def reply_for(self, model: str | None) -> str:
        """What the model ``model`` answers: its entry in ``replies``, else ``reply``."""
        return self.replies.get(model or "", self.reply)

    def models(self) -> list[str]:
        """The model name each request asked for (in its body, or a Gemini path), in order."""
        with self._lock:
            return [m for m in (_model_of(r) for r in self.requests) if m]

    def bodies(self) -> str:
        """Every request body seen so far, in one string."""
        with self._lock:
            return "\n".join(r.text for r in self.requests)


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """Quiet for a client gone before its answer (a CLI ended mid-request); else as usual."""
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


def refused() -> str:
    """An address on 127.0.0.1 where nothing listens: a connection there is refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def _model_of(req: Request) -> str | None:
    """The model a request asks for: ``"model"`` in its JSON body, or ``models/M:`` in a Gemini path."""
    if isinstance(req.json, dict) and isinstance(req.json.get("model"), str):
        return str(req.json["model"])
    path = urlsplit(req.path).path
    if "/models/" in path and ":" in path:
        return path.split("/models/", 1)[1].split(":", 1)[0]
    return None


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    @property
    def ms(self) -> ModelServer:
        return self.server.model_server  # type: ignore[attr-defined,no-any-return]

    # -- plumbing -----------------------------------------------------------------------------

    def _read(self) -> Request:
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        text = raw.decode("utf-8", "replace")
        try:
            body = json.loads(text) if text else None
        except ValueError:
            body = None
        req = Request(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, text, body)
        self.ms.record(req)
        return req

    def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _sse(self, events: list[tuple[str | None, Any]]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for name, payload in events:
            data = payload if isinstance(payload, str) else json.dumps(payload)
            chunk = (f"event: {name}\n" if name else "") + f"data: {data}\n\n"
            self.wfile.write(chunk.encode())
            self.wfile.flush()
        self.close_connection = True

    def _fault(self, req: Request) -> bool:
        """Answer as the mode says, if it is not ``ok``; True when answered."""
        mode = self.ms.mode
        limited = modelfaults.answer(mode, urlsplit(self.path).path, self.ms.retry_after, _tokens(req.text))
        if limited is not None:
            self._json(limited[0], limited[2], limited[1])
            return True
        if mode == "hang":
            self.ms._stop.wait(600)
            self.close_connection = True
            return True
        if mode == "error":
            self._json(500, {"type": "error", "error": {"type": "api_error", "message": "mock server error",
                                                        "code": 500, "status": "INTERNAL"}})  # fmt: skip
            return True
        if mode == "auth":
            self._json(401, {"type": "error", "error": {"type": "authentication_error",
                                                        "message": "invalid api key",
                                                        "code": 401}})  # fmt: skip
            return True
        return False

    # -- routes -------------------------------------------------------------------------------

    def do_GET(self) -> None:
        self._read()
        path = urlsplit(self.path).path
        if path.rstrip("/").endswith("/models"):
            m = self.ms.model
            self._json(200, {"object": "list", "has_more": False, "first_id": m, "last_id": m, "data": [
                {"id": m, "object": "model", "type": "model", "created": 0, "owned_by": "mock",
                 "display_name": m, "created_at": "2026-01-01T00:00:00Z"}]})  # fmt: skip
            return
        self._json(404, {"error": {"message": f"no route {path}"}})

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        req = self._read()
        path = urlsplit(self.path).path
        body = req.json if isinstance(req.json, dict) else {}
        if path.endswith(":countTokens"):
            self._json(200, {"totalTokens": _tokens(req.text)})
            return
        if self._fault(req):
            return
        if self.ms.delay:
            self.ms._stop.wait(self.ms.delay)
        if path.endswith("/messages"):
            self._anthropic(req, body)
        elif path.endswith("/chat/completions"):
            self._chat(req, body)
        elif path.endswith("/responses"):
            self._responses(req, body)
        elif ":generateContent" in path or ":streamGenerateContent" in path:
            self._gemini(req, body, stream=":streamGenerateContent" in path)
        else:
            self._json(404, {"error": {"message": f"no route {path}"}})

    def _call_tool(self, done: bool, body: dict[str, Any] | None = None) -> Tool | None:
        """The scripted tool call, unless the request already carries its result; ``endless``:
        to every request that offers tools (a side request, such as opencode's title, gets the
        reply)."""
        if self.ms.endless:
            return self.ms.tool if (body or {}).get("tools") else None
        return None if done else self.ms.tool

    def _usage(self, tool: Tool | None, tokens_in: int, tokens_out: int) -> tuple[int, int]:
        """The usage an answer reports: the scripted ``usage`` for a tool call (``reply_usage``
        for a reply), else the counted tokens."""
        scripted = self.ms.usage if tool is not None else self.ms.reply_usage
        return scripted or (tokens_in, tokens_out)

    # Anthropic ------------------------------------------------------------------------------

    def _anthropic(self, req: Request, body: dict[str, Any]) -> None:
        done = '"tool_result"' in req.text
        tool = self._call_tool(done, body)
        mid, model = f"msg_{uuid.uuid4().hex[:12]}", str(body.get("model") or self.ms.model)
        usage_in, text = _tokens(req.text), self.ms.reply_for(_model_of(req))
        if tool is not None:
            block: dict[str, Any] = {"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:12]}",
                                     "name": tool.name, "input": tool.args}  # fmt: skip
            stop, out = "tool_use", _tokens(json.dumps(tool.args))
        else:
            block, stop, out = {"type": "text", "text": text}, "end_turn", _tokens(text)
        usage_in, out = self._usage(tool, usage_in, out)
        if not body.get("stream"):
            self._json(200, {"id": mid, "type": "message", "role": "assistant", "model": model,
                             "content": [block], "stop_reason": stop, "stop_sequence": None,
                             "usage": {"input_tokens": usage_in, "output_tokens": out}})  # fmt: skip
            return
        start = {**block, "input": {}} if tool else {"type": "text", "text": ""}
        delta = ({"type": "input_json_delta", "partial_json": json.dumps(tool.args)} if tool
                 else {"type": "text_delta", "text": text})  # fmt: skip
        self._sse([
            ("message_start", {"type": "message_start", "message": {
                "id": mid, "type": "message", "role": "assistant", "model": model, "content": [],
                "stop_reason": None, "stop_sequence": None,
                "usage": {"input_tokens": usage_in, "output_tokens": 1}}}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": start}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": out}}),
            ("message_stop", {"type": "message_stop"}),
        ])  # fmt: skip

    # OpenAI chat completions ----------------------------------------------------------------

    def _chat(self, req: Request, body: dict[str, Any]) -> None:
        messages = body.get("messages") if isinstance(body.get("messages"), list) else []
        done = any(isinstance(m, dict) and m.get("role") == "tool" for m in messages)
        tool = self._call_tool(done, body)
        cid, model, created = (
            f"chatcmpl-{uuid.uuid4().hex[:12]}",
            str(body.get("model") or self.ms.model),
            int(time.time()),
        )
        text = self.ms.reply_for(_model_of(req))
        n_in, n_out = self._usage(tool, _tokens(req.text), _tokens(text))
        usage = {"prompt_tokens": n_in, "completion_tokens": n_out, "total_tokens": n_in + n_out}
        calls = ([{"index": 0, "id": f"call_{uuid.uuid4().hex[:12]}", "type": "function",
                   "function": {"name": tool.name, "arguments": json.dumps(tool.args)}}]
                 if tool else None)  # fmt: skip
        finish = "tool_calls" if tool else "stop"
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": None if tool else text}
            if calls:
                message["tool_calls"] = [{k: v for k, v in c.items() if k != "index"} for c in calls]
            self._json(200, {"id": cid, "object": "chat.completion", "created": created, "model": model,
                             "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                             "usage": usage})  # fmt: skip
            return

        def chunk(delta: dict[str, Any], reason: str | None, **extra: Any) -> tuple[None, Any]:
            return None, {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                          "choices": [{"index": 0, "delta": delta, "finish_reason": reason}],
                          **extra}  # fmt: skip

        events = [chunk({"role": "assistant", "content": ""}, None)]
        events.append(chunk({"tool_calls": calls}, None) if calls else chunk({"content": text}, None))
        events.append(chunk({}, finish))
        options = body.get("stream_options")
        if isinstance(options, dict) and options.get("include_usage"):
            events.append((None, {"id": cid, "object": "chat.completion.chunk", "created": created,
                                  "model": model, "choices": [], "usage": usage}))  # fmt: skip
        else:  # usage on the last chunk, as several servers do
            events[-1][1]["usage"] = usage
        events.append((None, "[DONE]"))
        self._sse(events)

    # OpenAI responses -----------------------------------------------------------------------

    def _responses(self, req: Request, body: dict[str, Any]) -> None:
        done = '"function_call_output"' in req.text or '"custom_tool_call_output"' in req.text
        tool = self._call_tool(done, body)
        rid, model = f"resp_{uuid.uuid4().hex[:12]}", str(body.get("model") or self.ms.model)
        text = self.ms.reply_for(_model_of(req))
        n_in, n_out = self._usage(tool, _tokens(req.text), _tokens(text))
        usage = {"input_tokens": n_in, "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": n_out, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": n_in + n_out}  # fmt: skip
        if tool is not None:
            item: dict[str, Any] = {"type": "function_call", "id": f"fc_{uuid.uuid4().hex[:12]}",
                                    "call_id": f"call_{uuid.uuid4().hex[:12]}", "name": tool.name,
                                    "arguments": json.dumps(tool.args), "status": "completed"}  # fmt: skip
        else:
            item = {"type": "message", "id": f"msg_{uuid.uuid4().hex[:12]}", "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]}  # fmt: skip
        base = {"id": rid, "object": "response", "created_at": int(time.time()), "model": model}
        events: list[tuple[str | None, Any]] = [
            ("response.created", {"type": "response.created",
                                  "response": {**base, "status": "in_progress", "output": []}}),
            ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                            "item": {**item, "status": "in_progress"}}),
        ]  # fmt: skip
        if tool is None:
            part = {"type": "output_text", "text": "", "annotations": []}
            events += [
                ("response.content_part.added", {"type": "response.content_part.added", "item_id": item["id"],
                                                 "output_index": 0, "content_index": 0, "part": part}),
                ("response.output_text.delta", {"type": "response.output_text.delta", "item_id": item["id"],
                                                "output_index": 0, "content_index": 0, "delta": text}),
                ("response.output_text.done", {"type": "response.output_text.done", "item_id": item["id"],
                                               "output_index": 0, "content_index": 0, "text": text}),
                ("response.content_part.done", {"type": "response.content_part.done", "item_id": item["id"],
                                                "output_index": 0, "content_index": 0,
                                                "part": {**part, "text": text}}),
            ]  # fmt: skip
        events += [
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0,
                                           "item": item}),
            ("response.completed", {"type": "response.completed", "response": {
                **base, "status": "completed", "output": [item], "usage": usage}}),
        ]  # fmt: skip
        if not body.get("stream", True):
            self._json(200, {**base, "status": "completed", "output": [item], "usage": usage})
            return
        self._sse(events)

    # Gemini ---------------------------------------------------------------------------------

    def _gemini(self, req: Request, body: dict[str, Any], *, stream: bool) -> None:
        done = '"functionResponse"' in req.text
        tool = self._call_tool(done, body)
        text = self.ms.reply_for(_model_of(req))
        part: dict[str, Any] = (
            {"functionCall": {"name": tool.name, "args": tool.args}} if tool else {"text": text}
        )
        n_in, n_out = self._usage(tool, _tokens(req.text), _tokens(text))
        payload = {
            "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP",
                            "index": 0}],
            "usageMetadata": {"promptTokenCount": n_in, "candidatesTokenCount": n_out,
                              "totalTokenCount": n_in + n_out},
            "modelVersion": self.ms.model,
        }  # fmt: skip
        if stream:
            self._sse([(None, payload)])
        else:
            self._json(200, payload)
