"""Run history and the audit trail: append-only JSON lines, queried with DuckDB.

``.dream/history.jsonl`` holds one JSON object per line, oldest first; its
``kind`` says what the line records:

- ``"run"``: one run, skips and failures included, so `dream history`
  explains why a store was or wasn't dreamed (the keys of `RUN_TYPES`);
- ``"event"``: one review action (accept, reject, rollback, rebase,
  accept-abandoned …) with who did it, when and the comment (`EVENT_TYPES`).

Times are ISO 8601 in UTC. A key whose value is null is left out of its
line (an offline run has half its keys null); every reader names its
columns, so a missing key reads as null. Lines of another kind are left alone (a newer
dream may write them).

Appending never makes a command wait for long nor fail: each record is one
`os.write` of the whole line on an O_APPEND descriptor, then fsync, under a
short file lock (``.dream/history.lock``) so the lines of concurrent runs
never interleave. A damaged history costs a warning, not the run or accept.

Reading checks every line in Python (orjson, and the types below) and
skips a damaged one (cut short by a crash, garbage) with a warning naming
the file and line. DuckDB then answers the query, one ``read_json`` with
explicit column types, over one store's file or over every store's file of a
fleet (`read_fleet`). DuckDB only ever sees lines that passed the check: a
file with damaged lines is handed over as a private, cleaned copy, because
DuckDB's own ``ignore_errors`` blanks rows and can lose the good line after
a bad one.

Until version 0.1 the history was a DuckDB database, ``history.duckdb``.
The first command that touches the history moves its rows here and renames
it ``history.duckdb.migrated`` (a damaged one: ``history.duckdb.damaged-<time>``).
"""

from __future__ import annotations

import getpass
import os
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson

from dream.errors import BadInput
from dream.outcomes import RunOutcome
from dream.store import appendlog
from dream.store.regular import NotRegular
from dream.store.layout import Layout

# duckdb is imported inside the functions that query: importing it costs
# 100+ ms, which every CLI command would otherwise pay at start-up.

RUN_TYPES = {
    "run_id": "VARCHAR", "started_at": "TIMESTAMPTZ", "finished_at": "TIMESTAMPTZ",
    "status": "VARCHAR", "reason": "VARCHAR", "engine": "VARCHAR",
    "sessions_read": "INTEGER", "changes": "INTEGER", "duration_s": "DOUBLE",
    "proposal_id": "VARCHAR", "base_version": "INTEGER",
    "input_tokens": "BIGINT", "output_tokens": "BIGINT", "cache_read_tokens": "BIGINT",
    "cache_creation_tokens": "BIGINT", "turns": "INTEGER", "cost_usd": "DOUBLE",
    "redactions": "INTEGER", "error": "VARCHAR", "lines_added": "INTEGER", "lines_removed": "INTEGER",
    "needs_person": "INTEGER",  # notes the run left for a person (kept in dream.notes until answered)
}
# The event of what a partial accept or reject left pending: a proposal of its own, made by no run.
LEFT_PENDING = "left-pending"
EVENT_TYPES = {
    "at": "TIMESTAMPTZ", "action": "VARCHAR", "proposal_id": "VARCHAR", "version": "INTEGER",
    "actor": "VARCHAR", "comment": "VARCHAR", "detail": "VARCHAR",
}
RUN_COLUMNS = list(RUN_TYPES)
EVENT_COLUMNS = list(EVENT_TYPES)

_KINDS = {"run": RUN_TYPES, "event": EVENT_TYPES}
_REQUIRED = {"run": ("started_at", "status"), "event": ("at", "action")}
_NEWEST_FIRST = {"run": "started_at", "event": "at"}

# An append holds the lock for one write and one fsync. Held longer, its
# holder is stuck (a stopped process): append without it rather than wait.
LOCK_WAIT = 5.0


def actor() -> str:
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return f"{user}@{os.uname().nodename}"


# ---------------------------------------------------------------- writing


def record_run(layout: Layout, outcome: RunOutcome, started_at: float) -> None:
    u = outcome.usage
    _append(layout, {
        "kind": "run", "run_id": outcome.run_id, "started_at": _iso(started_at),
        "finished_at": _iso(started_at + outcome.duration_s), "status": str(outcome.status),
        "reason": outcome.reason, "engine": outcome.engine, "sessions_read": outcome.sessions_read,
        "changes": outcome.changes, "duration_s": outcome.duration_s, "proposal_id": outcome.proposal_id,
        "base_version": outcome.base_version, "input_tokens": u.input_tokens, "output_tokens": u.output_tokens,
        "cache_read_tokens": u.cache_read_tokens, "cache_creation_tokens": u.cache_creation_tokens,
        "turns": u.turns, "cost_usd": u.cost_usd, "redactions": outcome.redactions, "error": outcome.error,
        "lines_added": outcome.lines_added, "lines_removed": outcome.lines_removed,
        "needs_person": len(outcome.needs_person),
    })


