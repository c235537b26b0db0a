"""Turn an agent's session transcripts into a store's activity logs.

``import_transcripts`` reads each transcript whose size or modification time
changed since the last import, and (re)writes that session's log under
``<store>/logs/YYYY/MM/DD/``. What it saw last time is kept in
``.dream/import-state.json``. Importing again with nothing new reads
nothing and writes nothing, so log mtimes — which tell the gate which
sessions changed — only move when a session really did.

Codex keeps every project's sessions in one folder; a store takes the ones
that ran in its project (``project = PATH``, see `sessions_project`).

Import writes only logs it derived itself and its own state file: never a
memory file, never a transcript.
"""

from __future__ import annotations

import hashlib
import json
import os
from stat import S_ISREG
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path


from dream.config import Settings, configured_project, store_config_path
from dream.errors import BadInput, Refused
from dream.store import litter
from dream.store.layout import Layout
from dream.store.records import read_json_object, read_record_bytes
from dream.store.regular import kind_of
from dream.store.sessions import log_file
from dream.store.tree import DurableBatch, atomic_write
from dream.transcripts import claude_code, claude_mem, codex
from dream.transcripts.common import Session, as_dict, log_relpath, transcript_cwd
from dream.transcripts.discover import (  # where transcripts are; usage and status need only these
    SOURCES, default_source_path, list_transcripts, resolve_source_path,
)
from dream.transcripts.render import render_logs

from dream.sources import SourceKind

# Bump when readers or rendering change what a log says: every transcript is
# then read again on the next import.
FORMAT_VERSION = 1
LOCK_TIMEOUT_SECONDS = 120.0
# Sessions are read and rendered in groups: redaction is one polars call per
# group, and only one group's sessions are held at a time.
RENDER_GROUP = 64


@dataclass
class ImportResult:
    source: str
    transcripts: Path  # the file or folder imported from
    sessions_written: int = 0
    sessions_unchanged: int = 0
    records_skipped: int = 0  # unknown record types and malformed lines
    sessions_elsewhere: int = 0  # Codex sessions that ran in another project than the store's
    redactions: int = 0
    warnings: list[str] = field(default_factory=list)
    logs_written: list[Path] = field(default_factory=list)
    logs_removed: list[Path] = field(default_factory=list)  # replaced by a renamed log
    cleaned: list[str] = field(default_factory=list)  # temporary files a killed import left, removed first


def read_transcript(source: SourceKind, path: Path, settings: Settings) -> Session:
    if source == SourceKind.CLAUDE_CODE:
        return claude_code.read_session(path, settings.include_sidechains, settings.max_entry_chars)
    return codex.read_session(path, settings.max_entry_chars)


# --- state ----------------------------------------------------------------------------


def state_path(store_root: Path) -> Path:
    return Layout(store_root).import_state


def load_state(store_root: Path) -> dict[str, dict]:
    """What the last import saw, per transcript path; empty if unreadable.

    A lost or damaged state only costs a full re-read: the logs it would
    produce are compared with the files on disk before anything is written.
    """
    try:  # the one bounded record reader: a FIFO, a huge file or a deep array is just damage
        data = read_json_object(state_path(store_root), "import state")
    except (OSError, BadInput):
        return {}
    transcripts = data.get("transcripts") if isinstance(data, dict) else None
    return transcripts if isinstance(transcripts, dict) else {}


def save_state(store_root: Path, transcripts: dict[str, dict]) -> None:
    """Write the state only if it changed, so a no-op import touches nothing."""
    data = json.dumps({"transcripts": transcripts}, indent=1, sort_keys=True).encode() + b"\n"
    target = state_path(store_root)
    try:
        if read_record_bytes(target, "import state") == data:
            return
    except (OSError, BadInput):
        pass
    atomic_write(target, data)


def render_key(source: SourceKind, settings: Settings) -> str:
    """What, besides the transcript itself, decides a log's bytes."""
    return f"{FORMAT_VERSION}:{source}:{settings.include_sidechains}:{settings.max_entry_chars}"


