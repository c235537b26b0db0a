"""Codex's memory folder (``~/.codex/memories``): its evidence as activity logs, and its consolidation lease.

Read from Codex's source (openai/codex, ``codex-rs/memories`` and
``codex-rs/state``). Phase 1 distils each session ("rollout") into
``rollout_summaries/<slug>.md`` and a raw memory, merged into
``raw_memories.md``; phase 2, one consolidation agent at a time, rewrites
``MEMORY.md``, ``skills/`` and ``memory_summary.md``. Phase 2 first claims a
lease: the row ``kind = 'memory_consolidate_global'`` (or ``…_scoped``) of the
``jobs`` table in Codex's state database (``state_<n>.sqlite``, in
``$CODEX_SQLITE_HOME`` or the Codex home, the memory folder's parent), with
``status = 'running'`` until ``lease_until`` (Unix seconds). dream never runs
while that lease is held.

The evidence is read only. A user's own words appear in it as Codex's phase 1
writes them, in the user's language: ``the user said / asked / corrected: "<quote>"``, ``der Nutzer
verlangte „…“``, ``ユーザーは「…」と言った`` (the words and marks are in ``codex_quotes.toml``), or as markdown
quote lines (``> …``); each becomes a user line (``> ``) of an activity log
kept under ``.dream/codex-evidence/`` (the store's `logs_path`), so the run
reads Codex's evidence exactly as it reads Claude Code's logs.
"""

from __future__ import annotations

import os
import re
import time
import tomllib
from contextlib import closing
from dataclasses import dataclass
from datetime import date, datetime, timezone
from functools import cache
from pathlib import Path

from dream.store.layouts import LayoutKind, detect
from dream.store.tree import atomic_write

EVIDENCE_LOGS = ".dream/codex-evidence"  # where the evidence is rendered as logs (the store's logs_path)
SUMMARIES = "rollout_summaries"
RAW_MEMORIES = "raw_memories.md"
_LEASE_KINDS = ("memory_consolidate_global", "memory_consolidate_scoped")
_STATE_DBS = ("state_*.sqlite", "memories_*.sqlite")  # the jobs table moved between them across Codex versions
_HEADER = re.compile(r"^(?P<key>thread_id|updated_at|cwd|rollout_path)\s*[:=]\s*`?(?P<value>[^`\n]*)`?\s*$",
                     re.MULTILINE)
