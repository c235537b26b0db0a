"""Read claude-mem's database (``~/.claude-mem/claude-mem.db``) into sessions, read-only.

claude-mem (github.com/thedotmack/claude-mem) keeps, per Claude Code session,
a row in ``sdk_sessions`` (``content_session_id`` is Claude Code's session
id; ``memory_session_id`` links the rows its own model wrote), the person's
prompts in ``user_prompts``, and what its model extracted in
``observations`` and ``session_summaries`` (schema: its
``src/services/sqlite/schema.sql``). Each session becomes one `Session`:

* a user prompt is a ``> `` line: it is what the person typed;
* an observation is a ``. `` line: claude-mem's model wrote it about what
  the tools did, so it is neither the person's words (a ``> `` line would
  read as a request to remember) nor the agent's answer;
* a session summary is a ``< [summary]`` line, as a Codex compaction
  summary is: the agent side's account of the session, never a request.

The database is opened with ``mode=ro`` and read in one transaction (one
consistent snapshot, a shared lock held only for the reads), so claude-mem's
writer is never blocked for longer than the reads take and nothing is ever
written to it.
"""

from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from dream.errors import BadInput
from dream.transcripts.common import Entry, Session, make_entry

# How long a read waits for a writer's exclusive lock before refusing.
LOCK_WAIT_SECONDS = 2.0

_SESSIONS = ("SELECT content_session_id, memory_session_id, project, started_at_epoch "
             "FROM sdk_sessions ORDER BY id")
_PROMPTS = ("SELECT content_session_id, created_at_epoch, id, prompt_text FROM user_prompts "
            "ORDER BY prompt_number, id")
_OBSERVATIONS = ("SELECT memory_session_id, created_at_epoch, id, type, title, subtitle, narrative, text "
                 "FROM observations ORDER BY created_at_epoch, id")
_SUMMARIES = ("SELECT memory_session_id, created_at_epoch, id, request, investigated, learned, completed, "
              "next_steps, notes FROM session_summaries ORDER BY created_at_epoch, id")
_SUMMARY_PARTS = ("request", "investigated", "learned", "completed", "next steps", "notes")

# At one moment, the prompt came first, then what was observed, then the summary.
_PROMPT, _OBSERVATION, _SUMMARY = 0, 1, 2


@dataclass
class StoredSession:
    """One claude-mem session: the session, its project name and a digest of every row it was made from."""

    session: Session
    project: str
    digest: str
    last_epoch_ms: int


def read_database(path: Path, max_chars: int) -> list[StoredSession]:
    """Every session in the database at `path`, or BadInput (one line) if it cannot be read as one."""
    if not path.is_file():
        raise BadInput(f"{path}: no claude-mem database there (not a file); nothing imported")
    try:
        rows = _read_rows(path)
    except sqlite3.Error as exc:
        raise BadInput(f"{path}: cannot read it as a claude-mem database: {exc}; nothing imported") from None
    return _sessions(rows, max_chars)


def _read_rows(path: Path) -> dict[str, list[tuple]]:
    """All the rows this reader needs, from one snapshot (one read transaction)."""
    uri = f"{path.resolve().as_uri()}?mode=ro"
    conn = sqlite3.connect(uri, uri=True, timeout=LOCK_WAIT_SECONDS, isolation_level=None)
    try:
        conn.execute("BEGIN")
        rows = {name: conn.execute(sql).fetchall() for name, sql in
                (("sessions", _SESSIONS), ("prompts", _PROMPTS), ("observations", _OBSERVATIONS),
                 ("summaries", _SUMMARIES))}
        conn.execute("COMMIT")
        return rows
    finally:
        conn.close()


def _sessions(rows: dict[str, list[tuple]], max_chars: int) -> list[StoredSession]:
    by_content: dict[str, list[tuple]] = {}
    by_memory: dict[str, list[tuple]] = {}
    for content_id, created, row_id, text in rows["prompts"]:
        by_content.setdefault(content_id, []).append((created or 0, _PROMPT, row_id, "user", text))
    for memory_id, created, row_id, *fields in rows["observations"]:
        by_memory.setdefault(memory_id, []).append((created or 0, _OBSERVATION, row_id, "tool", _observation(*fields)))
    for memory_id, created, row_id, *parts in rows["summaries"]:
        by_memory.setdefault(memory_id, []).append((created or 0, _SUMMARY, row_id, "assistant", _summary(parts)))
    found = []
    for content_id, memory_id, project, started_ms in rows["sessions"]:
        items = sorted(by_content.get(content_id, []) + (by_memory.get(memory_id, []) if memory_id else []))
        found.append(_stored(str(content_id), str(project or ""), started_ms, items, max_chars))
    return found


def _stored(session_id: str, project: str, started_ms: int | None, items: list[tuple], max_chars: int) -> StoredSession:
    entries: list[Entry] = [make_entry(kind, text, max_chars) for *_, kind, text in items if text and text.strip()]
    started = datetime.fromtimestamp(started_ms / 1000, timezone.utc) if isinstance(started_ms, int) else None
    digest = hashlib.sha256(repr((session_id, project, started_ms, items)).encode()).hexdigest()
    last = max([started_ms or 0] + [item[0] for item in items])
    return StoredSession(Session(session_id=session_id, started=started, entries=entries,
                                 records=len(items)), project, digest, last)


def _observation(kind: str | None, title: str | None, subtitle: str | None, narrative: str | None,
                 text: str | None) -> str:
    """``[observation:<type>] title — subtitle`` and its narrative (or its text, for old rows)."""
    head = " — ".join(part for part in (title, subtitle) if part)
    body = narrative or text or ""
    return "\n".join(part for part in (f"[observation:{kind or 'note'}] {head}".rstrip(), body) if part)


def _summary(parts: list[str | None]) -> str:
    """``[summary]`` and each part the summary has, named."""
    named = [f"{name}: {value}" for name, value in zip(_SUMMARY_PARTS, parts) if value and value.strip()]
    return "\n".join(["[summary]", *named]) if named else ""


def in_project(project_name: str, project_folder: str) -> bool:
    """Whether a claude-mem project name is the folder's: claude-mem names a project after its git
    root's folder name (``parent/worktree`` for a worktree)."""
    name = Path(project_folder).name
    return project_name == name or project_name.startswith(name + "/")