def changed_since_import(store_root: Path, source: SourceKind, found: Path, settings: Settings) -> int:
    """How many of the transcripts at `found` a new import would read: new, or changed since the last one.

    Stat only, like the gate: a transcript counts when its size, mtime or the
    rendering settings differ from what the last import recorded.
    """
    seen = load_state(store_root)
    key = render_key(source, settings)
    if source == SourceKind.CLAUDE_MEM:  # one database: changed or not (its sessions are compared when imported)
        return int(database_stat(found, key) != seen.get(str(found.resolve())))
    return sum(1 for transcript in list_transcripts(source, found) if _stat_changed(transcript, seen, key))


def _stat_changed(transcript: Path, seen: dict[str, dict], key: str) -> bool:
    try:
        stat = transcript.stat()
        before = seen.get(str(transcript.resolve()))
    except OSError:
        return False  # vanished since listing: nothing to import
    if not isinstance(before, dict):
        return True
    now = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "key": key}
    return any(before.get(k) != v for k, v in now.items())


def database_stat(database: Path, key: str) -> dict:
    """The database's size and mtime, its write-ahead log's included: claude-mem writes there first."""
    size, mtime_ns = 0, 0
    for part in (database, database.with_name(database.name + "-wal")):
        try:
            stat = part.stat()
        except OSError:
            continue
        size, mtime_ns = size + stat.st_size, max(mtime_ns, stat.st_mtime_ns)
    return {"size": size, "mtime_ns": mtime_ns, "key": key}


# --- import --------------------------------------------------------------------------------


def import_transcripts(
    store_root: Path, source: SourceKind, path: Path | None, settings: Settings
) -> ImportResult:
    """Bring the store's activity logs up to date with `source`'s transcripts."""
    if source not in SOURCES:
        raise BadInput(f"unknown transcript source {source!r} (use one of {', '.join(SOURCES)})")
    store_root = Path(store_root)
    if not store_root.is_dir():
        raise BadInput(f"{store_root}: store folder does not exist")
    found = resolve_source_path(store_root, source, path, settings)
    project = sessions_project(store_root, source, path, settings)
    (store_root / ".dream").mkdir(exist_ok=True)
    from filelock import (  # start-up: filelock imports asyncio (~0.1 s); only writers need it
        FileLock,
        Timeout,
    )
    lock = FileLock(str(Layout(store_root).import_lock))
    try:
        with lock.acquire(timeout=LOCK_TIMEOUT_SECONDS):
            cleaned = litter.clean_import(Layout(store_root))  # what a killed import left: ours, under our lock
            kind = _DatabaseImport if source == SourceKind.CLAUDE_MEM else _Import
            result = kind(store_root, source, settings, project).run(found)
            result.cleaned = cleaned
            return result
    except Timeout:
        raise Refused(f"{store_root}: another import into this store is still running") from None


def sessions_project(store_root: Path, source: SourceKind, path: Path | None, settings: Settings) -> str | None:
    """The folder whose sessions a Codex or claude-mem import takes, or None to take every session at the path.

    Codex keeps the sessions of every project in one folder, each with the
    ``cwd`` it ran in, and claude-mem in one database, each with its
    project's name; a store takes those that ran in its project, named by
    its config (``project = PATH``). With no project, only a path the user
    named is imported whole. Claude Code keeps one folder per project already.
    """
    if source == SourceKind.CLAUDE_CODE:
        return None
    project = configured_project(store_root, settings)
    if project is not None:
        return os.path.normpath(os.path.abspath(project))
    if path is None and not settings.transcripts_path:
        raise BadInput(f"{store_root}: {default_source_path(store_root, source)} holds the sessions of every "
                       f"project; name this store's project with project = \"PATH\" in {store_config_path(store_root)}, or name "
                       f"the transcripts to import")
    return None


def in_project(cwd: str | None, project: str) -> bool:
    """Whether a session that ran in `cwd` ran in `project` (the folder itself or one below it)."""
    if not cwd:
        return False
    folder = os.path.normpath(cwd)
    return folder == project or folder.startswith(project.rstrip("/") + "/")


def import_configured(store_root: Path, settings: Settings) -> ImportResult | None:
    """The import a store's config asks for before a run (``transcripts = …``), if any."""
    if settings.transcripts is None:
        return None
    return import_transcripts(store_root, settings.transcripts, None, settings)