def record_event(layout: Layout, action: str, proposal_id: str | None = None, version: int | None = None,
                 comment: str | None = None, detail: str | None = None, who: str | None = None,
                 strict: bool = False) -> None:
    """`strict`: raise the OSError instead of warning, for a caller that can record it later (a journal)."""
    _append(layout, {
        "kind": "event", "at": datetime.now(tz=timezone.utc).isoformat(), "action": action,
        "proposal_id": proposal_id, "version": version, "actor": who or actor(), "comment": comment,
        "detail": detail,
    }, strict)


def rewrite(layout: Layout, change: Callable[[bytes], bytes]) -> bool:
    """Pass the whole history through `change` under its lock, written atomically (a purge); whether it changed."""
    from dream.store.tree import atomic_write  # start-up: only a purge rewrites the history

    with _locked(layout):
        data = layout.history.read_bytes()
        changed = change(data)
        if changed == data:
            return False
        atomic_write(layout.history, changed)
        return True


def _iso(epoch: float | None) -> str | None:
    return None if epoch is None else datetime.fromtimestamp(epoch, tz=timezone.utc).isoformat()


def _append(layout: Layout, record: dict[str, Any], strict: bool = False) -> None:
    """Append one record, best effort: the history must never turn a done run or accept into a failure."""
    line = _line(record)
    try:
        layout.dream.mkdir(parents=True, exist_ok=True)
        with _locked(layout):
            _migrate_locked(layout)
            _append_lines(layout, line)
    except OSError as exc:
        if strict:
            raise
        _warn(f"{layout.history}: history not recorded: {exc.strerror or exc}")


def _line(record: dict[str, Any]) -> bytes:
    # A key left out reads as null (the readers name every column); an offline run has half its keys null.
    record = {key: value for key, value in record.items() if value is not None}
    try:
        return orjson.dumps(record, default=str) + b"\n"
    except orjson.JSONEncodeError:
        # A comment typed on a terminal that is not UTF-8 reaches Python as
        # lone surrogates, which JSON cannot carry: keep the rest of the text.
        return orjson.dumps({k: _utf8(v) for k, v in record.items()}, default=str) + b"\n"


def _utf8(value: Any) -> Any:
    return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace") if isinstance(value, str) else value


def _append_lines(layout: Layout, data: bytes) -> None:
    moved = appendlog.append(layout.history, data)
    if moved is not None:
        _warn(f"{layout.history}: not a regular file; moved to {moved.name}, starting a new history")


@contextmanager
def _locked(layout: Layout) -> Iterator[None]:
    """Hold the history lock; after `LOCK_WAIT`, or if it cannot be taken, go on without it.

    Without the lock an append is still one O_APPEND write, which a local
    filesystem does not interleave with another: losing the record would be worse.
    """
    from filelock import (  # start-up: filelock imports asyncio (~0.1 s); only writers need it
        FileLock,
        Timeout,
    )
    lock = FileLock(str(layout.history_lock), timeout=LOCK_WAIT)
    try:
        _check_lock_file(layout.history_lock)
        lock.acquire()
    except Timeout:
        _warn(f"{layout.history_lock}: held for over {LOCK_WAIT:g} s; writing the history without it")
    except OSError as exc:
        _warn(f"{layout.history_lock}: cannot lock ({exc.strerror or exc}); writing the history without it")
    else:
        try:
            yield
        finally:
            lock.release()
        return
    yield


def _check_lock_file(path: Path) -> None:
    # filelock would open a FIFO and spin on it until the timeout.
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        raise NotRegular(path, "is not a regular file")


# ---------------------------------------------------------------- reading


@dataclass(frozen=True)
class Damage:
    """A line of a history file that was skipped, or a history file that could not be read (`line` None)."""

    file: Path
    line: int | None
    problem: str

    def to_json(self) -> dict[str, Any]:
        return {"file": str(self.file), "line": self.line, "problem": self.problem}


@dataclass
class History:
    """The newest runs and events, and what was skipped on the way."""

    runs: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    damaged: list[Damage] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"runs": self.runs, "events": self.events, "damaged_lines": [d.to_json() for d in self.damaged]}


