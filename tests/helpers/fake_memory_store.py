"""A fake Anthropic memory-stores API on 127.0.0.1, for tests without network.

The real `anthropic` client talks to it through `base_url` (or
``ANTHROPIC_BASE_URL``) with ``client.beta.memory_stores.memories`` and
``.memory_versions``. It implements what the SDK documents
(anthropic/resources/beta/memory_stores, types/beta/memory_stores):

- every request must carry an API key (this SDK sends it as a bearer token) and the ``anthropic-beta`` header with
  ``agent-memory-2026-07-22`` or ``managed-agents-2026-04-01`` (else 400/401);
- create, retrieve, update (``POST .../memories/{id}``: content and/or path,
  an optional ``content_sha256`` precondition), list and delete (optional
  ``expected_content_sha256``) memories; list memory versions;
- cursor pagination: ``limit`` 1-100, default 20, at most 20 with
  ``view=full``; ``next_page`` is an opaque cursor; ``path_prefix`` must end
  with ``/`` and matches whole segments;
- ``view``: ``basic`` (content null) by default on list, create and update,
  ``full`` on retrieve;
- 409 ``memory_precondition_failed_error`` when a precondition fails (200 when
  the memory already holds exactly what was asked), 409
  ``memory_path_conflict_error`` when a create or rename targets a used or
  overlapping path, 400 for content over 102,400 bytes or a bad path, 404 for
  an unknown memory;
- every change adds a version (``memver_...``); versions stay after a delete.

Tests change the store "behind dream's back" with `put` / `remove` (as an
agent session would) and read the counts of unguarded writes:
`unconditional_updates`, `unconditional_deletes`, `creates_over_existing`.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import threading
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from helpers.fake_anthropic import serve_as_anthropic, serve_locally

BETAS = {"agent-memory-2026-07-22", "managed-agents-2026-04-01"}
MAX_CONTENT_BYTES = 102_400
MAX_PATH_BYTES = 1024
MAX_SEGMENTS = 20
FULL_VIEW_PAGE = 20


class ApiError(Exception):
    def __init__(self, status: int, kind: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status, self.kind, self.extra = status, kind, extra


@dataclass
class Memory:
    id: str
    path: str
    content: str
    version_id: str
    created_at: str
    updated_at: str

    @property
    def sha(self) -> str:
        return sha256(self.content)


@dataclass
class FakeMemoryStore:
    store_id: str = "memstore_01TestStore"
    memories: dict[str, Memory] = field(default_factory=dict)  # id -> memory
    versions: list[dict[str, Any]] = field(default_factory=list)
    requests: list[tuple[str, str]] = field(default_factory=list)  # (method, path) of every API call
    unconditional_updates: int = 0
    unconditional_deletes: int = 0
    creates_over_existing: int = 0
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # ---- test side -------------------------------------------------------------------------------------------
    def start(self) -> FakeMemoryStore:
        store = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                store._handle(self, "GET")

            def do_POST(self) -> None:
                store._handle(self, "POST")

            def do_DELETE(self) -> None:
                store._handle(self, "DELETE")

            def log_message(self, *args: Any) -> None:
                pass

        self._server = serve_locally(Handler)
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def put(self, path: str, content: str) -> Memory:
        """Write `content` at `path` as an agent session would (no precondition, not counted)."""
        with self._lock:
            found = self._at(path)
            if found is None:
                return self._create(path, content)
            return self._update(found, content, None)

    def remove(self, path: str) -> None:
        with self._lock:
            found = self._at(path)
            assert found is not None, path
            self._delete(found)

    def files(self) -> dict[str, str]:
        """path -> content of every live memory."""
        return {m.path: m.content for m in sorted(self.memories.values(), key=lambda m: m.path)}

    def by_path(self, path: str) -> Memory:
        found = self._at(path)
        assert found is not None, path
        return found

    # ---- the store -------------------------------------------------------------------------------------------
    def _now(self) -> str:
        return datetime.now(timezone.utc).isoformat()

    def _at(self, path: str) -> Memory | None:
        return next((m for m in self.memories.values() if m.path == path), None)

    def _version(self, memory: Memory, operation: str) -> str:
        vid = f"memver_{next(self._ids):06d}"
        deleted = operation == "deleted"
        self.versions.append({
            "type": "memory_version", "id": vid, "memory_id": memory.id, "memory_store_id": self.store_id,
            "operation": operation, "created_at": self._now(), "path": memory.path,
            "content": None if deleted else memory.content,
            "content_sha256": None if deleted else memory.sha,
            "content_size_bytes": None if deleted else len(memory.content.encode()),
        })
        return vid

    def _create(self, path: str, content: str) -> Memory:
        now = self._now()
        memory = Memory(f"mem_{next(self._ids):06d}", path, content, "", now, now)
        memory.version_id = self._version(memory, "created")
        self.memories[memory.id] = memory
        return memory

    def _update(self, memory: Memory, content: str | None, path: str | None) -> Memory:
        if content is not None:
            memory.content = content
        if path is not None:
            memory.path = path
        memory.updated_at = self._now()
        memory.version_id = self._version(memory, "modified")
        return memory

    def _delete(self, memory: Memory) -> None:
        self._version(memory, "deleted")
        del self.memories[memory.id]

    def _overlap(self, path: str, moving: str | None = None) -> Memory | None:
        """A memory (other than `moving`) at `path`, or at an ancestor or descendant of it."""
        for m in self.memories.values():
            if m.id != moving and (m.path == path or m.path.startswith(path + "/") or path.startswith(m.path + "/")):
                return m
        return None

    # ---- HTTP ------------------------------------------------------------------------------------------------
    def _handle(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        url = urlparse(handler.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        length = int(handler.headers.get("content-length") or 0)
        try:
            body = json.loads(handler.rfile.read(length) or b"{}") if length else {}
            with self._lock:
                self.requests.append((method, url.path))
                self._check_headers(handler)
                status, payload = self._route(method, url.path.rstrip("/").split("/"), query, body)
        except ApiError as e:
            status, payload = e.status, {"type": "error", "error": {"type": e.kind, "message": str(e), **e.extra}}
        except (ValueError, KeyError, TypeError) as e:
            status, payload = 400, {"type": "error", "error": {"type": "invalid_request_error", "message": str(e)}}
        data = json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(data)))
        if status == 409:
            handler.send_header("x-should-retry", "false")  # a conflict does not go away by asking again
        handler.end_headers()
        handler.wfile.write(data)

    def _check_headers(self, handler: BaseHTTPRequestHandler) -> None:
        if not (handler.headers.get("x-api-key") or handler.headers.get("authorization", "").startswith("Bearer ")):
            raise ApiError(401, "authentication_error", "an API key (x-api-key or Authorization: Bearer) is required")
        betas = {b.strip() for b in (handler.headers.get("anthropic-beta") or "").split(",")}
        if not betas & BETAS:
            raise ApiError(400, "invalid_request_error",
                           "this endpoint is in beta: send agent-memory-2026-07-22 in the anthropic-beta header")

    def _route(self, method: str, parts: list[str], query: dict[str, str], body: dict[str, Any]
               ) -> tuple[int, Any]:
        # ['', 'v1', 'memory_stores', sid, 'memories', mid?]
        if len(parts) < 5 or parts[1:3] != ["v1", "memory_stores"]:
            raise ApiError(404, "not_found_error", "no such endpoint")
        if parts[3] != self.store_id:
            raise ApiError(404, "not_found_error", f"memory store {parts[3]} not found")
        full = query.get("view") == "full"
        if parts[4] == "memory_versions" and len(parts) == 5 and method == "GET":
            rows = [v for v in self.versions if v["memory_id"] == query["memory_id"]] if "memory_id" in query \
                else list(self.versions)
            rows = [v if full else {**v, "content": None} for v in reversed(rows)]
            return 200, self._page(rows, query, full)
        if parts[4] != "memories":
            raise ApiError(404, "not_found_error", "no such endpoint")
        if len(parts) == 5:
            if method == "GET":
                return 200, self._list(query, full)
            if method == "POST":
                return 200, self._json(self._create_checked(body["path"], body["content"]), query.get("view") == "full")
        elif len(parts) == 6:
            memory = self.memories.get(parts[5])
            if memory is None:
                raise ApiError(404, "not_found_error", f"memory {parts[5]} not found")
            if method == "GET":
                return 200, self._json(memory, query.get("view", "full") == "full")
            if method == "POST":
                return 200, self._json(self._update_checked(memory, body), full)
            if method == "DELETE":
                return 200, self._delete_checked(memory, query.get("expected_content_sha256"))
        raise ApiError(405, "invalid_request_error", f"{method} not allowed here")

    def _create_checked(self, path: str, content: str) -> Memory:
        _check_path(path)
        _check_content(content)
        if (other := self._overlap(path)) is not None:
            self.creates_over_existing += 1
            raise _path_conflict(path, other)
        return self._create(path, content)

    def _update_checked(self, memory: Memory, body: dict[str, Any]) -> Memory:
        content, path, pre = body.get("content"), body.get("path"), body.get("precondition")
        if content is not None:
            _check_content(content)
        if path is not None:
            _check_path(path)
        if pre is None:
            self.unconditional_updates += 1
        elif pre.get("type") != "content_sha256":
            raise ApiError(400, "invalid_request_error", "precondition.type must be content_sha256")
        elif pre["content_sha256"] != memory.sha:
            if (content is None or content == memory.content) and (path is None or path == memory.path):
                return memory  # already holds exactly what was asked: 200, as documented
            raise ApiError(409, "memory_precondition_failed_error",
                           f"memory {memory.id} content_sha256 is {memory.sha}, not {pre['content_sha256']}")
        if path is not None and path != memory.path and (other := self._overlap(path, memory.id)) is not None:
            raise _path_conflict(path, other)
        return self._update(memory, content, path)

    def _delete_checked(self, memory: Memory, expected: str | None) -> dict[str, Any]:
        if expected is None:
            self.unconditional_deletes += 1
        elif expected != memory.sha:
            raise ApiError(409, "memory_precondition_failed_error",
                           f"memory {memory.id} content_sha256 is {memory.sha}, not {expected}")
        self._delete(memory)
        return {"type": "memory_deleted", "id": memory.id}

    def _list(self, query: dict[str, str], full: bool) -> dict[str, Any]:
        prefix = query.get("path_prefix", "/")
        if not prefix.endswith("/"):
            raise ApiError(400, "invalid_request_error", "path_prefix must end with /")
        depth = int(query.get("depth", 0))
        rows: list[dict[str, Any]] = []
        prefixes: set[str] = set()
        for m in sorted(self.memories.values(), key=lambda m: m.path):
            if not m.path.startswith(prefix):
                continue
            rest = m.path[len(prefix):].split("/")
            if depth and len(rest) > depth:
                marker = prefix + "/".join(rest[:depth]) + "/"
                if marker not in prefixes:
                    prefixes.add(marker)
                    rows.append({"type": "memory_prefix", "path": marker})
                continue
            rows.append(self._json(m, full))
        return self._page(rows, query, full)

    def _page(self, rows: list[dict[str, Any]], query: dict[str, str], full: bool) -> dict[str, Any]:
        limit = int(query.get("limit", 20))
        if not 1 <= limit <= 100:
            raise ApiError(400, "invalid_request_error", "limit must be from 1 to 100")
        limit = min(limit, FULL_VIEW_PAGE) if full else limit
        start = int(query["page"].removeprefix("cur_")) if "page" in query else 0
        end = start + limit
        return {"data": rows[start:end], "next_page": f"cur_{end}" if end < len(rows) else None}

    def _json(self, m: Memory, full: bool) -> dict[str, Any]:
        return {"type": "memory", "id": m.id, "memory_store_id": self.store_id, "path": m.path,
                "content": m.content if full else None, "content_sha256": m.sha,
                "content_size_bytes": len(m.content.encode()), "memory_version_id": m.version_id,
                "created_at": m.created_at, "updated_at": m.updated_at}


def sha256(content: str) -> str:
    return hashlib.sha256(content.encode()).hexdigest()


def _path_conflict(path: str, other: Memory) -> ApiError:
    return ApiError(409, "memory_path_conflict_error", f"{path} overlaps the memory at {other.path}",
                    conflicting_memory_id=other.id, conflicting_path=other.path)


def _check_content(content: str) -> None:
    if len(content.encode()) > MAX_CONTENT_BYTES:
        raise ApiError(400, "invalid_request_error", f"content is over {MAX_CONTENT_BYTES} bytes")


def _check_path(path: str) -> None:
    segments = path.split("/")[1:]
    bad = (not path.startswith("/") or len(path.encode()) > MAX_PATH_BYTES or not 1 <= len(segments) <= MAX_SEGMENTS
           or any(s in ("", ".", "..") for s in segments) or unicodedata.normalize("NFC", path) != path
           or any(unicodedata.category(c) in ("Cc", "Cf") or c in "\u2028\u2029" for c in path))
    if bad:
        raise ApiError(400, "invalid_request_error", f"invalid memory path {path!r}")


@pytest.fixture
def memory_store(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeMemoryStore]:
    """A running fake memory-stores API; the real client finds it through ANTHROPIC_BASE_URL."""
    yield from serve_as_anthropic(FakeMemoryStore(), monkeypatch)