class _Import:
    """One import: compares each transcript with the state and updates its log."""

    def __init__(self, store_root: Path, source: SourceKind, settings: Settings, project: str | None = None):
        self.store = store_root
        self.source = source
        self.settings = settings
        self.project = project  # only sessions that ran there are imported (`sessions_project`)
        self.key = render_key(source, settings)
        self.state = load_state(store_root)
        self.claimed = {v.get("log"): k for k, v in self.state.items() if isinstance(v, dict)}

    def _file(self, log: str) -> Path:
        """Where the log named `log` (``logs/YYYY/MM/DD/…``) is written: the store's logs folder."""
        return log_file(self.store, log, self.settings.imported_logs_path)

    def run(self, found: Path) -> ImportResult:
        result = ImportResult(self.source, found)
        changed = self._pending(found, result)
        writes: list[tuple[Path, bytes]] = []
        removals: list[Path] = []
        for start in range(0, len(changed), RENDER_GROUP):
            group = changed[start : start + RENDER_GROUP]
            self._import_group(group, [self._read(path) for path, _, _ in group], result, writes, removals)
        # One durable commit (a sync of the store's file system, not of the
        # machine) before the state records the logs; a failed write raises
        # here, before any removal or state change.
        with DurableBatch() as batch:
            for target, data in writes:
                batch.write(target, data)
            batch.commit()
        self._apply(writes, removals, result)
        save_state(self.store, self.state)
        return result

    def _pending(self, found: Path, result: ImportResult) -> list[tuple[Path, dict, str]]:
        """(path, what stat says now, state key) of the transcripts at `found` to read again."""
        if not found.is_dir():
            self._refuse_unless_transcript(found)
        try:
            transcripts = list_transcripts(self.source, found)
        except OSError as exc:
            raise BadInput(f"{found}: cannot list transcripts: {exc.strerror or exc}") from None
        return self._changed(transcripts, result)

    def _refuse_unless_transcript(self, path: Path) -> None:
        """A file named on its own must be a transcript that can be read: else one line, exit 2.

        (In a folder of transcripts, one that cannot be read is a warning, and the rest are imported.)"""
        try:
            info = path.stat()
        except OSError as exc:
            raise BadInput(f"{path}: cannot read it: {exc.strerror or exc}") from None
        if not S_ISREG(info.st_mode):
            raise BadInput(f"{path}: is {kind_of(info.st_mode)}, not a transcript file; nothing imported")
        session = self._read(path)
        if isinstance(session, OSError):
            raise BadInput(f"{path}: cannot read it: {session.strerror or session}; nothing imported")
        if session.records and session.malformed == session.records:
            raise BadInput(f"{path}: is not a {self.source} transcript (none of its {session.records} line(s) "
                           f"is a JSON record); nothing imported")

    def _import_group(self, group: list[tuple[Path, dict, str]], read: list[Session | OSError],
                      result: ImportResult, writes: list[tuple[Path, bytes]], removals: list[Path]) -> None:
        """Render a group of read transcripts with one redaction pass, and plan the writes."""
        logs = iter(render_logs(
            [s.entries if s.has_conversation else [] for s in read if isinstance(s, Session)],
            self.settings.max_entry_chars,
        ))
        for (path, seen, name), session in zip(group, read):
            if isinstance(session, OSError):
                result.warnings.append(f"{path}: skipped, cannot read: {session.strerror or session}")
            else:
                self._update(path, name, seen, session, next(logs), result, writes, removals)

    def _read(self, path: Path) -> Session | OSError:
        try:
            return read_transcript(self.source, path, self.settings)
        except OSError as exc:
            return exc

    def _changed(self, transcripts: list[Path], result: ImportResult) -> list[tuple[Path, dict, str]]:
        """(path, what stat says now, state key) of transcripts to read again."""
        changed = []
        for transcript in transcripts:
            try:
                name = str(transcript.resolve())
                stat = transcript.stat()
            except OSError as exc:
                result.warnings.append(f"{transcript}: skipped, cannot read: {exc.strerror or exc}")
                continue
            seen: dict = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "key": self.key}
            before = self.state.get(name)
            if self.project is not None and not self._of_project(transcript, name, seen, before, result):
                continue
            if isinstance(before, dict) and self._unchanged(before, seen):
                result.sessions_unchanged += 1
            else:
                changed.append((transcript, seen, name))
        return changed

    def _of_project(self, transcript: Path, name: str, seen: dict, before: object, result: ImportResult) -> bool:
        """Whether the session ran in the store's project; its `cwd` goes into `seen` (and the state).

        The `cwd` is read from the transcript's first records only when the
        transcript changed since the state recorded it. A session of another
        project is recorded as such (so that it is not read again) and never
        written as a log; a log written before is left as it is.
        """
        known = as_dict(before)
        if all(known.get(k) == v for k, v in seen.items()) and "cwd" in known:
            seen["cwd"] = known["cwd"]
        else:
            seen["cwd"] = transcript_cwd(transcript)
        if in_project(seen["cwd"], self.project or ""):
            return True
        self.state[name] = {**seen, "log": known.get("log"), "elsewhere": True}
        result.sessions_elsewhere += 1
        return False

    def _update(self, path: Path, name: str, seen: dict, session: Session, rendered: tuple[str, int],
                result: ImportResult, writes: list[tuple[Path, bytes]], removals: list[Path]) -> None:
        """Plan the new log of one session that was read again (`rendered`: its log text, redactions)."""
        result.records_skipped += session.skipped
        if session.malformed:
            result.warnings.append(f"{path}: {session.malformed} malformed line(s) skipped")
        log = None
        if session.has_conversation:
            mtime = datetime.fromtimestamp(seen["mtime_ns"] / 1e9, timezone.utc)
            log, data = self._render(name, session, mtime, rendered, result)
            if _same_bytes(self._file(log), data):
                result.sessions_unchanged += 1
            else:
                writes.append((self._file(log), data))
        before = as_dict(self.state.get(name))
        old = before.get("log")
        if old and old != log and self.claimed.get(old) == name:
            removals.append(self._file(old))  # renamed (e.g. a first request arrived)
            del self.claimed[old]
        self.state[name] = {**seen, "log": log}
        if log:
            self.claimed[log] = name

    def _render(self, name: str, session: Session, fallback: datetime, rendered: tuple[str, int],
                result: ImportResult) -> tuple[str, bytes]:
        """The session's log: its store-relative path and bytes."""
        text, redactions = rendered
        result.redactions += redactions
        rel = log_relpath(session, fallback)
        if self.claimed.get(rel, name) != name:  # two transcripts, one session id
            rel = log_relpath(session, fallback, tag=hashlib.sha1(name.encode()).hexdigest()[:8])
        return rel, text.encode()

    def _apply(self, writes: list[tuple[Path, bytes]], removals: list[Path], result: ImportResult) -> None:
        """Count the new logs (all written by now), then remove renamed ones."""
        result.sessions_written += len(writes)
        result.logs_written.extend(target for target, _ in writes)
        for target in removals:
            if target.is_file():
                target.unlink()
                result.logs_removed.append(target)

    def _unchanged(self, before: dict, seen: dict) -> bool:
        if before.get("elsewhere") or any(before.get(k) != v for k, v in seen.items()):
            return False
        log = before.get("log")
        return log is None or self._file(log).is_file()  # a deleted log is written again


