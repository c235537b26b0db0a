"""What every transcript reader produces, and how it becomes an activity log.

A reader turns one agent transcript (JSONL) into a `Session`: a list of
`Entry` objects, each one line of the activity log format (``> `` user,
``< `` assistant, ``. `` tool call). This module owns the parts both
formats share: JSON decoding that never raises, the log's file name (date and
slug) and cutting long texts. Rendering and redaction are in `render`.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from typing import Any, Literal

import orjson

from dream.pipeline.redact import REDACT_MARGIN

from dream.pipeline.redact import redact

_JSON_ERRORS: tuple[type[Exception], ...] = (orjson.JSONDecodeError,)


def _loads(line: bytes | bytearray | memoryview) -> Any:
    return orjson.loads(line)


Kind = Literal["user", "assistant", "tool"]
PREFIX: dict[str, str] = {"user": "> ", "assistant": "< ", "tool": ". "}

TOOL_SUMMARY_CHARS = 200
SLUG_MAX_CHARS = 40
SLUG_MAX_WORDS = 6


# Fewer, larger reads: full import of 512 MB, 4 MB vs 1 MB blocks, 0.25-0.33 vs 0.29-0.34 s.
BLOCK_CHUNK = 4 << 20


def iter_lines(path: Path) -> Iterator[tuple[bytearray, int, int]]:
    """Each line of a file, without its newline, as ``(buf, start, end)``: ``buf[start:end]``.

    Transcripts hold multi-megabyte lines (tool output) that readers mostly
    skip after a glance at their first bytes, so no object is made per line:
    the file is read in blocks of whole lines into one reused buffer, valid
    only until the next line is asked for. Plain reads let the kernel read
    ahead: an mmap walked the same way was no faster with a warm cache and
    1.5x slower with a cold one (0.73 vs 0.49 s per 512 MB).
    """
    for buf, size in _line_blocks(path):
        start = 0
        while start < size:
            end = buf.find(b"\n", start, size)
            if end < 0:
                end = size  # a last line without newline
            yield buf, start, end
            start = end + 1


def _line_blocks(path: Path) -> Iterator[tuple[bytearray, int]]:
    """The file in blocks of whole lines: ``(buf, end)``, where ``buf[:end]`` ends at
    a line end (or at the end of the file). `buf` is reused from block to block."""
    with open(path, "rb", buffering=0) as fh:
        size = os.fstat(fh.fileno()).st_size
        buf = bytearray(min(BLOCK_CHUNK, size + 4096))  # small files, small buffer
        filled = 0  # buf[:filled] holds bytes read but not yet handed out
        while True:
            if filled == len(buf):  # a line longer than the buffer: grow
                buf.extend(bytes(len(buf)))
            with memoryview(buf) as view:
                got = fh.readinto(view[filled:])
            if not got:
                if filled:
                    yield buf, filled  # a last line without newline
                return
            filled += got
            end = buf.rfind(b"\n", 0, filled) + 1
            if end:
                yield buf, end
                buf[: filled - end] = buf[end:filled]  # keep the partial line
                filled -= end


def is_blank(data: bytes | bytearray, start: int, end: int) -> bool:
    """True if ``data[start:end]`` holds only whitespace (long lines are never blank: no copy)."""
    return end - start < 64 and not data[start:end].strip()


def as_dict(value: Any) -> dict:
    """`value` if it is a dict, else an empty one (for optional JSON objects)."""
    return value if isinstance(value, dict) else {}


def as_str(value: Any, default: str = "") -> str:
    """`value` if it is a string, else `default` (for optional JSON strings)."""
    return value if isinstance(value, str) else default


def parse_json_line(line: bytes | bytearray | memoryview) -> dict | None:
    """The record on one JSONL line, or None if it is not a JSON object.

    A line cut mid-JSON (an agent killed while writing), bytes that are not
    UTF-8, or a bare value (``42``, ``"text"``) all give None.
    """
    try:
        record = _loads(line)
    except _JSON_ERRORS:
        return None
    return record if isinstance(record, dict) else None


def parse_timestamp(value: Any) -> datetime | None:
    """An ISO-8601 timestamp as an aware UTC datetime, or None."""
    if not isinstance(value, str) or not value:
        return None
    try:
        stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=timezone.utc)
    return stamp.astimezone(timezone.utc)


@dataclass(slots=True)
class Entry:
    """One line (plus continuation lines) of an activity log.

    `text` may already be shortened to the configured length plus
    `REDACT_MARGIN`; `length` is the length of the original text, so the cut
    marker can say how much was left out.
    """

    kind: Kind
    text: str
    length: int
    sidechain: bool = False


def make_entry(kind: Kind, text: str, max_chars: int, sidechain: bool = False) -> Entry:
    """An entry whose text is bounded, so a 1 MB paste costs no more than needed."""
    keep = max_chars + REDACT_MARGIN
    return Entry(kind, text[:keep] if len(text) > keep else text, len(text), sidechain)


@dataclass
class Session:
    """One transcript, read: what the importer needs to write its log."""

    session_id: str
    started: datetime | None = None
    entries: list[Entry] = field(default_factory=list)
    records: int = 0
    skipped: int = 0  # unknown record types and malformed lines
    malformed: int = 0  # of which: lines that are not a JSON object

    @property
    def has_conversation(self) -> bool:
        """True if anyone said or did anything (summaries alone do not count)."""
        return any(not e.text.startswith("[summary]") for e in self.entries)

    def first_user_text(self) -> str:
        for entry in self.entries:
            if entry.kind == "user" and not entry.sidechain:
                return entry.text
        return ""


# --- names -----------------------------------------------------------------


_MARKER = re.compile(r"\[REDACTED:[a-z0-9-]+\]")


def _opaque(word: str) -> bool:
    """A word no request is named after: long, or digits mixed with letters (a piece of a key or an id)."""
    return len(word) > 20 or (len(word) >= 8 and any(c.isdigit() for c in word) and any(c.isalpha() for c in word))


def slugify(text: str) -> str:
    """A short kebab-case ASCII name for a request, or ``session``.

    Accented Latin letters lose their accents (``café`` → ``cafe``); scripts
    without an ASCII spelling (Chinese, Cyrillic, …) leave nothing, and then
    the slug is ``session``.
    """
    # Redacted first: a name is written where no redaction looks again (file names, session titles).
    text = _MARKER.sub(" ", redact(text[:2000])[0])[:500].replace("\u2019", "'")
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    words = [w for w in re.findall(r"[a-z0-9]+", ascii_text.lower().replace("'", "")) if not _opaque(w)]
    slug = ""
    for word in words[:SLUG_MAX_WORDS]:
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > SLUG_MAX_CHARS:
            break
        slug = candidate
    return slug or "session"


_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def safe_id(session_id: str) -> str:
    """A session id usable as a file name (ids come from untrusted files).

    Log readers split ``<id>-<slug>`` at the first hyphen unless the id is a
    UUID, so other ids keep no hyphen (``agent-a1b2`` → ``agent_a1b2``).
    """
    if _UUID.fullmatch(session_id):
        return session_id
    cleaned = re.sub(r"[^A-Za-z0-9_.]+", "_", session_id).strip("._")
    return cleaned[:80] or "session"


def log_relpath(session: Session, fallback: datetime, tag: str = "") -> str:
    """``logs/YYYY/MM/DD/<id>-<slug>.md`` for a session.

    The date is the session's own start (UTC, so that a log never moves when
    the machine's time zone changes), else `fallback` (the file's mtime).
    `tag` tells apart two transcripts that claim the same session id.
    """
    day = (session.started or fallback).astimezone(timezone.utc)
    stem = safe_id(session.session_id) + (f"-{tag}" if tag else "")
    name = f"{stem}-{slugify(session.first_user_text())}.md"
    return str(PurePosixPath("logs", f"{day:%Y}", f"{day:%m}", f"{day:%d}", name))


# --- tool call summaries -----------------------------------------------------


def one_line(text: str, limit: int = TOOL_SUMMARY_CHARS + REDACT_MARGIN) -> str:
    """Collapse whitespace and cut to `limit` characters with an ellipsis."""
    flat = " ".join(text[: limit * 2].split())  # never split a megabyte to show 200 chars
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def relative_to(path: str, cwd: str | None) -> str:
    """`path` relative to the session's working folder, when it lies inside it."""
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    return path


