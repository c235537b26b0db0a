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
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Any, Iterator

import duckdb

from .layout import Layout
from .outcomes import RunOutcome

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
    with _connect(layout) as con:
        con.execute(f"INSERT INTO runs VALUES ({', '.join('?' * len(row))})", row)


def record_event(layout: Layout, action: str, proposal_id: str | None = None, version: int | None = None,
                 comment: str | None = None, detail: str | None = None, who: str | None = None) -> None:
    with _connect(layout) as con:
        con.execute(
            "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?)",
            [datetime.now(tz=timezone.utc), action, proposal_id, version, who or actor(), comment, detail],
        )


def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: list | None = None) -> list[dict[str, Any]]:
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def runs(layout: Layout, limit: int = 50) -> list[dict[str, Any]]:
    if not layout.history.exists():
        return []
    with _connect(layout, read_only=True) as con:
        return _rows(con, "SELECT * FROM runs ORDER BY started_at DESC LIMIT ?", [limit])


def events(layout: Layout, limit: int = 50) -> list[dict[str, Any]]:
    if not layout.history.exists():
        return []
    with _connect(layout, read_only=True) as con:
        return _rows(con, 'SELECT * FROM events ORDER BY "at" DESC LIMIT ?', [limit])
