"""`dream import --from claude-mem`: claude-mem's SQLite database → activity logs, read only.

The database is built here with the tables dream reads, as claude-mem's
``src/services/sqlite/schema.sql`` (migration 35) declares them.
"""

from __future__ import annotations

import hashlib
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

import pytest

from dream.pipeline.status import transcripts_waiting
from dream.transcripts import claude_mem

SCHEMA = """
CREATE TABLE sdk_sessions (
  id INTEGER PRIMARY KEY AUTOINCREMENT, content_session_id TEXT UNIQUE NOT NULL, memory_session_id TEXT UNIQUE,
  project TEXT NOT NULL, platform_source TEXT NOT NULL DEFAULT 'claude', user_prompt TEXT,
  started_at TEXT NOT NULL, started_at_epoch INTEGER NOT NULL, completed_at TEXT, completed_at_epoch INTEGER,
  status TEXT NOT NULL DEFAULT 'active' CHECK(status IN ('active', 'completed', 'failed')),
  worker_port INTEGER, prompt_counter INTEGER DEFAULT 0, custom_title TEXT);
CREATE TABLE observations (
  id INTEGER PRIMARY KEY AUTOINCREMENT, memory_session_id TEXT NOT NULL, project TEXT NOT NULL, text TEXT,
  type TEXT NOT NULL, title TEXT, subtitle TEXT, facts TEXT, narrative TEXT, concepts TEXT, files_read TEXT,
  files_modified TEXT, prompt_number INTEGER, discovery_tokens INTEGER DEFAULT 0, content_hash TEXT,
  agent_type TEXT, agent_id TEXT, merged_into_project TEXT, generated_by_model TEXT, metadata TEXT,
  created_at TEXT NOT NULL, created_at_epoch INTEGER NOT NULL,
  FOREIGN KEY(memory_session_id) REFERENCES sdk_sessions(memory_session_id) ON DELETE CASCADE ON UPDATE CASCADE,
  UNIQUE(memory_session_id, content_hash));
CREATE TABLE session_summaries (
  id INTEGER PRIMARY KEY AUTOINCREMENT, memory_session_id TEXT NOT NULL, project TEXT NOT NULL, request TEXT,
  investigated TEXT, learned TEXT, completed TEXT, next_steps TEXT, files_read TEXT, files_edited TEXT,
  notes TEXT, prompt_number INTEGER, discovery_tokens INTEGER DEFAULT 0, merged_into_project TEXT,
  created_at TEXT NOT NULL, created_at_epoch INTEGER NOT NULL);
CREATE TABLE user_prompts (
  id INTEGER PRIMARY KEY AUTOINCREMENT, content_session_id TEXT NOT NULL, prompt_number INTEGER NOT NULL,
  prompt_text TEXT NOT NULL, created_at TEXT NOT NULL, created_at_epoch INTEGER NOT NULL);
"""

SECRET = "ghp_" + "R2d2C3po" * 5
SESSIONS = [  # (content session id, memory session id, project, start)
    ("5b0c1d2e-0000-4000-8000-000000000001", "mem-1", "ledger", datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)),
    ("5b0c1d2e-0000-4000-8000-000000000002", "mem-2", "ledger", datetime(2026, 3, 4, 14, 30, tzinfo=timezone.utc)),
]


def ms(moment: datetime, minutes: int = 0) -> int:
    return int(moment.timestamp() * 1000) + minutes * 60_000


def add_observation(db: Path, memory_id: str, at: int, title: str, narrative: str) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO observations (memory_session_id, project, type, title, narrative, created_at, "
                     "created_at_epoch) VALUES (?, 'ledger', 'discovery', ?, ?, 'x', ?)",
                     (memory_id, title, narrative, at))
    conn.close()


@pytest.fixture
def db(tmp_path) -> Path:
    path = tmp_path / "claude-mem.db"
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    for i, (content_id, memory_id, project, start) in enumerate(SESSIONS):
        conn.execute("INSERT INTO sdk_sessions (content_session_id, memory_session_id, project, started_at, "
                     "started_at_epoch) VALUES (?, ?, ?, ?, ?)", (content_id, memory_id, project, start.isoformat(),
                                                                  ms(start)))
        prompts = ["set up the ledger export", "remember that invoices are exported as CSV every Monday"] if i == 0 \
            else ["rotate the api key", f"remember that the staging token is {SECRET}"]
        for number, text in enumerate(prompts, 1):
            conn.execute("INSERT INTO user_prompts (content_session_id, prompt_number, prompt_text, created_at, "
                         "created_at_epoch) VALUES (?, ?, ?, 'x', ?)", (content_id, number, text, ms(start, number)))
        conn.execute("INSERT INTO session_summaries (memory_session_id, project, request, learned, created_at, "
                     "created_at_epoch) VALUES (?, ?, ?, ?, 'x', ?)",
                     (memory_id, project, prompts[0], "exports run from cron", ms(start, 30)))
    conn.commit()
    conn.close()
    add_observation(path, "mem-1", ms(SESSIONS[0][3], 1), "Export job found", "The export runs from cron.")
    return path