@dataclass
class _Scan:
    """One history file after the line check."""

    path: Path
    store: Path
    good: list[bytes]
    counts: dict[str, int]
    damaged: list[Damage]


def runs(layout: Layout, limit: int = 50, strict: bool = False) -> list[dict[str, Any]]:
    return read(layout, limit, strict, kinds=("run",)).runs


def events(layout: Layout, limit: int = 50, strict: bool = False) -> list[dict[str, Any]]:
    return read(layout, limit, strict, kinds=("event",)).events


def read(layout: Layout, limit: int = 50, strict: bool = False, kinds: Iterable[str] = ("run", "event")) -> History:
    """The newest `limit` runs and events of one store, newest first.

    A history file that cannot be read at all (a symlink, a FIFO, no
    permission) is one clear `BadInput` when `strict` (for `dream history`,
    where the rows are the answer); otherwise a warning and no rows, since
    accept, recovery and rebase only consult the history and must not fail
    after their real work because of it. Damaged lines are skipped either way.
    """
    _check_limit(limit)
    _migrate(layout)
    try:
        scan = _scan(layout.history, layout.root)
    except BadInput as exc:
        problem = str(exc)
        if strict:
            raise BadInput(f"{problem}; move it aside and the next run starts a new one") from None
        _warn(f"{problem}; going on without it")
        return History()
    return _answer([scan] if scan else [], limit, kinds, with_store=False)


HISTORY = "run history"  # what the file is called in messages

# The last runs and events of a store are in the file's last lines: read this much of its end.
TAIL_BYTES = 64 * 1024


def last_run_reason(layout: Layout) -> str | None:
    """The reason of the store's last recorded run (None: no run, or it had none), from the file's tail only.

    The fleet asks this of every due store each night (was it skipped for
    the budget?), so it reads the end of the file, not the whole history.
    """
    for record in _newest_records(layout):
        if record.get("kind") == "run":
            reason = record.get("reason")
            return reason if isinstance(reason, str) else None
    return None


def event_recorded(layout: Layout, action: str, version: int) -> bool:
    """Whether the history's last records hold an event of `action` at `version` (the file's tail only).

    An accept or rollback asks this once its files are written, and a replay of
    its journal again, right after the event would have been written: it is
    at the end of the file if anywhere, and no query (nor DuckDB's import) is needed.
    """
    return any(record.get("kind") == "event" and record.get("action") == action and record.get("version") == version
               for record in _newest_records(layout))


def _newest_records(layout: Layout) -> Iterator[dict[str, Any]]:
    """The records of the history file's last TAIL_BYTES, newest first; damaged lines skipped."""
    try:  # never a plain open(): a FIFO in the history's place would wait for a writer forever
        tail = appendlog.read_tail(layout.history, HISTORY, TAIL_BYTES)
    except BadInput:
        return
    for line in reversed(tail.splitlines() if tail else []):
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue  # a damaged line, or the first one cut by the seek
        if isinstance(record, dict):
            yield record


def fleet_runs(stores: Iterable[Path], limit: int = 50) -> list[dict[str, Any]]:
    """The newest `limit` runs over all `stores`, each row with its ``store``."""
    return read_fleet(stores, limit, kinds=("run",)).runs


def read_fleet(stores: Iterable[Path], limit: int = 50, kinds: Iterable[str] = ("run", "event")) -> History:
    """The newest `limit` runs and events over all `stores` (one query each), rows tagged with their ``store``.

    A store whose history cannot be read is reported in `damaged` and left out.
    """
    _check_limit(limit)
    scans, unreadable = [], []
    for store in stores:
        layout = Layout(Path(store))
        _migrate(layout)
        try:
            scan = _scan(layout.history, layout.root)
        except BadInput as exc:
            unreadable.append(Damage(layout.history, None, str(exc).removeprefix(f"{layout.history}: ")))
            continue
        if scan:
            scans.append(scan)
    _report(unreadable)
    found = _answer(scans, limit, kinds, with_store=True)
    found.damaged[:0] = unreadable
    return found


def _check_limit(limit: int) -> None:
    if limit < 0:
        raise BadInput(f"--limit must be 0 or more, got {limit}")


def _answer(scans: list[_Scan], limit: int, kinds: Iterable[str], with_store: bool) -> History:
    damaged = [d for s in scans for d in s.damaged]
    _report(damaged)
    rows = _query(scans, kinds, limit, with_store)
    return History(rows.get("run", []), rows.get("event", []), damaged)


