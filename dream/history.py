"""Run history and the audit trail, in a DuckDB file under ``.dream/``.

Every run is recorded, skips and failures included, so `dream history`
explains why a store was or wasn't dreamed. Review actions (accept, reject,
rollback, rebase) go in a second table with who did them and why.

DuckDB lets one process write a file at a time, so a writer that finds the
file busy retries for a few seconds: several runs may end together (for
example the lock skips of concurrent runs).
"""

from __future__ import annotations

import getpass
import random
import socket
import sys
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

import duckdb

from dream.errors import BadInput
from dream.outcomes import RunOutcome
from dream.store.layout import Layout

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id VARCHAR, started_at TIMESTAMPTZ, finished_at TIMESTAMPTZ,
    status VARCHAR, reason VARCHAR, engine VARCHAR,
    sessions_read INTEGER, changes INTEGER, duration_s DOUBLE,
    proposal_id VARCHAR, base_version INTEGER,
    input_tokens BIGINT, output_tokens BIGINT, cache_read_tokens BIGINT,
    cache_creation_tokens BIGINT, turns INTEGER, cost_usd DOUBLE,
    redactions INTEGER, error VARCHAR
);
CREATE TABLE IF NOT EXISTS events (
    "at" TIMESTAMPTZ, action VARCHAR, proposal_id VARCHAR, version INTEGER,
    actor VARCHAR, comment VARCHAR, detail VARCHAR
);
"""

RUN_COLUMNS = [
    "run_id", "started_at", "finished_at", "status", "reason", "engine", "sessions_read",
    "changes", "duration_s", "proposal_id", "base_version", "input_tokens", "output_tokens",
    "cache_read_tokens", "cache_creation_tokens", "turns", "cost_usd", "redactions", "error",
]


def actor() -> str:
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return f"{user}@{socket.gethostname()}"


@contextmanager
def _connect(layout: Layout, read_only: bool = False, wait: float = 20.0) -> Iterator[duckdb.DuckDBPyConnection]:
    layout.dream.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + wait
    while True:
        try:
            con = duckdb.connect(str(layout.history), read_only=read_only and layout.history.exists())
            break
        except duckdb.IOException:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05 + random.random() * 0.1)
    try:
        con.execute(_SCHEMA) if not read_only or not layout.history.exists() else None
        yield con
    finally:
        con.close()


def _ts(epoch: float | None) -> datetime | None:
    return None if epoch is None else datetime.fromtimestamp(epoch, tz=timezone.utc)


def record_run(layout: Layout, outcome: RunOutcome, started_at: float) -> None:
    u = outcome.usage
    row = [
        outcome.run_id, _ts(started_at), _ts(started_at + outcome.duration_s), str(outcome.status),
        outcome.reason, outcome.engine, outcome.sessions_read, outcome.changes, outcome.duration_s,
        outcome.proposal_id, outcome.base_version, u.input_tokens, u.output_tokens,
        u.cache_read_tokens, u.cache_creation_tokens, u.turns, u.cost_usd, outcome.redactions,
        outcome.error,
    ]
    _insert(layout, f"INSERT INTO runs VALUES ({', '.join('?' * len(row))})", row)


def record_event(layout: Layout, action: str, proposal_id: str | None = None, version: int | None = None,
                 comment: str | None = None, detail: str | None = None, who: str | None = None) -> None:
    _insert(layout, "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?)",
            [datetime.now(tz=timezone.utc), action, proposal_id, version, who or actor(), comment, detail])


def _insert(layout: Layout, sql: str, row: list) -> None:
    """Append one row, best effort: the history must never turn a done run or accept into a failure.

    A damaged database is moved aside (``history.duckdb.damaged-<time>``,
    kept for inspection) and a fresh one takes the row; a database that
    stays busy, or any other failure, costs the row and a warning on stderr.
    """
    try:
        _execute(layout, sql, row)
        return
    except duckdb.Error as exc:
        if _is_busy(exc) or not layout.history.exists():
            _warn(f"{layout.history}: history not recorded: {_first_line(exc)}")
            return
        moved = _move_aside(layout)
        _warn(f"{layout.history}: damaged history database moved to {moved.name}; starting a new one")
    try:
        _execute(layout, sql, row)
    except duckdb.Error as exc:
        _warn(f"{layout.history}: history not recorded: {_first_line(exc)}")


def _execute(layout: Layout, sql: str, row: list) -> None:
    with _connect(layout) as con:
        con.execute(sql, row)


def _is_busy(exc: duckdb.Error) -> bool:
    """Another process holds the file (after `_connect` waited): not damage, just bad timing."""
    return isinstance(exc, duckdb.IOException) and "lock" in str(exc).lower()


def _move_aside(layout: Layout) -> Path:
    stamp = datetime.now(tz=timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    target = layout.history.with_name(f"{layout.history.name}.damaged-{stamp}")
    layout.history.replace(target)
    wal = layout.history.with_name(layout.history.name + ".wal")
    if wal.exists():
        wal.replace(target.with_name(target.name + ".wal"))
    return target


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _warn(message: str) -> None:
    sys.stderr.write(f"dream: warning: {' '.join(message.split())}\n")


def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: list | None = None) -> list[dict[str, Any]]:
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def runs(layout: Layout, limit: int = 50, strict: bool = False) -> list[dict[str, Any]]:
    return _read(layout, "SELECT * FROM runs ORDER BY started_at DESC LIMIT ?", limit, strict)


def events(layout: Layout, limit: int = 50, strict: bool = False) -> list[dict[str, Any]]:
    return _read(layout, 'SELECT * FROM events ORDER BY "at" DESC LIMIT ?', limit, strict)


def _read(layout: Layout, sql: str, limit: int, strict: bool) -> list[dict[str, Any]]:
    """The newest `limit` rows.

    A damaged or busy database is one clear `BadInput` when `strict` (for
    `dream history`, where the rows are the answer); otherwise a warning and
    no rows, since accept, recovery and rebase only consult the history and
    must not fail after their real work because of it.
    """
    if limit < 0:
        raise BadInput(f"--limit must be 0 or more, got {limit}")
    if not layout.history.exists():
        return []
    try:
        with _connect(layout, read_only=True) as con:
            return _rows(con, sql, [limit])
    except duckdb.Error as exc:
        problem = f"{layout.history}: cannot read the run history ({_first_line(exc)})"
        if strict:
            raise BadInput(f"{problem}; if it is damaged, move it aside and the next run starts a new one") from None
        _warn(f"{problem}; going on without it")
        return []