@pytest.fixture
def store(tmp_path) -> Path:
    folder = tmp_path / "store"
    folder.mkdir()
    (folder / "MEMORY.md").write_text("# Memory\n")
    return folder


def logs(store: Path) -> dict[str, str]:
    return {str(p.relative_to(store)): p.read_text() for p in sorted((store / "logs").rglob("*.md"))}


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_import_writes_one_log_per_session_dated_by_its_start(cli, db, store):
    before = digest(db)
    result = cli("import", "--from", "claude-mem", "--db", str(db), "--store", str(store))
    assert result.code == 0, result.stderr
    written = logs(store)
    assert sorted(written) == [
        "logs/2026/03/02/5b0c1d2e-0000-4000-8000-000000000001-set-up-the-ledger-export.md",
        "logs/2026/03/04/5b0c1d2e-0000-4000-8000-000000000002-rotate-the-api-key.md",
    ]
    first = written[sorted(written)[0]].splitlines()
    # prompts are the person's (> ), observations tool lines (. ), the summary the agent side's (< )
    assert "> set up the ledger export" in first
    assert "> remember that invoices are exported as CSV every Monday" in first
    assert any(line.startswith(". [observation:discovery] Export job found") for line in first)
    assert any(line.startswith("< [summary]") for line in first)
    assert first.index("> set up the ledger export") < first.index(
        next(line for line in first if line.startswith(". [observation")))
    assert digest(db) == before  # read only: the database is byte for byte what it was
    assert sorted(p.name for p in db.parent.iterdir() if p.name.startswith("claude-mem")) == ["claude-mem.db"]


def test_a_secret_in_a_prompt_is_redacted_in_the_log(cli, db, store):
    result = cli("import", "--from", "claude-mem", "--db", str(db), "--store", str(store), "--json")
    assert result.code == 0, result.stderr
    text = "".join(logs(store).values())
    assert SECRET not in text
    assert "remember that the staging token is [REDACTED:" in text


def test_import_again_reads_unchanged_sessions_as_unchanged_and_refreshes_a_grown_one(cli, db, store):
    import json

    args = ("import", "--from", "claude-mem", "--db", str(db), "--store", str(store), "--json")
    first = json.loads(cli(*args).stdout)
    assert first["sessions_written"] == 2
    mtimes = {p: p.stat().st_mtime_ns for p in (store / "logs").rglob("*.md")}
    again = json.loads(cli(*args).stdout)
    assert (again["sessions_written"], again["sessions_unchanged"]) == (0, 2)
    assert {p: p.stat().st_mtime_ns for p in (store / "logs").rglob("*.md")} == mtimes

    add_observation(db, "mem-2", ms(SESSIONS[1][3], 5), "Key rotated", "The staging key was rotated.")
    grown = json.loads(cli(*args).stdout)
    assert (grown["sessions_written"], grown["sessions_unchanged"]) == (1, 1)
    assert grown["logs_written"] == ["logs/2026/03/04/5b0c1d2e-0000-4000-8000-000000000002-rotate-the-api-key.md"]
    assert ". [observation:discovery] Key rotated" in "".join(logs(store).values())
    assert len(logs(store)) == 2


def test_config_names_a_claude_mem_database(cli, db, store):
    (store / ".dream").mkdir()
    (store / ".dream" / "config.toml").write_text(f'transcripts = "claude-mem"\ntranscripts_path = "{db}"\n')
    result = cli("import", "--from", "claude-mem", "--store", str(store))
    assert result.code == 0, result.stderr
    assert len(logs(store)) == 2


def test_status_counts_the_database_as_changed_until_it_is_imported_and_again_when_it_grows(cli, db, store):
    (store / ".dream").mkdir()
    (store / ".dream" / "config.toml").write_text(f'transcripts = "claude-mem"\ntranscripts_path = "{db}"\n')
    assert transcripts_waiting(store)["changed"] == 1
    assert cli("import", "--from", "claude-mem", "--store", str(store)).code == 0
    assert transcripts_waiting(store)["changed"] == 0
    add_observation(db, "mem-1", ms(SESSIONS[0][3], 9), "Cron moved", "The export moved to a systemd timer.")
    assert transcripts_waiting(store)["changed"] == 1