# Argument keys that say best what a tool call was about, most telling first.
_TELLING_KEYS = (
    "file_path", "notebook_path", "path", "command", "cmd", "pattern",
    "query", "url", "description", "prompt", "skill", "name",
)
_TELLING_RANK = {key: rank for rank, key in enumerate(_TELLING_KEYS)}


def summarize_arguments(args: Any, cwd: str | None = None) -> str:
    """A short hint of a tool call's arguments (`tool_entry` makes it one line).

    The most telling argument (a path, a command, a pattern…) is shown alone;
    other tools get their arguments as ``key=value`` pairs.
    """
    if isinstance(args, str):
        return args
    if not isinstance(args, dict):
        return ""
    # The few keys a call has, in order of rank (not a lookup of every telling key).
    telling = [k for k in args if k in _TELLING_RANK]
    if len(telling) > 1:
        telling.sort(key=_TELLING_RANK.__getitem__)
    for key in telling:
        value = args[key]
        if isinstance(value, str) and value.strip():
            return relative_to(value, cwd) if key.endswith("path") else value
    return " ".join(f"{k}={v}" for k, v in args.items() if isinstance(v, (str, int, float, bool)))


def tool_entry(name: str, summary: str, max_chars: int, sidechain: bool = False) -> Entry:
    """A ``. name summary`` entry: one line (whatever `summary` holds), cut short when rendered."""
    text = f"{name} {summary}" if summary else name
    return make_entry("tool", one_line(text), max_chars, sidechain)
