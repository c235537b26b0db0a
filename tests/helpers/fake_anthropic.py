"""A fake Anthropic Messages API on 127.0.0.1, for tests without network.

The real `anthropic` client talks to it through `base_url` (or
``ANTHROPIC_BASE_URL``). It plays a script: each ``POST /v1/messages`` takes
the next step, which is a scripted reply (text and tool_use blocks, with any
stop reason the real API sends), a function of the request that returns one,
an HTTP error (429 with ``retry-after``, 529 overloaded, ...), an error
event in the middle of a streamed reply, or a connection dropped half way
through the response. It answers in JSON, or as
server-sent events when the request asks to stream. Every request body is
recorded. A function of the script that raises is a bug in the test: that
request gets a 500 the client does not retry, and `stop` (the fixture's
teardown) raises the exception, traceback and all.

Like the real server it refuses what the real one would:
- a tool_use without its tool_result in the next message (400);
- a thinking block whose prefix (system, tools and every message before
  it) changed since the reply that carried it: 400, or the block and every
  later one dropped and listed in ``input_transformations`` when the request
  declares ``thinking.block_binding.prefix_mismatch_behavior = "drop_block"``
  (docs: "Preserved thinking"; SDK: ``BetaThinkingBlockBindingParam``);
- more than four ``cache_control`` breakpoints (400);
- with `tool_types` = "custom", any tool whose ``type`` is not a plain
  JSON-schema tool (a gateway for other models: ``memory_20250818`` is 400);
- a prompt over `context_window` tokens (400 "prompt is too long");
- ``context_management`` without the ``context-management-2025-06-27`` beta,
  or at all when `context_management` is "rejected" (a gateway without it).

Prompt caching is imitated: a request prefix that ends at a ``cache_control``
breakpoint is written to the cache when it is at least `min_cacheable`
tokens long; a later request reads the longest cached prefix found at one of
its breakpoints or up to `LOOKBACK` blocks before it, while it is younger
than `ttl` seconds on the fake's `clock` (a read refreshes it). Tool result
clearing (``clear_tool_uses_20250919``) is applied before the count, as the
real server does. Token counts are characters / 4 of the JSON, except that a
Japanese, Chinese or Korean character is a whole token and any other
non-ASCII one half a token (`count`), as the real tokenizer takes them; and
``POST /v1/messages/count_tokens`` answers that count of a request
(``{"input_tokens": n}``) without taking a step of the script, recorded in
`counted` (`count_tokens` = "absent" answers 404, as a gateway without it).
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

CONTEXT_BETA = "context-management-2025-06-27"
LOOKBACK = 20  # blocks the real API looks back from a breakpoint for a cache hit
CLEARED = "[tool result cleared to save context]"
MAX_BREAKPOINTS = 4  # cache_control blocks per request; the top-level (automatic) one takes a slot


@dataclass
class Reply:
    """One model turn. `blocks` are ``{"type": "text", ...}`` or made with `tool_use()`."""

    blocks: list[dict[str, Any]]
    stop_reason: str | None = None  # default: tool_use when a block is one, else end_turn
    output_tokens: int | None = None  # default: estimated from the blocks
    delay: float = 0.0  # seconds to wait before answering
    stall: float = 0.0  # seconds of silence after the first events of a stream, as a stuck model would
    thinking: int = 0  # tokens the model thinks before its blocks (a thinking block comes first, billed as output)


@dataclass
class HttpError:
    status: int
    kind: str = "api_error"
    message: str = "scripted failure"
    times: int = 1  # how many consecutive requests get this error
    retry_after: str | None = None  # the `retry-after` header, in seconds, as the real API sends it


@dataclass
class Drop:
    """Answer 200, send part of the body, then close the connection."""

    times: int = 1


@dataclass
class StreamError:
    """Start a streamed reply, then send an ``error`` event, as the real API does when it overloads mid-reply."""

    kind: str = "overloaded_error"
    message: str = "Overloaded"
    times: int = 1


Step = Reply | HttpError | Drop | StreamError | Callable[[dict[str, Any]], Reply]


# What the real API refuses per model, from the docs (build-with-claude/thinking-troubleshooting, "Thinking
# support, defaults, and rejected configurations by model", and each model's overview page for its output
# limit), written here apart from dream's own models.toml so that a test against this server checks that table.
# Model name prefix -> (thinking types refused with 400, max_tokens limit).
MODEL_RULES: dict[str, tuple[frozenset[str], int]] = {
    "claude-opus-5-5": (frozenset({"disabled", "enabled", "between_tools"}), 128_000),
    "claude-fable-5": (frozenset({"disabled", "enabled", "between_tools"}), 128_000),
    "claude-mythos-5": (frozenset({"disabled", "enabled", "between_tools"}), 128_000),
    "claude-sonnet-5-5": (frozenset({"disabled", "enabled"}), 128_000),
    "claude-opus-4-7": (frozenset({"enabled", "between_tools"}), 128_000),
    "claude-haiku-4-5": (frozenset({"adaptive", "between_tools"}), 64_000),
    "claude-opus-4-1": (frozenset({"adaptive", "between_tools"}), 32_000),
    "claude-3-5-haiku": (frozenset({"adaptive", "enabled", "between_tools"}), 8_192),
}


def _check_model_rules(body: dict[str, Any]) -> str | None:
    """A `thinking` type the model refuses, a manual budget out of range, or `max_tokens` over its output limit."""
    model = str(body.get("model", ""))
    rule = next((MODEL_RULES[p] for p in sorted(MODEL_RULES, key=len, reverse=True) if model.startswith(p)), None)
    thinking = body.get("thinking") or {}
    if rule and thinking.get("type") in rule[0]:
        return f"thinking.type: {thinking['type']!r} is not supported on {model}"
    if thinking.get("type") == "enabled" and not 1024 <= thinking.get("budget_tokens", 0) < body["max_tokens"]:
        return "thinking.budget_tokens: must be at least 1024 and less than max_tokens"
    if rule and body["max_tokens"] > rule[1]:
        return f"max_tokens: {body['max_tokens']} > {rule[1]}, which is the maximum allowed number of output tokens for {model}"
    return None


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_use(name: str, **input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": input}


def raw_tool_use(name: str, input: Any) -> dict[str, Any]:
    """A tool_use whose input is given as is (e.g. malformed on purpose)."""
    return {"type": "tool_use", "name": name, "input": input}


def memory(command: str, **args: Any) -> dict[str, Any]:
    return tool_use("memory", command=command, **args)


_WHOLE_TOKEN = re.compile("[\u1100-\u11ff\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef\U00020000-\U0003ffff]")


def weight(value: str) -> int:
    """Quarter tokens of `value`: 1 an ASCII character, 4 a CJK one (a token), 2 any other (half a token)."""
    if value.isascii():
        return len(value)
    wide = len(_WHOLE_TOKEN.findall(value))
    other = len(value) - len(value.encode("ascii", "ignore")) - wide
    return len(value) + 3 * wide + other


def estimate_tokens(value: Any) -> int:
    return max(1, weight(json.dumps(value, sort_keys=True, ensure_ascii=False)) // 4)


def overloaded(times: int = 1) -> HttpError:
    return HttpError(529, "overloaded_error", "Overloaded", times=times)


def rate_limited(retry_after: str = "1", times: int = 1) -> HttpError:
    return HttpError(429, "rate_limit_error", "Number of request tokens has exceeded your rate limit",
                     times=times, retry_after=retry_after)


def auth_failed(status: int = 401) -> HttpError:
    """401 (a bad key) or 403 (a key without access to the model): never worth a retry."""
    if status == 401:
        return HttpError(401, "authentication_error", "invalid x-api-key")
    return HttpError(403, "permission_error", "Your API key does not have permission to use the specified resource.")


@dataclass
class FakeAnthropic:
    script: list[Step] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    protocol_errors: list[str] = field(default_factory=list)
    usages: list[dict[str, int]] = field(default_factory=list)  # the usage of every reply sent
    applied_edits: list[list[dict[str, Any]]] = field(default_factory=list)  # context edits, per reply
    context_window: int = 1_000_000  # tokens; a longer prompt is refused with 400 (tests set 200K)
    min_cacheable: int = 1024  # tokens: a shorter prefix is not cached (Sonnet's minimum)
    ttl: float = 300.0  # seconds a cached prefix lives after its last use
    context_management: str = "supported"  # supported | rejected (a gateway that lacks the beta)
    tool_types: str = "anthropic"  # anthropic | custom (a gateway that knows plain JSON-schema tools only)
    count_tokens: str = "offered"  # offered | absent (POST /v1/messages/count_tokens answers 404)
    counted: list[dict[str, Any]] = field(default_factory=list)  # the bodies of count_tokens requests
    transformations: list[list[dict[str, Any]]] = field(default_factory=list)  # thinking blocks dropped, per request
    thought: dict[str, int] = field(default_factory=dict)  # a thinking block's signature -> the tokens it thought
    clock: Callable[[], float] = time.monotonic
    cache: dict[str, float] = field(default_factory=dict)  # prefix key -> expiry on `clock`
    script_errors: list[Exception] = field(default_factory=list)  # raised by the script's reply functions
    in_flight: int = 0  # requests being answered now
    peak_in_flight: int = 0  # the most ever answered at once: what a shared limit on model calls must bound
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _tool_ids: int = 0
    _repeat: int = 0  # how many times the current error step has been served

    # -- lifecycle -------------------------------------------------------------

    def start(self) -> FakeAnthropic:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                fake._handle(self)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = serve_locally(Handler)
        return self

    def stop(self) -> None:
        """Stop serving; then raise the first exception a scripted reply raised, so the test fails with it."""
        self._server.shutdown()
        self._server.server_close()
        if self.script_errors:
            raise self.script_errors[0]

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def play(self, *steps: Step) -> None:
        """Replace the script (and forget the requests, not the cache)."""
        self.script = list(steps)
        self.requests.clear()
        self.headers.clear()
        self.protocol_errors.clear()
        self.usages.clear()
        self.applied_edits.clear()
        self.transformations.clear()
        self.counted.clear()
        self._repeat = 0

    # -- what tests read -------------------------------------------------------

    def tool_results(self) -> list[dict[str, Any]]:
        """Every tool_result the client sent, in order, each once (a new conversation segment drops old ones)."""
        out: dict[str, dict[str, Any]] = {}
        for request in self.requests:
            for message in request["messages"]:
                if message["role"] == "user" and isinstance(message["content"], list):
                    out.update((b["tool_use_id"], b) for b in message["content"] if b.get("type") == "tool_result"
                               and b["tool_use_id"] not in out)
        return list(out.values())

    # -- serving ---------------------------------------------------------------

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        with self._lock:
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            self._answer(handler)
        finally:
            with self._lock:
                self.in_flight -= 1

    def _answer(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        body = json.loads(handler.rfile.read(length) or b"{}")
        if handler.path.startswith("/v1/messages/count_tokens"):
            self._count(handler, body)
            return
        if not handler.path.startswith("/v1/messages"):
            self._send_error(handler, 404, "not_found_error", handler.path)
            return
        with self._lock:
            self.requests.append(body)
            headers = {k.lower(): v for k, v in handler.headers.items()}
            self.headers.append(headers)
            problem = self._check(body, headers)
            step = None if problem else self._next_step()
        if problem:
            self.protocol_errors.append(problem)
            self._send_error(handler, 400, "invalid_request_error", problem)
        elif step is None:
            self._send_error(handler, 500, "api_error", "script exhausted", retry=False)
        elif isinstance(step, HttpError):
            self._send_error(handler, step.status, step.kind, step.message, retry_after=step.retry_after)
        elif isinstance(step, Drop):
            self._drop(handler, body)
        elif isinstance(step, StreamError):
            self._stream_error(handler, body, step)
        elif isinstance(step, Reply):
            self._reply(handler, body, step)
        else:
            self._scripted(handler, body, step)

    def _scripted(self, handler: BaseHTTPRequestHandler, body: dict[str, Any],
                  step: Callable[[dict[str, Any]], Reply]) -> None:
        """A reply made by the test's function. One that raises is a bug in the test, not a server error: the
        client gets a 500 it does not retry, and `stop` raises the exception with its traceback."""
        try:
            reply = step(body)
        except Exception as exc:
            with self._lock:
                self.script_errors.append(exc)
            self._send_error(handler, 500, "api_error", f"the test's scripted reply raised {exc!r}; the fake raises "
                             "it again when it stops", retry=False)
            return
        self._reply(handler, body, reply)

    def _count(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        """``count_tokens``: the prompt's tokens as a request would count them (no cache is read or written)."""
        with self._lock:
            self.counted.append(body)
            _, sizes, _ = self._prefixes(body)
        if self.count_tokens == "absent":
            self._send_error(handler, 404, "not_found_error", handler.path, retry=False)
        else:
            self._send_json(handler, 200, {"input_tokens": sizes[-1]})

    def _next_step(self) -> Step | None:
        if not self.script:
            return None
        step = self.script[0]
        if isinstance(step, (HttpError, Drop, StreamError)):
            self._repeat += 1
            if self._repeat >= step.times:
                self.script.pop(0)
                self._repeat = 0
            return step
        return self.script.pop(0)

    def _check(self, body: dict[str, Any], headers: dict[str, str]) -> str | None:
        """What the real API would reject: missing fields, tool_use without tool_result, unknown betas."""
        for key in ("model", "max_tokens", "messages"):
            if key not in body:
                return f"{key}: Field required"
        if "context_management" in body:
            if self.context_management == "rejected":
                return "context_management: Extra inputs are not permitted"
            if CONTEXT_BETA not in headers.get("anthropic-beta", ""):
                return f"context_management: requires the beta header {CONTEXT_BETA}"
        if self.tool_types == "custom":
            for i, tool in enumerate(body.get("tools", [])):
                if tool.get("type", "custom") != "custom":
                    return f"tools.{i}.type: unknown tool type {tool['type']!r}; only custom tools are supported"
        problem = _check_model_rules(body) or self._check_thinking(body)
        if problem:
            return problem
        if _breakpoints(body) > MAX_BREAKPOINTS:
            return f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {_breakpoints(body)}."
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

    def _check_thinking(self, body: dict[str, Any]) -> str | None:
        """Every thinking block sent back must sit on the prefix it was produced on (its signature says which).

        On a mismatch the request is refused, or, with ``drop_block``, that
        block and every later thinking block leave the request (recorded in
        `transformations`). cache_control markers are not part of a prefix:
        the API's own automatic caching moves a breakpoint every turn.
        """
        binding = ((body.get("thinking") or {}).get("block_binding") or {}).get("prefix_mismatch_behavior") or "error"
        dropped: list[dict[str, Any]] = []
        invalid = False
        for i, message in enumerate(body["messages"]):
            if message["role"] != "assistant" or not isinstance(message["content"], list):
                continue
            kept = []
            for j, block in enumerate(message["content"]):
                if isinstance(block, dict) and block.get("type") in ("thinking", "redacted_thinking"):
                    invalid = invalid or block.get("signature") != _signature(body, i, message["content"][:j])
                    if invalid and binding != "drop_block":
                        return (f"messages.{i}.content.{j}: the messages before this thinking block differ from "
                                "those it was created with; thinking blocks must be passed back on an unchanged prefix")
                    if invalid:
                        dropped.append({"type": "thinking_dropped", "path": f"messages.{i}.content.{j}",
                                        "reason": "prefix_binding_mismatch"})
                        continue
                kept.append(block)
            message["content"] = kept
        self.transformations.append(dropped)
        return None

    # -- replies ---------------------------------------------------------------

    def _message(self, body: dict[str, Any], step: Reply, usage: dict[str, int]) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        thinking = step.thinking if (body.get("thinking") or {}).get("type") != "disabled" else 0
        if thinking:
            shown = "" if (body.get("thinking") or {}).get("display") == "omitted" else "hmm " * thinking
            signature = _signature(body, len(body["messages"]), [])
            self.thought[signature] = thinking
            content.append({"type": "thinking", "thinking": shown, "signature": signature})
        for block in step.blocks:
            if block["type"] == "tool_use":
                self._tool_ids += 1
                block = {**block, "id": f"toolu_fake_{self._tool_ids:04d}"}
            content.append(block)
        written = step.output_tokens if step.output_tokens is not None else estimate_tokens(
            [b for b in content if b["type"] != "thinking"])
        stop = step.stop_reason or ("tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn")
        if thinking + written > body.get("max_tokens", 1 << 30):
            content, written, stop = _cut(content, body["max_tokens"] - thinking), body["max_tokens"] - thinking, "max_tokens"
        usage = {**usage, "output_tokens": thinking + max(0, written)}
        self.usages.append(usage)
        message = {
            "id": f"msg_fake_{len(self.requests):04d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "fake"),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }
        if "context_management" in body:
            message["context_management"] = {"applied_edits": self.applied_edits[-1] if self.applied_edits else []}
        return message

    def _prepare(self, body: dict[str, Any]) -> tuple[dict[str, int] | None, str | None]:
        """Apply context edits and count the prompt: its usage, or why it is refused."""
        edits: list[dict[str, Any]] = []
        if "context_management" in body:
            body, edits = _clear_tool_uses(body)
        self.applied_edits.append(edits)
        usage = self._input_usage(body)
        total = sum(usage.values())
        if total > self.context_window:
            return None, f"prompt is too long: {total} tokens > {self.context_window} maximum"
        return usage, None

    def ideal_reads(self) -> list[int]:
        """Per request: the tokens of the longest prefix some earlier request sent (at a block's end).

        What a perfect cache would read (no breakpoints, no lookback, no
        minimum, no TTL): the ceiling of the cache reads any client could get
        for the same sequence of requests.
        """
        seen: set[str] = set()
        out = []
        for body in self.requests:
            keys, sizes, _ = self._prefixes(body)
            out.append(max((size for key, size in zip(keys, sizes) if key in seen), default=0))
            seen.update(keys)
        return out

    def _prefixes(self, body: dict[str, Any]) -> tuple[list[str], list[int], list[bool]]:
        """For each block of the prompt (tools, system, messages): its prefix's key, its tokens, and whether a
        breakpoint ends it."""
        blocks: list[Any] = [body.get("model"), *body.get("tools", [])]
        system = body.get("system", [])
        blocks += [{"type": "text", "text": system}] if isinstance(system, str) else list(system)
        for message in body["messages"]:
            content = message["content"] if isinstance(message["content"], list) else [message["content"]]
            blocks += [{"role": message["role"], **b} if isinstance(b, dict) else b for b in content]
        keys, sizes, marks = [], [], []
        digest = hashlib.sha256()
        chars = 0
        for i, block in enumerate(blocks):
            digest.update(json.dumps(unmarked(block), sort_keys=True).encode())
            keys.append(digest.copy().hexdigest())
            chars += weight(json.dumps(block, sort_keys=True, ensure_ascii=False)) + 2
            if isinstance(block, dict) and block.get("type") == "thinking":  # it stays in the context, shown or not
                chars += 4 * self.thought.get(block.get("signature", ""), 0)
            sizes.append(max(1, chars // 4))
            last = i == len(blocks) - 1
            marks.append(bool(isinstance(block, dict) and block.get("cache_control"))
                         or (last and bool(body.get("cache_control"))))
        return keys, sizes, marks

    def _input_usage(self, body: dict[str, Any]) -> dict[str, int]:
        """Split the request's input tokens into uncached, cache-written and cache-read, like the API."""
        keys, sizes, marks = self._prefixes(body)
        now = self.clock()
        self.cache = {k: t for k, t in self.cache.items() if t > now}
        read_at = -1
        for b in (i for i, marked in enumerate(marks) if marked):
            for j in range(b, max(-1, b - LOOKBACK - 1), -1):
                if keys[j] in self.cache:
                    read_at = max(read_at, j)
                    break
        read = sizes[read_at] if read_at >= 0 else 0
        if read_at >= 0:
            self.cache[keys[read_at]] = now + self.ttl
        written = 0
        for b in (i for i, marked in enumerate(marks) if marked and sizes[i] >= self.min_cacheable):
            self.cache[keys[b]] = now + self.ttl
            written = max(written, sizes[b])
        total = sizes[-1]
        created = max(0, written - read)
        return {
            "input_tokens": max(0, total - read - created),
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": created,
        }

    def _reply(self, handler: BaseHTTPRequestHandler, body: dict[str, Any], step: Reply) -> None:
        if step.delay:
            threading.Event().wait(step.delay)
        with self._lock:
            usage, refused = self._prepare(body)
            message = None if usage is None else self._message(body, step, usage)
        if message is None:
            self._send_error(handler, 400, "invalid_request_error", refused or "refused")
        elif body.get("stream"):
            self._stream(handler, message, stall=step.stall)
        else:
            self._send_json(handler, 200, message)

    def _stream(self, handler: BaseHTTPRequestHandler, message: dict[str, Any], cut: bool = False,
                stall: float = 0.0) -> None:
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.send_header("connection", "close")
        handler.end_headers()
        events = _events(message)
        for i, event in enumerate(events[: 2 if cut else len(events)]):
            if stall and i == 2:
                threading.Event().wait(stall)
            handler.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
            handler.wfile.flush()
        handler.close_connection = True

    def _drop(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        """Start a good answer, then hang up half way."""
        with self._lock:
            usage, _ = self._prepare(body)
            message = self._message(body, Reply([text("this reply is cut off")]), usage or {})
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

    def _stream_error(self, handler: BaseHTTPRequestHandler, body: dict[str, Any], step: StreamError) -> None:
        """200 and the start of a reply, then an error event (a JSON request gets the error as a 529)."""
        if not body.get("stream"):
            self._send_error(handler, 529, step.kind, step.message)
            return
        with self._lock:
            usage, _ = self._prepare(body)
            message = self._message(body, Reply([text("this reply breaks off")]), usage or {})
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.send_header("connection", "close")
        handler.end_headers()
        error = {"type": "error", "error": {"type": step.kind, "message": step.message}}
        for event in [*_events(message)[:2], error]:
            handler.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
            handler.wfile.flush()
        handler.close_connection = True

    def _send_error(self, handler: BaseHTTPRequestHandler, status: int, kind: str, message: str,
                    retry: bool = True, retry_after: str | None = None) -> None:
        self._send_json(handler, status, {"type": "error", "error": {"type": kind, "message": message}},
                        retry=retry, retry_after=retry_after)

    def _send_json(self, handler: BaseHTTPRequestHandler, status: int, payload: Any, retry: bool = True,
                   retry_after: str | None = None) -> None:
        data = json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(data)))
        handler.send_header("request-id", f"req_fake_{len(self.requests):04d}")
        if status >= 400:
            if retry_after is not None:
                handler.send_header("retry-after", retry_after)
            else:
                handler.send_header("retry-after-ms", "10")  # keep retry waits short in tests
            if not retry:
                handler.send_header("x-should-retry", "false")
        handler.end_headers()
        handler.wfile.write(data)


class _QuietServer(ThreadingHTTPServer):
    """A client that hangs up (a retry, a closed stream, a kept-alive socket) is no error worth printing."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


def serve_locally(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    """A server on 127.0.0.1 at a free port, answering on daemon threads (each fake API server starts one)."""
    server = _QuietServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
    return server


def _clear_tool_uses(body: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The server side of ``clear_tool_uses_20250919``: the oldest tool results give way to a placeholder.

    Defaults as documented: trigger at 100,000 input tokens, keep the last 3
    tool uses, clear nothing unless `clear_at_least` tokens can go.
    """
    edit = next((e for e in body["context_management"].get("edits", [])
                 if e.get("type") == "clear_tool_uses_20250919"), None)
    if edit is None:
        return body, []
    trigger = (edit.get("trigger") or {}).get("value", 100_000)
    keep = (edit.get("keep") or {}).get("value", 3)
    at_least = (edit.get("clear_at_least") or {}).get("value", 0)
    if estimate_tokens(body["messages"]) <= trigger:
        return body, []
    messages = json.loads(json.dumps(body["messages"]))
    results = [b for m in messages if m["role"] == "user" and isinstance(m["content"], list)
               for b in m["content"] if b.get("type") == "tool_result" and b.get("content") != CLEARED]
    victims = results[: max(0, len(results) - keep)]
    freed = sum(estimate_tokens(b.get("content", "")) for b in victims)
    if not victims or freed < at_least:
        return body, []
    for block in victims:
        block["content"] = CLEARED
    applied = {"type": "clear_tool_uses_20250919", "cleared_tool_uses": len(victims), "cleared_input_tokens": freed}
    return {**body, "messages": messages}, [applied]


def _breakpoints(body: dict[str, Any]) -> int:
    """The request's cache breakpoints: marked blocks in tools, system and messages, and the top-level one."""
    system = body.get("system")
    blocks = [*body.get("tools", []), *(system if isinstance(system, list) else [])]
    blocks += [b for m in body.get("messages", []) if isinstance(m.get("content"), list) for b in m["content"]]
    return sum(1 for b in blocks if isinstance(b, dict) and b.get("cache_control")) + bool(body.get("cache_control"))


def _cut(content: list[dict[str, Any]], room: int) -> list[dict[str, Any]]:
    """The blocks of a reply cut off at `room` output tokens: whole blocks, then the one cut in half.

    A tool_use cut in half comes with the input it had so far (none here), as
    the docs warn: "the truncated response contains an incomplete tool use
    block"; a text block is cut at the character.
    """
    out: list[dict[str, Any]] = []
    for block in content:
        if block["type"] == "thinking":
            out.append(block)
            continue
        size = estimate_tokens(block)
        if size <= room:
            out.append(block)
            room -= size
            continue
        if room > 0:
            out.append({**block, "input": {}} if block["type"] == "tool_use" else {**block, "text": block["text"][: room * 4]})
        break
    return out


def _signature(body: dict[str, Any], index: int, before: list[Any]) -> str:
    """What binds a thinking block: a digest of system, tools and the messages before it (markers aside)."""
    system = body.get("system", [])
    prefix = {
        "system": [{"type": "text", "text": system}] if isinstance(system, str) else system,
        "tools": body.get("tools", []),
        "messages": [*body["messages"][:index], {"role": "assistant", "content": before}],
    }
    return "sig-" + hashlib.sha256(json.dumps(unmarked(prefix), sort_keys=True).encode()).hexdigest()[:32]


def unmarked(value: Any) -> Any:
    """`value` without cache_control markers: where a breakpoint sits does not change the prefix."""
    if isinstance(value, dict):
        return {k: unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [unmarked(v) for v in value]
    return value


def serve_as_anthropic(fake: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Start a fake server, point the real client at it (ANTHROPIC_BASE_URL and a key), stop it afterwards."""
    fake.start()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-fake-key-for-tests")
    try:
        yield fake
    finally:
        fake.stop()


@pytest.fixture
def fake_api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    """A running fake API; the real client finds it through ANTHROPIC_BASE_URL."""
    yield from serve_as_anthropic(FakeAnthropic(), monkeypatch)


def _events(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The server-sent events that stream `message`, as the Messages API sends them."""
    start = {**message, "content": [], "stop_reason": None, "usage": {**message["usage"], "output_tokens": 1}}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for i, block in enumerate(message["content"]):
        if block["type"] == "thinking":
            events.append({"type": "content_block_start", "index": i,
                           "content_block": {"type": "thinking", "thinking": "", "signature": ""}})
            if block["thinking"]:
                events.append({"type": "content_block_delta", "index": i,
                               "delta": {"type": "thinking_delta", "thinking": block["thinking"]}})
            delta = {"type": "signature_delta", "signature": block["signature"]}
        elif block["type"] == "tool_use":
            events.append({"type": "content_block_start", "index": i, "content_block": {**block, "input": {}}})
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            events.append({"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}})
            delta = {"type": "text_delta", "text": block["text"]}
        events.append({"type": "content_block_delta", "index": i, "delta": delta})
        events.append({"type": "content_block_stop", "index": i})
    end: dict[str, Any] = {
        "type": "message_delta",
        "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
        "usage": {"output_tokens": message["usage"]["output_tokens"]},
    }
    if "context_management" in message:
        end["context_management"] = message["context_management"]
    events.append(end)
    events.append({"type": "message_stop"})
    return events
