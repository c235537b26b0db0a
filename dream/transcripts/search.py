"""Narrow search over raw transcripts, for exact details the logs left out.

Activity logs keep what was said and which tools ran, not tool output. When
a dream needs an exact detail (an error message, a version number) it can
search the raw JSONL instead of reading it whole: `search_transcripts` returns
at most a few short excerpts around each match, redacted like the logs.
Private reasoning (thinking blocks, Codex reasoning) is never searched.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from datetime import date as Date
from pathlib import Path
from typing import Any

from dream.errors import BadInput
from dream.redaction.redact import redact
from dream.transcripts.codex import message_text, session_id_from_name
from dream.transcripts.common import REDACT_MARGIN, as_dict, parse_json_line

EXCERPT_CONTEXT = 120  # characters kept on each side of a match
EXCERPT_MAX = 400
MAX_HITS_LIMIT = 200
_LITERAL_SAFE = re.compile(r"[A-Za-z0-9 _,;:!@#%&=<>'/~-]+")


def search_transcripts(
    source_paths: Iterable[Path],
    pattern: str,
    session: str | None = None,
    date: str | Date | None = None,
    max_hits: int = 20,
) -> list[dict]:
    """Matches of `pattern` (a case-insensitive regex) in transcripts.

    `source_paths` are transcript files or folders of them. `session` keeps
    transcripts whose file name or session id contains it; `date`
    (``YYYY-MM-DD``, or a prefix such as ``YYYY-MM``) keeps records with that
    timestamp. Each hit is a dict: ``session``, ``file``, ``line``,
    ``timestamp``, ``role`` and a short redacted ``excerpt``.
    """
    regex = _compile(pattern)
    limit = max(1, min(int(max_hits), MAX_HITS_LIMIT))
    day = date.isoformat() if isinstance(date, Date) else date
    # Raw-line prefilter: valid only when JSON escaping cannot hide a match.
    raw = re.compile(pattern.encode(), re.I) if _LITERAL_SAFE.fullmatch(pattern) else None
    hits: list[dict] = []
    seen: set[tuple[str, str]] = set()
    for path in _transcript_files(source_paths):
        if session and session not in path.stem:
            if not _mentions_session(path, session):
                continue
        for hit in _search_file(path, regex, raw, day):
            if (hit["session"], hit["excerpt"]) in seen:  # Codex writes messages twice
                continue
            seen.add((hit["session"], hit["excerpt"]))
            hits.append(hit)
            if len(hits) >= limit:
                return hits
    return hits


def _compile(pattern: str) -> re.Pattern[str]:
    if not pattern:
        raise BadInput("search pattern is empty")
    try:
        return re.compile(pattern, re.I)
    except re.error as exc:
        raise BadInput(f"search pattern {pattern!r} is not a valid regular expression: {exc}") from None


def _transcript_files(source_paths: Iterable[Path]) -> list[Path]:
    files: list[Path] = []
    for source in source_paths:
        source = Path(source).expanduser()
        if source.is_file():
            files.append(source)
        elif source.is_dir():
            files.extend(sorted(p for p in source.rglob("*.jsonl") if p.is_file()))
    return files


def _mentions_session(path: Path, session: str) -> bool:
    """True if the transcript's first records name `session` as their id."""
    with path.open("rb") as fh:
        for _, line in zip(range(5), fh):
            record = parse_json_line(line) or {}
            payload = as_dict(record.get("payload"))
            for value in (record.get("sessionId"), payload.get("id")):
                if isinstance(value, str) and session in value:
                    return True
    return False


def _search_file(path: Path, regex: re.Pattern[str], raw: re.Pattern[bytes] | None,
                 day: str | None) -> Iterator[dict]:
    with path.open("rb") as fh:
        for number, line in enumerate(fh, start=1):
            if raw is not None and not raw.search(line):
                continue
            record = parse_json_line(line)
            if record is None:
                continue
            stamp = record.get("timestamp") if isinstance(record.get("timestamp"), str) else None
            if day and not (stamp or "").startswith(day):
                continue
            for role, text in searchable_texts(record):
                found = regex.search(text)
                if found:
                    yield {
                        "session": _session_of(path),
                        "file": str(path),
                        "line": number,
                        "timestamp": stamp,
                        "role": role,
                        "excerpt": excerpt(text, found, regex),
                    }


def _session_of(path: Path) -> str:
    """The id the activity log uses for this session (see the readers)."""
    return session_id_from_name(path) or path.stem


def searchable_texts(record: dict) -> Iterator[tuple[str, str]]:
    """(role, text) pairs of a Claude Code or Codex record, reasoning excluded."""
    if isinstance(record.get("payload"), dict):
        yield from _codex_texts(record["payload"])
        return
    if record.get("type") == "summary" and isinstance(record.get("summary"), str):
        yield "summary", record["summary"]
        return
    message = record.get("message")
    if not isinstance(message, dict):
        return
    role = "assistant" if message.get("role") == "assistant" else "user"
    content = message.get("content")
    if isinstance(content, str):
        yield role, content
        return
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict):
            yield from _claude_block_texts(role, block)


def _claude_block_texts(role: str, block: dict) -> Iterator[tuple[str, str]]:
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        yield role, block["text"]
    elif kind == "tool_use":
        yield "tool_use", f"{block.get('name')} {_flat(block.get('input'))}"
    elif kind == "tool_result":
        yield "tool_result", _flat(block.get("content"))


def _codex_texts(payload: dict) -> Iterator[tuple[str, str]]:
    kind = payload.get("type")
    if kind == "message" and payload.get("role") in ("user", "assistant"):
        yield payload["role"], message_text(payload.get("content"))
    elif kind in ("user_message", "agent_message") and isinstance(payload.get("message"), str):
        yield ("user" if kind == "user_message" else "assistant"), payload["message"]
    elif kind in ("function_call", "custom_tool_call"):
        yield "tool_use", f"{payload.get('name')} {_flat(payload.get('arguments', payload.get('input')))}"
    elif kind in ("function_call_output", "custom_tool_call_output"):
        yield "tool_result", _flat(payload.get("output"))
    elif kind == "compacted" and isinstance(payload.get("message"), str):
        yield "summary", payload["message"]


def _flat(value: Any) -> str:
    """Text inside a tool input or output, however it is nested."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_flat(v) for v in value)
    if isinstance(value, dict):
        if isinstance(value.get("text"), str):
            return value["text"]
        return " ".join(f"{k}={_flat(v)}" for k, v in value.items())
    return "" if value is None else str(value)


def excerpt(text: str, found: re.Match[str], regex: re.Pattern[str]) -> str:
    """A short redacted window around a match, on one line.

    A wide window is redacted first and only then cut, so a secret that
    straddles the excerpt's edge is still recognised and never half shown.
    """
    start = max(0, found.start() - REDACT_MARGIN)
    window, _ = redact(text[start : found.end() + REDACT_MARGIN])
    again = regex.search(window)  # the match may itself have been a secret
    at, end = (again.start(), again.end()) if again else (found.start() - start,) * 2
    left = max(0, at - EXCERPT_CONTEXT)
    right = min(len(window), end + EXCERPT_CONTEXT, left + EXCERPT_MAX)
    piece = " ".join(window[left:right].split())
    prefix = "…" if left > 0 or start > 0 else ""
    suffix = "…" if right < len(window) or found.end() + REDACT_MARGIN < len(text) else ""
    return prefix + piece + suffix
