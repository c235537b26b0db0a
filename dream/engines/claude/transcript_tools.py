"""`search_transcripts`: a narrow, read-only search over the raw session transcripts.

The activity logs keep what was said and which tools ran, not tool output,
so an exact detail (an error message, a version number) may only be in the
agent's own JSONL transcripts. This tool searches them the way Claude Code's
own dream does: a pattern, an optional session or date filter and a hit cap,
answered with short excerpts that are redacted like the logs. It never
returns a whole transcript, and thinking or encrypted reasoning is never
searched (`dream.transcripts.search`).

The tool exists only for a store whose settings name a transcript source
(``transcripts = "claude-code"`` or ``"codex"``) whose folder exists.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from anthropic.lib.tools import BetaFunctionTool, ToolError

from dream.config import Settings
from dream.engines.claude.log_tools import MAX_PATTERN_CHARS, LogTool
from dream.engines.claude.paging import capped
from dream.errors import BadInput
from dream.transcripts.importer import resolve_source_path
from dream.transcripts.search import search_transcripts as search

MAX_HITS = 30  # excerpts per call: enough for an exact detail, too few to read a session whole
DEFAULT_HITS = 10
_DATE = re.compile(r"\d{4}(?:-\d{2}(?:-\d{2})?)?")


def make_transcript_tools(store_root: Path, settings: Settings) -> list[BetaFunctionTool[Any]]:
    """``[search_transcripts]`` bound to the store's transcript source, or ``[]`` without one."""
    if settings.transcripts is None:
        return []
    try:
        source = resolve_source_path(Path(store_root), settings.transcripts, None, settings)
    except BadInput:
        return []  # configured but not on this machine: nothing to search

    def search_transcripts(pattern: str, session_id: str | None = None, date: str | None = None,
                           max_hits: int = DEFAULT_HITS) -> str:
        """Search the raw session transcripts for an exact detail the activity logs left out.

        Use the session tools first; this returns only short excerpts around
        each match (secrets redacted), including tool output the logs omit.

        Args:
            pattern: a case-insensitive Python regular expression; keep it narrow.
            session_id: only this session (an id from list_sessions, or part of one).
            date: only records from this day (YYYY-MM-DD), month (YYYY-MM) or year.
            max_hits: how many excerpts to return (at most 30).
        """
        _check(pattern, date)
        cap = max(1, min(max_hits, MAX_HITS))
        try:
            hits = search([source], pattern, session=session_id or None, date=date or None, max_hits=cap + 1)
        except BadInput as err:
            raise ToolError(str(err)) from None
        except OSError as err:
            raise ToolError(f"The transcripts cannot be read: {err.strerror or err}") from None
        return _format(hits, pattern, cap)

    return [LogTool(search_transcripts)]


def _check(pattern: str, date: str | None) -> None:
    if not pattern or len(pattern) > MAX_PATTERN_CHARS:
        raise ToolError(f"The pattern must be 1 to {MAX_PATTERN_CHARS} characters long")
    if date and not _DATE.fullmatch(date):
        raise ToolError(f"Bad date {date!r}: use YYYY-MM-DD, YYYY-MM or YYYY")


def _format(hits: list[dict], pattern: str, cap: int) -> str:
    if not hits:
        return f"No transcript records match {pattern!r}."
    more = f" (the first {cap}; narrow the pattern or add a session or date to see others)" if len(hits) > cap else ""
    rows = capped([f"{hit['session']} {hit['timestamp'] or '?'} [{hit['role']}] {hit['excerpt']}" for hit in hits[:cap]])
    if len(rows) < min(len(hits), cap):
        more = f" (the first {len(rows)}, to keep this result short; narrow the pattern or add a session or date)"
    return "\n".join([f"{len(rows)} excerpt(s){more}:", *rows])