def _scan(path: Path, store: Path) -> _Scan | None:
    """Check every line of one history file; None when the store has none yet."""
    data = appendlog.read(path, HISTORY)
    if data is None:
        return None
    scan = _Scan(path, store, [], dict.fromkeys(_KINDS, 0), [])
    lines = data.split(b"\n")
    tail = lines.pop()  # what follows the last newline: nothing, unless a write was cut short
    for number, line in enumerate(lines, 1):
        if line.strip():
            _take(scan, number, line)
    if tail.strip():
        scan.damaged.append(Damage(path, len(lines) + 1, "unterminated (cut short, or being written right now)"))
    return scan


def _take(scan: _Scan, number: int, line: bytes) -> None:
    problem: str | None
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        problem = "not valid JSON"
    else:
        problem = _problem(record)
    if problem:
        scan.damaged.append(Damage(scan.path, number, problem))
        return
    scan.good.append(line)
    if record["kind"] in _KINDS:
        scan.counts[record["kind"]] += 1


def _problem(record: Any) -> str | None:
    """Why DuckDB could not take this record as typed (None: it can)."""
    if not isinstance(record, dict):
        return "not a JSON object"
    kind = record.get("kind")
    if not isinstance(kind, str):
        return "no kind"
    types = _KINDS.get(kind)
    if types is None:
        return None  # a kind of a newer dream: not ours to judge
    for name in _REQUIRED[kind]:
        if record.get(name) is None:
            return f"a {kind} without {name}"
    for name, sql_type in types.items():
        value = record.get(name)
        if value is not None and not _fits(value, sql_type):
            return f"{name} is not {sql_type}"
    return None


_INT_BITS = {"INTEGER": 31, "BIGINT": 63}


def _fits(value: Any, sql_type: str) -> bool:
    if sql_type == "VARCHAR":
        return isinstance(value, str)
    if sql_type == "DOUBLE":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if sql_type in _INT_BITS:
        bound = 1 << _INT_BITS[sql_type]
        return isinstance(value, int) and not isinstance(value, bool) and -bound <= value < bound
    return isinstance(value, str) and _is_timestamp(value)


def _is_timestamp(value: str) -> bool:
    try:
        return datetime.fromisoformat(value).tzinfo is not None
    except ValueError:
        return False


def _query(scans: list[_Scan], kinds: Iterable[str], limit: int, with_store: bool) -> dict[str, list[dict]]:
    """The newest `limit` rows of each kind over every file, one DuckDB query per kind, vetted lines only."""
    wanted = [kind for kind in kinds if limit and any(s.counts[kind] for s in scans)]
    if not wanted:
        return {}
    import duckdb  # start-up: duckdb costs ~0.1 s to import, and only queries need it

    with _vetted_files(scans) as files, duckdb.connect() as con:
        return {kind: _query_kind(con, files, kind, limit, with_store) for kind in wanted}


def _query_kind(con: Any, files: dict[str, _Scan], kind: str, limit: int, with_store: bool) -> list[dict]:
    types = _KINDS[kind]
    columns = ", ".join(f'"{c}"' for c in types)
    sql = (f"SELECT {columns}, filename FROM read_json(?, format = 'newline_delimited', columns = ?, "
           f"filename = true, ignore_errors = true, maximum_object_size = ?) "
           f'WHERE kind = ? ORDER BY "{_NEWEST_FIRST[kind]}" DESC LIMIT ?')
    paths = [path for path, scan in files.items() if scan.counts[kind]]
    # DuckDB refuses a line longer than maximum_object_size outright, ignore_errors or not.
    longest = max(len(line) for scan in files.values() for line in scan.good)
    rows = con.execute(sql, [paths, {"kind": "VARCHAR", **types}, max(longest + 1, 1 << 24), kind, limit]).fetchall()
    return [_row(types, row, files[row[-1]].store if with_store else None) for row in rows]


@contextmanager
def _vetted_files(scans: list[_Scan]) -> Iterator[dict[str, _Scan]]:
    """Each history file by the path DuckDB reads: itself when all its lines passed, else a cleaned copy."""
    damaged = [i for i, scan in enumerate(scans) if scan.damaged]
    if not damaged:
        yield {str(scan.path): scan for scan in scans}
        return
    with tempfile.TemporaryDirectory(prefix="dream-history-") as tmp:
        yield {_cleaned(scan, Path(tmp) / f"{i}.jsonl") if i in damaged else str(scan.path): scan
               for i, scan in enumerate(scans)}


