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
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from io import RawIOBase
from pathlib import Path, PurePosixPath
from typing import Any, Literal

import orjson

from dream.redaction.redact import REDACT_MARGIN

from dream.redaction.redact import redact

_JSON_ERRORS: tuple[type[Exception], ...] = (orjson.JSONDecodeError,)


def _loads(line: bytes | bytearray | memoryview) -> Any:
    return orjson.loads(line)


Kind = Literal["user", "assistant", "tool"]
PREFIX: dict[str, str] = {"user": "> ", "assistant": "< ", "tool": ". "}

TOOL_SUMMARY_CHARS = 200
SLUG_MAX_CHARS = 40
SLUG_MAX_WORDS = 6


# Reads of a size that stays in the CPU's cache while the newlines are found:
# the bytes are touched once, as `cat` touches them.
BLOCK_CHUNK = 256 << 10
# What `iter_lines` yields as a line's end when `skip` passed it over unread.
SKIPPED = -1

Skip = Callable[[bytearray, int, int], bool]


def iter_lines(path: Path, skip: Skip | None = None, head: int = 0) -> Iterator[tuple[bytearray, int, int]]:
    """Each line of a file, without its newline, as ``(buf, start, end)``: ``buf[start:end]``.

    Transcripts hold multi-megabyte lines (tool output) that readers skip
    after a glance at their first bytes. So no object is made per line: the
    file is read in blocks into one reused buffer, and a line is valid only
    until the next one is asked for. `skip(buf, start, end)` is asked about
    each line as soon as its first `head` bytes are in (or all of it, if it is
    shorter), and must judge from those alone; a line it skips comes out as
    ``(buf, start, SKIPPED)`` and is never held whole: the rest of its bytes
    are passed over as they are read. Plain reads let the kernel read ahead:
    an mmap was no faster with a warm cache and 1.5x slower with a cold one.
    """
    with open(path, "rb", buffering=0) as fh:
        size = os.fstat(fh.fileno()).st_size + 1  # +1: the end of the file is seen in one read
        buf = bytearray(max(min(BLOCK_CHUNK, size), head))  # small files, small buffer; room for a head
        filled = 0  # buf[:filled] holds bytes read but not yet handed out
        passing = False  # inside a skipped line: its bytes up to the newline are dropped
        while got := _read_more(fh, buf, filled):
            filled += got
            start = 0
            if passing:
                start = buf.find(b"\n", 0, filled) + 1
                if not start:
                    filled = 0
                    continue
                passing = False
            while (end := buf.find(b"\n", start, filled)) >= 0:
                yield buf, start, (SKIPPED if skip and skip(buf, start, end) else end)
                start = end + 1
            if skip and filled - start >= head and skip(buf, start, start + head):
                yield buf, start, SKIPPED
                passing, filled = True, 0
            elif start:  # keep the partial line for the next read
                buf[: filled - start] = buf[start:filled]
                filled -= start
        if filled and not passing:  # a last line without newline
            yield buf, 0, (SKIPPED if skip and skip(buf, 0, filled) else filled)


def _read_more(fh: RawIOBase, buf: bytearray, filled: int) -> int:
    """Read into ``buf[filled:]``, first doubling `buf` if a line has filled it; 0 at the end of the file."""
    if filled == len(buf):
        buf.extend(bytes(len(buf)))
    with memoryview(buf) as view:
        return fh.readinto(view[filled:]) or 0


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


CWD_LINES = 50  # records read from the start of a transcript to find its cwd


def transcript_cwd(path: Path) -> str | None:
    """`cwd` from the first records of a Claude Code or Codex transcript."""
    try:
        with open(path, "rb") as handle:
            for _, raw in zip(range(CWD_LINES), handle):
                try:
                    record = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    continue
                if not isinstance(record, dict):
                    continue
                payload = record.get("payload")
                for holder in (record, payload if isinstance(payload, dict) else {}):
                    if isinstance(holder.get("cwd"), str) and holder["cwd"]:
                        return holder["cwd"]
    except OSError:
        return None
    return None