_THREAD = re.compile(r"^## Thread `?(?P<id>[^`\s]+)`?\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Evidence:
    session: str  # the thread id, or the summary's file name
    day: date
    text: str  # the log: one ``> `` line per thing the user said
    mtime: float


def user_words(text: str) -> list[str]:
    """What the user said, as a Codex summary quotes it, in order."""
    found = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("> "):
            found.append(stripped[2:].strip())
        found += _quoted_user(line)
    return [words for words in found if words]


REPORT_GAP = 60  # characters from the word for the user to the quote it reports (past the verb)
VERB_AFTER = 12  # characters after a closing quote where a language puts the verb ("」と言った")
VERB_BEFORE = 24  # characters before the word for the user where a language puts the verb ("verlangte der Nutzer")


def _quoted_user(line: str) -> list[str]:
    """Each quote a word for the user introduces with a reporting verb, before it or just after it; a quote
    before the word for the user ("the agent proposed "…"; the user declined") is never the user's."""
    quoted, marks = [], _marks()
    at = 0
    while (user := marks.user.search(line, at)) is not None:
        opening = marks.opening.search(line, user.end(), user.end() + REPORT_GAP)
        if opening is None:
            at = user.end()
            continue
        close = line.find(marks.closing[opening.group()], opening.end())
        if opening.group() == "'":
            close = _last_single_quote(line, opening.end())
        if close < 0:
            break
        between, after = line[user.end():opening.start()], line[close + 1:close + 1 + VERB_AFTER]
        before = line[max(0, user.start() - VERB_BEFORE):user.start()]
        if marks.said.search(between) or marks.said.search(after) or marks.verb_first.search(before):
            quoted.append(line[opening.end():close].strip())
        at = close + 1
    return quoted


def _last_single_quote(line: str, start: int) -> int:
    """A single quote closes at the last one on the line followed by no letter: "we're" stays inside."""
    found = [m.start() for m in re.finditer(r"'(?!\w)", line[start:])]
    return start + found[-1] if found else -1


@dataclass(frozen=True)
class _Marks:
    user: re.Pattern[str]
    said: re.Pattern[str]
    verb_first: re.Pattern[str]  # a reporting verb and an article making the user its subject, just before the user
    opening: re.Pattern[str]
    closing: dict[str, str]


@cache
def _marks() -> _Marks:
    """The words and quotation marks of codex_quotes.toml, as patterns."""
    data = tomllib.loads(Path(__file__).with_name("codex_quotes.toml").read_text("utf-8"))
    words = data["words"].values()
    pairs = {opening: closing for opening, closing in data["quotes"]}
    return _Marks(_alternation([w for lang in words for w in lang["user"]]),
                  _alternation([w for lang in words for w in lang["said"]]), _verb_first(list(words)),
                  re.compile("|".join(re.escape(mark) for mark in pairs)), pairs)


def _verb_first(languages: list[dict[str, list[str]]]) -> re.Pattern[str]:
    """"verlangte der " right before "Nutzer": a verb of the language, then one of its subject articles."""
    parts = [rf"(?<!\w)(?:{_either(lang['said'])})\s+(?:{_either(lang['subject'])})\s*$"
             for lang in languages if lang.get("subject")]
    return re.compile("|".join(parts) or "(?!)", re.IGNORECASE)


def _either(words: list[str]) -> str:
    return "|".join(map(re.escape, words))


def _alternation(words: list[str]) -> re.Pattern[str]:
    """Whole words (a CJK word anywhere: no spaces mark where it ends), longest first."""
    parts = [re.escape(w) if _cjk_word().search(w) else rf"(?<!\w){re.escape(w)}(?!\w)"
             for w in sorted(set(words), key=len, reverse=True)]
    return re.compile("|".join(parts), re.IGNORECASE)


@cache
def _cjk_word() -> re.Pattern[str]:
    """Compiled when the quote marks are first read (a class of the CJK ranges costs ms to compile)."""
    return re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def render_log(text: str) -> str:
    return "".join(f"> {words}\n" for words in user_words(text))


def _day(headers: dict[str, str], mtime: float) -> date:
    try:
        return datetime.fromisoformat(headers["updated_at"].replace("Z", "+00:00")).date()
    except (KeyError, ValueError):
        return datetime.fromtimestamp(mtime).date()


def _headers(text: str) -> dict[str, str]:
    return {m.group("key"): m.group("value").strip() for m in _HEADER.finditer(text)}


def evidence(root: Path) -> list[Evidence]:
    """Each rollout summary, and each thread of ``raw_memories.md`` that has none, as a log."""
    found: list[Evidence] = []
    threads: set[str] = set()
    folder = root / SUMMARIES
    for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
        if not path.is_file() or path.is_symlink():
            continue
        text = path.read_text("utf-8", "replace")
        headers, mtime = _headers(text), path.stat().st_mtime
        threads.add(headers.get("thread_id", ""))
        found.append(Evidence(headers.get("thread_id") or path.stem, _day(headers, mtime), render_log(text), mtime))
    raw = root / RAW_MEMORIES
    if raw.is_file() and not raw.is_symlink():
        found += _raw_threads(raw.read_text("utf-8", "replace"), raw.stat().st_mtime, threads)
    return [e for e in found if e.text]


def evidence_cwds(root: Path) -> list[str]:
    """The folder each rollout summary and each raw memory thread says its session ran in (``cwd:``)."""
    texts = [path.read_text("utf-8", "replace") for path in sorted((root / SUMMARIES).glob("*.md"))
             if path.is_file() and not path.is_symlink()] if (root / SUMMARIES).is_dir() else []
    raw = root / RAW_MEMORIES
    if raw.is_file() and not raw.is_symlink():
        whole = raw.read_text("utf-8", "replace")
        marks = list(_THREAD.finditer(whole))
        texts += [whole[mark.end():following.start() if following else len(whole)]
                  for mark, following in zip(marks, [*marks[1:], None])]
    return [cwd for text in texts if (cwd := _headers(text).get("cwd"))]


def _raw_threads(text: str, mtime: float, seen: set[str]) -> list[Evidence]:
    marks = list(_THREAD.finditer(text))
    found = []
    for mark, following in zip(marks, [*marks[1:], None]):
        if mark.group("id") in seen:
            continue  # its rollout summary says the same, and more
        body = text[mark.end():following.start() if following else len(text)]
        found.append(Evidence(mark.group("id"), _day(_headers(body), mtime), render_log(body), mtime))
    return found


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")[:80] or "thread"


def write_evidence_logs(root: Path) -> list[str]:
    """Render the evidence under `EVIDENCE_LOGS` (``YYYY/MM/DD/<thread>-codex.md``); a log whose thread is gone
    from the evidence is removed, an unchanged one left as it is. Returns the logs written."""
    logs = root / EVIDENCE_LOGS
    wanted = {f"{e.day:%Y/%m/%d}/{_safe(e.session)}-codex.md": e for e in evidence(root)}
    written = []
    for rel, item in wanted.items():
        path = logs / rel
        data = item.text.encode()
        if path.is_file() and path.read_bytes() == data:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, data)
        os.utime(path, (item.mtime, item.mtime))
        written.append(rel)
    for path in logs.rglob("*-codex.md") if logs.is_dir() else []:
        if path.relative_to(logs).as_posix() not in wanted:
            path.unlink()
    return written


