"""A fake Anthropic Messages API on 127.0.0.1, for tests without network.

The real `anthropic` client talks to it through `base_url` (or
``ANTHROPIC_BASE_URL``). It plays a script: each ``POST /v1/messages`` takes
the next step, which is a scripted reply (text and tool_use blocks), an HTTP
error, or a connection dropped half way through the response. It answers in
JSON, or as server-sent events when the request asks to stream. Every request
body is recorded.

It also checks what a real server would refuse (a tool_use without its
tool_result in the next message), and imitates prompt caching: a request
prefix that ends at a ``cache_control`` breakpoint and was seen before is
reported as ``cache_read_input_tokens``; a new one as
``cache_creation_input_tokens``. Token counts are estimated as characters / 4.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator

import pytest


@dataclass
class Reply:
    """One model turn. `blocks` are ``{"type": "text", ...}`` or made with `tool_use()`."""

    blocks: list[dict[str, Any]]
    stop_reason: str | None = None  # default: tool_use when a block is one, else end_turn
    output_tokens: int | None = None  # default: estimated from the blocks
    delay: float = 0.0  # seconds to wait before answering


@dataclass
class HttpError:
    status: int
    kind: str = "api_error"
    message: str = "scripted failure"
    times: int = 1  # how many consecutive requests get this error


@dataclass
class Drop:
    """Answer 200, send part of the body, then close the connection."""

    times: int = 1


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_use(name: str, **input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": input}


def raw_tool_use(name: str, input: Any) -> dict[str, Any]:
    """A tool_use whose input is given as is (e.g. malformed on purpose)."""
    return {"type": "tool_use", "name": name, "input": input}


def memory(command: str, **args: Any) -> dict[str, Any]:
    return tool_use("memory", command=command, **args)


def estimate_tokens(value: Any) -> int:
    return max(1, len(json.dumps(value, sort_keys=True, ensure_ascii=False)) // 4)


@dataclass
class FakeAnthropic:
    script: list[Reply | HttpError | Drop] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    protocol_errors: list[str] = field(default_factory=list)
    usages: list[dict[str, int]] = field(default_factory=list)  # the usage of every reply sent
    cached_prefixes: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _tool_ids: int = 0
    _repeat: int = 0  # how many times the current error step has been served

    # -- lifecycle -------------------------------------------------------------

    def start(self) -> "FakeAnthropic":
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                fake._handle(self)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def play(self, *steps: Reply | HttpError | Drop) -> None:
        """Replace the script (and forget the requests, not the cache)."""
        self.script = list(steps)
        self.requests.clear()
        self.headers.clear()
        self.protocol_errors.clear()
        self.usages.clear()
        self._repeat = 0

    # -- what tests read -------------------------------------------------------

    def tool_results(self) -> list[dict[str, Any]]:
        """Every tool_result the client sent, in order (from the last request, which holds the whole history)."""
        if not self.requests:
            return []
        out = []
        for message in self.requests[-1]["messages"]:
            if message["role"] == "user" and isinstance(message["content"], list):
                out.extend(b for b in message["content"] if b.get("type") == "tool_result")
        return out

    # -- serving ---------------------------------------------------------------

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        body = json.loads(handler.rfile.read(length) or b"{}")
        if not handler.path.startswith("/v1/messages"):
            self._send_json(handler, 404, {"type": "error", "error": {"type": "not_found_error", "message": handler.path}})
            return
        with self._lock:
            self.requests.append(body)
            self.headers.append({k.lower(): v for k, v in handler.headers.items()})
            step = self._next_step()
            problem = self._check(body)
        if problem:
            self.protocol_errors.append(problem)
            self._send_json(handler, 400, {"type": "error", "error": {"type": "invalid_request_error", "message": problem}})
        elif step is None:
            self._send_json(handler, 500, {"type": "error", "error": {"type": "api_error", "message": "script exhausted"}}, retry=False)
        elif isinstance(step, HttpError):
            error = {"type": "error", "error": {"type": step.kind, "message": step.message}}
            self._send_json(handler, step.status, error)
        elif isinstance(step, Drop):
            self._drop(handler, body)
        else:
            self._reply(handler, body, step)

    def _next_step(self) -> Reply | HttpError | Drop | None:
        if not self.script:
            return None
        step = self.script[0]
        if isinstance(step, (HttpError, Drop)):
            self._repeat += 1
            if self._repeat >= step.times:
                self.script.pop(0)
                self._repeat = 0
            return step
        return self.script.pop(0)

    def _check(self, body: dict[str, Any]) -> str | None:
        """What the real API would reject: missing fields, tool_use without tool_result."""
        for key in ("model", "max_tokens", "messages"):
            if key not in body:
                return f"{key}: Field required"
        messages = body["messages"]
        for i, message in enumerate(messages[:-1]):
            if message["role"] != "assistant" or not isinstance(message["content"], list):
                continue
            wanted = {b["id"] for b in message["content"] if b.get("type") == "tool_use"}
            follow = messages[i + 1]["content"] if messages[i + 1]["role"] == "user" else []
            given = {b.get("tool_use_id") for b in follow if isinstance(b, dict) and b.get("type") == "tool_result"}
            if wanted - given:
                return f"messages.{i + 1}: tool_use ids without tool_result: {sorted(wanted - given)}"
        return None

    # -- replies ---------------------------------------------------------------

    def _message(self, body: dict[str, Any], step: Reply) -> dict[str, Any]:
        content = []
        for block in step.blocks:
            if block["type"] == "tool_use":
                self._tool_ids += 1
                block = {**block, "id": f"toolu_fake_{self._tool_ids:04d}"}
            content.append(block)
        usage = {
            **self._input_usage(body),
            "output_tokens": step.output_tokens if step.output_tokens is not None else estimate_tokens(content),
        }
        self.usages.append(usage)
        stop = step.stop_reason or ("tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn")
        return {
            "id": f"msg_fake_{len(self.requests):04d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "fake"),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }

    def _input_usage(self, body: dict[str, Any]) -> dict[str, int]:
        """Split the request's input tokens into uncached, cache-written and cache-read, like the API.

        A prefix is cached when a request marked a breakpoint at its end. A later
        request reads the longest cached prefix it starts with (the API looks a
        few blocks back from each breakpoint; this fake looks at every block).
        """
        prefix: list[Any] = [body.get("model")]
        positions: list[tuple[str, int, bool]] = []  # (prefix key, tokens, is a breakpoint)

        def add(block: Any, breakpoint: bool = False) -> None:
            prefix.append(block)
            marked = breakpoint or (isinstance(block, dict) and bool(block.get("cache_control")))
            key = hashlib.sha256(json.dumps(_unmarked(prefix), sort_keys=True).encode()).hexdigest()
            positions.append((key, estimate_tokens(prefix), marked))

        blocks: list[Any] = list(body.get("tools", []))
        system = body.get("system", [])
        blocks += [{"type": "text", "text": system}] if isinstance(system, str) else list(system)
        for message in body["messages"]:
            content = message["content"] if isinstance(message["content"], list) else [message["content"]]
            blocks += [{"role": message["role"], **b} if isinstance(b, dict) else b for b in content]
        for i, block in enumerate(blocks):
            add(block, breakpoint=bool(body.get("cache_control")) and i == len(blocks) - 1)
        total = estimate_tokens(prefix)
        read = max((n for key, n, _ in positions if key in self.cached_prefixes), default=0)
        written = max((n for _, n, marked in positions if marked), default=0)
        created = max(0, written - read)
        self.cached_prefixes.update(key for key, _, marked in positions if marked)
        return {
            "input_tokens": max(0, total - read - created),
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": created,
        }

    def _reply(self, handler: BaseHTTPRequestHandler, body: dict[str, Any], step: Reply) -> None:
        if step.delay:
            threading.Event().wait(step.delay)
        with self._lock:
            message = self._message(body, step)
        if body.get("stream"):
            self._stream(handler, message)
        else:
            self._send_json(handler, 200, message)

    def _stream(self, handler: BaseHTTPRequestHandler, message: dict[str, Any], cut: bool = False) -> None:
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.send_header("connection", "close")
        handler.end_headers()
        for event in _events(message):
            handler.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
            handler.wfile.flush()
            if cut:
                break
        handler.close_connection = True

    def _drop(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        """Start a good answer, then hang up half way."""
        message = self._message(body, Reply([text("this reply is cut off")]))
        if body.get("stream"):
            self._stream(handler, message, cut=True)
            return
        data = json.dumps(message).encode()
        handler.send_response(200)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data[: len(data) // 2])
        handler.wfile.flush()
        handler.close_connection = True

    def _send_json(self, handler: BaseHTTPRequestHandler, status: int, payload: Any, retry: bool = True) -> None:
        data = json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(data)))
        handler.send_header("request-id", f"req_fake_{len(self.requests):04d}")
        if status >= 400:
            handler.send_header("retry-after-ms", "10")  # keep retry waits short in tests
            if not retry:
                handler.send_header("x-should-retry", "false")
        handler.end_headers()
        handler.wfile.write(data)


def _unmarked(value: Any) -> Any:
    """`value` without cache_control markers: where a breakpoint sits does not change the prefix."""
    if isinstance(value, dict):
        return {k: _unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_unmarked(v) for v in value]
    return value


@pytest.fixture
def fake_api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    """A running fake API; the real client finds it through ANTHROPIC_BASE_URL."""
    fake = FakeAnthropic().start()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-fake-key-for-tests")
    try:
        yield fake
    finally:
        fake.stop()


def _events(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The server-sent events that stream `message`, as the Messages API sends them."""
    start = {**message, "content": [], "stop_reason": None, "usage": {**message["usage"], "output_tokens": 1}}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for i, block in enumerate(message["content"]):
        if block["type"] == "tool_use":
            events.append({"type": "content_block_start", "index": i, "content_block": {**block, "input": {}}})
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            events.append({"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}})
            delta = {"type": "text_delta", "text": block["text"]}
        events.append({"type": "content_block_delta", "index": i, "delta": delta})
        events.append({"type": "content_block_stop", "index": i})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": message["usage"]["output_tokens"]},
        }
    )
    events.append({"type": "message_stop"})
    return events