def test_a_configured_project_takes_only_its_sessions(cli, db, store):
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE sdk_sessions SET project = 'billing' WHERE memory_session_id = 'mem-2'")
    conn.close()
    (store / ".dream").mkdir()
    (store / ".dream" / "config.toml").write_text('project = "/work/ledger"\n')
    result = cli("import", "--from", "claude-mem", "--db", str(db), "--store", str(store))
    assert result.code == 0, result.stderr
    assert [Path(p).name for p in logs(store)] == [
        "5b0c1d2e-0000-4000-8000-000000000001-set-up-the-ledger-export.md"]
    assert "other projects'    1" in result.stdout


def refused(result) -> str:
    assert result.code == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_a_missing_database_is_refused_with_one_line(cli, tmp_path, store):
    line = refused(cli("import", "--from", "claude-mem", "--db", str(tmp_path / "nope.db"), "--store", str(store)))
    assert "nope.db" in line
    assert not (store / "logs").exists()


def test_a_garbage_file_is_refused_with_one_line(cli, tmp_path, store):
    garbage = tmp_path / "claude-mem.db"
    garbage.write_bytes(b"this is not SQLite at all\n" * 100)
    line = refused(cli("import", "--from", "claude-mem", "--db", str(garbage), "--store", str(store)))
    assert "claude-mem.db" in line and "claude-mem database" in line
    assert not (store / "logs").exists()


def test_a_sqlite_database_that_is_not_claude_mems_is_refused(cli, tmp_path, store):
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE notes (text TEXT)")
    conn.close()
    line = refused(cli("import", "--from", "claude-mem", "--db", str(other), "--store", str(store)))
    assert "sdk_sessions" in line


def test_a_database_locked_by_its_writer_is_refused_and_left_alone(cli, db, store, monkeypatch):
    monkeypatch.setattr(claude_mem, "LOCK_WAIT_SECONDS", 0.05)  # how long it waits is not what is tested
    writer = sqlite3.connect(db, isolation_level=None)
    writer.execute("BEGIN EXCLUSIVE")  # claude-mem mid-write (rollback journal): no reader may start
    try:
        line = refused(cli("import", "--from", "claude-mem", "--db", str(db), "--store", str(store)))
        writer.execute("INSERT INTO user_prompts (content_session_id, prompt_number, prompt_text, created_at, "
                       "created_at_epoch) VALUES ('x', 1, 'still writable', 'x', 0)")
        writer.execute("COMMIT")  # the writer was never blocked by the refused import
    finally:
        writer.close()
    assert "locked" in line
    assert not (store / "logs").exists()


def test_db_is_only_for_claude_mem(cli, db, store):
    line = refused(cli("import", "--from", "codex", "--db", str(db), "--store", str(store)))
    assert "--db" in line


def test_a_wal_database_is_read_while_its_writer_is_mid_write_and_the_writer_is_not_blocked(cli, db, store):
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA journal_mode=WAL")  # as claude-mem runs it
    conn.close()
    writer = sqlite3.connect(db, isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("INSERT INTO user_prompts (content_session_id, prompt_number, prompt_text, created_at, "
                       f"created_at_epoch) VALUES ('{SESSIONS[0][0]}', 3, 'not committed yet', 'x', 1)")
        result = cli("import", "--from", "claude-mem", "--db", str(db), "--store", str(store))
        writer.execute("COMMIT")
    finally:
        writer.close()
    assert result.code == 0, result.stderr
    text = "".join(logs(store).values())
    assert "> set up the ledger export" in text and "not committed yet" not in text  # one committed snapshot


def test_the_default_database_without_a_project_is_refused_rather_than_every_project_imported(cli, db, store, home):
    (home / ".claude-mem").mkdir()
    (home / ".claude-mem" / "claude-mem.db").write_bytes(db.read_bytes())
    line = refused(cli("import", "--from", "claude-mem", "--store", str(store)))
    assert "claude-mem.db holds the sessions of every project" in line and "project = " in line
    assert not (store / "logs").exists()


def test_a_dream_run_imports_the_database_first_and_proposes_the_remember_request(cli, db, store):
    (store / ".dream").mkdir()
    (store / ".dream" / "config.toml").write_text(f'transcripts = "claude-mem"\ntranscripts_path = "{db}"\n')
    run = cli("run", "--store", str(store), "--engine", "offline", "--force", "--json")
    assert run.code == 0, run.stderr
    diff = cli("diff", "--store", str(store))
    assert "+Invoices are exported as CSV every Monday." in diff.stdout
    assert SECRET not in diff.stdout
    assert "cron" not in diff.stdout  # observations and summaries are evidence, never requests
