"""Read-only tools over the gathered, redacted sessions.

The agent never reads log files from disk: it reads the rows the pipeline
gathered and redacted (a polars DataFrame with columns session, date, seq,
role, text). Three tools, SDK function tools (`BetaFunctionTool`):

- ``list_sessions``: the catalog (id, date, slug, entries, characters);
- ``read_session``: a window of entries of one session;
- ``search_logs``: a case-insensitive regular expression over all entries,
  with a cap on the hits.

Every entry shown carries its session's date, because "yesterday" in a
session means the day before *that session*, not before tonight. Every result
stops at `paging.MAX_RESULT_CHARS` and says where to continue (``start=…``), so one
call can never flood the model's context.

Bad arguments come back as tool errors (`ToolError`), never as exceptions.
"""

from __future__ import annotations

import re
from typing import Any

import polars as pl
from anthropic.lib.tools import BetaFunctionTool, ToolError

from dream.engines.claude import tokens
from dream.engines.claude.paging import MAX_RESULT_CHARS, capped
from dream.redaction.redact import redact

MAX_WINDOW = 200  # entries per read_session call
MAX_HITS = 50  # hits per search_logs call
MAX_ENTRY_CHARS = 2000  # one entry shown in full up to this length
MAX_PATTERN_CHARS = 200


class LogTool(BetaFunctionTool[Any]):
    """A function tool whose bad input comes back as a clear tool error.

    The SDK's function tool raises ValueError on arguments that don't fit the
    signature; the runner would turn that into an error result too, but would
    also log a traceback. Here it is one line for the model and nothing else.
    """

    def call(self, input: object) -> Any:
        try:
            return super().call(input)
        except (ValueError, TypeError) as err:
            cause = err.__cause__ or err
            first = cause.errors()[0] if hasattr(cause, "errors") else None
            detail = f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}" if first else str(err)
            raise ToolError(f"Malformed input for {self.name}: {detail}") from None


def make_log_tools(sessions: pl.DataFrame, catalog: list[Any],
                   page_chars: int = MAX_RESULT_CHARS) -> list[BetaFunctionTool[Any]]:
    """The three log tools, bound to this run's sessions; a page of `read_session` holds up to `page_chars`."""
    rows = _ordered(sessions)
    by_session: dict[str, pl.DataFrame] = {}
    if not rows.is_empty():
        by_session = {str(sid): frame for (sid,), frame in rows.group_by("session", maintain_order=True)}
    titles = {str(getattr(s, "session_id", "")): s for s in catalog}

    def list_sessions(start: int = 1) -> str:
        """List the sessions gathered for this dream: id, date, slug of the log file name, entries, characters.

        Args:
            start: the first session to list, counting from 1 (a long list is paged).
        """
        if not by_session:
            return "No sessions changed since the last dream."
        if start < 1 or start > len(by_session):
            raise ToolError(f"start must be 1 to {len(by_session)}, the number of sessions")
        rows = []
        for sid, frame in list(by_session.items())[start - 1:]:
            meta = titles.get(sid)
            day = frame["date"][0] if "date" in frame.columns else getattr(meta, "date", "")
            chars = sum(len(t or "") for t in frame["text"])
            rows.append(f"{sid} | {day} | {session_title(meta)} | {frame.height} | {chars}")
        shown = capped(rows)
        end = start + len(shown) - 1
        more = f"\n[more: list_sessions(start={end + 1})]" if end < len(by_session) else ""
        return "\n".join(["session | date | slug | entries | chars", *shown]) + more

    def read_session(session_id: str, start: int = 1, count: int = 100) -> str:
        """Read a window of entries of one session, in order.

        Args:
            session_id: the id shown by list_sessions.
            start: the first entry to show, counting from 1.
            count: how many entries to show (at most 200).
        """
        frame = by_session.get(session_id)
        if frame is None:
            raise ToolError(f"Unknown session {session_id!r}; list_sessions shows the ids")
        if start < 1 or count < 1:
            raise ToolError("start and count must be at least 1")
        count = min(count, MAX_WINDOW)
        window = frame.slice(start - 1, count)
        if window.height == 0:
            raise ToolError(f"Session {session_id} has {frame.height} entries; start {start} is past the end")
        entries = [_entry(start + i, row) for i, row in enumerate(window.iter_rows(named=True))]
        # a page is as many tokens in any script: a Japanese page of 12,000 characters would be 4x an English one
        body = capped(entries, tokens.ascii_chars(page_chars, "\n".join(entries)))
        end = start + len(body) - 1
        header = f"Session {session_id} of {_day(frame)}, entries {start}-{end} of {frame.height}:"
        more = f"\n[more: read_session(session_id={session_id!r}, start={end + 1})]" if end < frame.height else ""
        return "\n".join([header, *body]) + more

    def search_logs(pattern: str, session_id: str | None = None, max_hits: int = 20) -> str:
        """Search the entries of the gathered sessions with a case-insensitive regular expression.

        Args:
            pattern: a Python regular expression (plain words work too).
            session_id: search only this session (optional).
            max_hits: how many matching entries to return (at most 50).
        """
        regex = _compile(pattern)
        max_hits = max(1, min(max_hits, MAX_HITS))
        frames = by_session.items() if session_id is None else [(session_id, by_session.get(session_id))]
        hits: list[str] = []
        total = 0
        for sid, frame in frames:
            if frame is None:
                raise ToolError(f"Unknown session {session_id!r}; list_sessions shows the ids")
            for i, row in enumerate(frame.iter_rows(named=True), start=1):
                if regex.search(row["text"] or ""):
                    total += 1
                    if len(hits) < max_hits:
                        hits.append(f"{sid} " + _entry(i, row))
        if not hits:
            return f"No entries match {pattern!r}."
        hits = capped(hits)
        more = f" (showing {len(hits)}; narrow the pattern to see the rest)" if total > len(hits) else ""
        return f"{total} matching entries{more}:\n" + "\n".join(hits)

    return [LogTool(list_sessions), LogTool(read_session), LogTool(search_logs)]


def session_title(meta: Any) -> str:
    """A session's title, from its log file name: redacted, as a name a person wrote may hold a secret."""
    return redact(getattr(meta, "title", "") or "")[0]


def _ordered(sessions: pl.DataFrame) -> pl.DataFrame:
    if sessions.is_empty():
        return sessions
    keys = [c for c in ("date", "session", "seq") if c in sessions.columns]
    return sessions.sort(keys)


def shown_text(text: str | None) -> str:
    """An entry's text as the model is shown it: long text cut, saying how much is left."""
    text = text or ""
    if len(text) > MAX_ENTRY_CHARS:
        text = text[:MAX_ENTRY_CHARS] + f" […{len(text) - MAX_ENTRY_CHARS} more characters]"
    return text


def _entry(number: int, row: dict[str, Any]) -> str:
    """One entry: number, its session's date, role and text."""
    day = row.get("date")
    return f"#{number} {day if day is not None else '????-??-??'} [{row.get('role', '?')}] {shown_text(row.get('text'))}"


def _day(frame: pl.DataFrame) -> str:
    return str(frame["date"][0]) if "date" in frame.columns and frame.height else "an unknown day"


def _compile(pattern: str) -> re.Pattern[str]:
    if not pattern or len(pattern) > MAX_PATTERN_CHARS:
        raise ToolError(f"The pattern must be 1 to {MAX_PATTERN_CHARS} characters long")
    try:
        return re.compile(pattern, re.IGNORECASE)
    except re.error as err:
        raise ToolError(f"Bad regular expression {pattern!r}: {err}") from None