def _same_bytes(target: Path, data: bytes) -> bool:
    try:
        return target.stat().st_size == len(data) and target.read_bytes() == data
    except OSError:
        return False


class _DatabaseImport(_Import):
    """An import from claude-mem's database: each of its sessions stands where a transcript stands.

    A session's state key is ``<database>#<session id>`` and what decides
    whether it changed is a digest of every row it is made from (a database's
    mtime says nothing about one session). The database's own stat is kept
    too, for the gate (`changed_since_import`).
    """

    def _pending(self, found: Path, result: ImportResult) -> list[tuple[Path, dict, str]]:
        # Stat first: a write during the read then shows as a change to the next gate.
        database = database_stat(found, self.key)
        stored = claude_mem.read_database(found, self.settings.max_entry_chars)
        self.sessions: dict[str, Session] = {}
        changed = []
        for item in stored:
            if self.project is not None and not claude_mem.in_project(item.project, self.project):
                result.sessions_elsewhere += 1
                continue
            name = f"{found.resolve()}#{item.session.session_id}"
            seen = {"digest": item.digest, "mtime_ns": item.last_epoch_ms * 1_000_000, "key": self.key}
            before = self.state.get(name)
            if isinstance(before, dict) and self._unchanged(before, seen):
                result.sessions_unchanged += 1
            else:
                self.sessions[str(Path(name))] = item.session
                changed.append((Path(name), seen, name))
        self.state[str(found.resolve())] = database
        return changed

    def _read(self, path: Path) -> Session | OSError:
        return self.sessions[str(path)]