def _cleaned(scan: _Scan, copy: Path) -> str:
    try:
        copy.write_bytes(b"".join(line + b"\n" for line in scan.good))
    except OSError:
        return str(scan.path)  # no room for the copy: DuckDB's ignore_errors then does what it can
    return str(copy)


def _row(types: dict[str, str], row: tuple, store: Path | None) -> dict[str, Any]:
    found = dict(zip(types, row))
    if store is not None:
        found["store"] = str(store)
    return found


def _report(damaged: list[Damage]) -> None:
    """One warning per file, once per process (rebase reads the history twice)."""
    by_file: dict[Path, list[Damage]] = {}
    for d in damaged:
        by_file.setdefault(d.file, []).append(d)
    for path, found in by_file.items():
        key = (path, tuple((d.line, d.problem) for d in found))
        if key in _WARNED:
            continue
        _WARNED.add(key)
        if found[0].line is None:
            _warn(f"{path}: {found[0].problem}; going on without it")
            continue
        numbers = ", ".join(str(d.line) for d in found[:10]) + (" …" if len(found) > 10 else "")
        first = f"; line {found[0].line}: {found[0].problem}" if len(found) > 1 else f": {found[0].problem}"
        plural = "s" if len(found) > 1 else ""
        _warn(f"{path}: skipped {len(found)} damaged line{plural} (line{plural} {numbers}{first})")


_WARNED: set = set()


def _warn(message: str) -> None:
    sys.stderr.write(f"dream: warning: {' '.join(message.split())}\n")


# ---------------------------------------------------------------- the DuckDB history before JSON lines


def _migrate(layout: Layout) -> None:
    """Move a ``history.duckdb``'s rows into the JSON lines, once (a cheap check when there is none)."""
    if not _exists(layout.legacy_history):
        return
    try:
        with _locked(layout):
            _migrate_locked(layout)
    except OSError as exc:
        _warn(f"{layout.legacy_history}: cannot move its rows to {layout.history.name}: {exc.strerror or exc}")


def _migrate_locked(layout: Layout) -> None:
    """Call with the history lock held, so two commands never copy the rows twice."""
    legacy = layout.legacy_history
    if not _exists(legacy):
        return
    try:
        records = _legacy_records(legacy)
    except _LegacyBusy:
        _warn(f"{legacy}: in use by another process (an older dream?); its rows move to "
              f"{layout.history.name} on a later command")
        return
    except _LegacyDamaged as exc:
        moved = _move_legacy(legacy, "damaged")
        _warn(f"{legacy}: damaged history database ({exc}) moved to {moved.name}; the history starts anew")
        return
    if records:
        _append_lines(layout, b"".join(map(_line, records)))
    # A crash between the append and this rename copies the rows again on the next command.
    _move_legacy(legacy, "migrated")


def _exists(path: Path) -> bool:
    try:
        path.lstat()
    except FileNotFoundError:
        return False
    return True


class _LegacyBusy(Exception):
    pass


class _LegacyDamaged(Exception):
    pass


def _legacy_records(path: Path) -> list[dict[str, Any]]:
    """Every run and event of a ``history.duckdb``, as JSON line records."""
    import duckdb  # start-up: only a store from before JSON lines has such a file

    if not path.is_file() or path.is_symlink():
        raise _LegacyDamaged("not a regular file")
    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.Error as exc:
        # A live older dream holds its write lock: not damage, just not yet.
        if "conflicting lock" in str(exc).lower():
            raise _LegacyBusy() from None
        raise _LegacyDamaged(_first_line(exc)) from None
    try:
        with con:
            tables = {name for (name,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
            return [record for table, kind in (("runs", "run"), ("events", "event")) if table in tables
                    for record in _legacy_table(con, table, kind)]
    except duckdb.Error as exc:
        raise _LegacyDamaged(_first_line(exc)) from None


def _legacy_table(con: Any, table: str, kind: str) -> list[dict[str, Any]]:
    cur = con.execute(f'SELECT * FROM "{table}"')
    names = [d[0] for d in cur.description]
    wanted = _KINDS[kind]
    return [{"kind": kind, **{n: _plain(v) for n, v in zip(names, row) if n in wanted}} for row in cur.fetchall()]


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.astimezone(timezone.utc).isoformat()
    return value


def _move_legacy(path: Path, why: str) -> Path:
    if why == "migrated":
        target = path.with_name(f"{path.name}.migrated")
        path.replace(target)
    else:
        target = appendlog.move_aside(path, why)
    wal = path.with_name(path.name + ".wal")
    if wal.exists():
        wal.replace(target.with_name(target.name + ".wal"))
    return target


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