def _state_dbs(root: Path) -> list[Path]:
    homes = [Path(os.environ["CODEX_SQLITE_HOME"]).expanduser()] if os.environ.get("CODEX_SQLITE_HOME") else []
    homes.append(root.parent)
    return [db for home in homes for pattern in _STATE_DBS for db in sorted(home.glob(pattern))]


def consolidation_lease(root: Path, now: float) -> str | None:
    """Why dream may not touch the folder now: Codex's consolidation holds its lease (or its state cannot be read)."""
    dbs = _state_dbs(root)
    if not dbs:
        return None
    import sqlite3  # start-up: only where Codex's state databases are (every run imports this module, via lint)

    for db in dbs:
        try:
            held = _running_lease(db, now)
        except sqlite3.Error as exc:
            return f"cannot read Codex's state database {db} to see whether its memory consolidation runs ({exc}); " \
                   f"not run, so as not to write beside it"
        if held is not None:
            until = datetime.fromtimestamp(held, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
            return f"Codex's memory consolidation holds its lease ({db.name}, jobs table) until {until}; " \
                   f"dream runs once it has finished"
    return None


def held_by_codex(root: Path) -> str | None:
    """For a write into a Codex folder (accept, rollback): why not now, or None (any other layout: None)."""
    return consolidation_lease(root, time.time()) if detect(root).kind == LayoutKind.CODEX else None


def _running_lease(db: Path, now: float) -> int | None:
    import sqlite3  # start-up: see consolidation_lease

    with closing(sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True, timeout=5)) as conn:
        if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'jobs'").fetchone() is None:
            return None
        row = conn.execute(
            f"SELECT max(lease_until) FROM jobs WHERE kind IN ({', '.join('?' * len(_LEASE_KINDS))}) "
            "AND status = 'running' AND lease_until > ?", (*_LEASE_KINDS, int(now))).fetchone()
    return None if row is None or row[0] is None else int(row[0])
