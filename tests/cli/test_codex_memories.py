"""A Codex memory folder (``~/.codex/memories``) dreamed through the CLI: run, diff, accept, history, rollback.

The fixture (`codex_memories/`) is the folder as Codex's phase 1 and phase 2
write it (openai/codex, codex-rs/memories: templates/memories/consolidation.md
and stage_one_system.md): ``memory_summary.md``, the ``MEMORY.md`` handbook,
a skill, two rollout summaries and ``raw_memories.md``. The lease is the row
Codex's phase 2 claims in its state database (codex-rs/state, ``jobs``).
"""

from __future__ import annotations

import shutil
import sqlite3
import time
from contextlib import closing
from pathlib import Path

import pytest

from helpers.stores import snapshot_bytes

FIXTURE = Path(__file__).with_name("codex_memories")
EVIDENCE = ("rollout_summaries/", "raw_memories.md")
# codex-rs/state/migrations: the columns of `jobs` that the phase 2 claim reads and writes
JOBS = """CREATE TABLE jobs (kind TEXT NOT NULL, job_key TEXT NOT NULL, status TEXT NOT NULL, worker_id TEXT,
          ownership_token TEXT, started_at INTEGER, finished_at INTEGER, lease_until INTEGER, retry_at INTEGER,
          retry_remaining INTEGER NOT NULL, last_error TEXT, input_watermark INTEGER,
          last_success_watermark INTEGER, PRIMARY KEY (kind, job_key))"""


@pytest.fixture
def codex_store(home) -> Path:
    store = home / ".codex" / "memories"
    shutil.copytree(FIXTURE, store)
    return store


def _evidence(files: dict[str, bytes]) -> dict[str, bytes]:
    return {rel: data for rel, data in files.items() if rel.startswith(EVIDENCE)}


def _lease(codex_home: Path, until: float, status: str = "running") -> None:
    with closing(sqlite3.connect(codex_home / "state_5.sqlite")) as db, db:
        db.execute(JOBS)
        db.execute("INSERT INTO jobs VALUES ('memory_consolidate_global', 'global', ?, 'thread-1', 'token', ?, NULL, "
                   "?, NULL, 3, NULL, 0, 0)", (status, int(time.time()) - 60, int(until)))


def test_run_diff_accept_history_rollback(codex_store, cli):
    original = snapshot_bytes(codex_store)

    run = cli("run", "--store", str(codex_store), "--engine", "offline", "--force", "--json")
    assert run.code == 0, run.stderr
    assert run.json["status"] == "proposed" and run.json["sessions_read"] == 2
    assert snapshot_bytes(codex_store) == original, "a run must not touch the folder"

    patch = cli("diff", "--store", str(codex_store), "--json").json["diff"]
    touched = {line[6:] for line in patch.splitlines() if line.startswith("+++ b/")}
    assert touched == {"MEMORY.md"}, "only memories change: never the summary's budget by itself, never evidence"
    removed = [line for line in patch.splitlines() if line.startswith("-") and not line.startswith("---")]
    assert removed == ['-- when running tests, the user asked: "always use uv run pytest, never bare pytest" [Task 1]']
    # the remember request quoted in the rollout summary is filed in the handbook, its date made absolute
    added = [line for line in patch.splitlines() if line.startswith("+- ")]
    assert len(added) == 1 and "Fridays from 2026-11-21" in added[0] and "tomorrow" not in added[0]

    acc = cli("accept", "--store", str(codex_store), "--json")
    assert acc.code == 0, acc.stderr
    assert acc.json["version"] == 2
    accepted = snapshot_bytes(codex_store)
    assert accepted["MEMORY.md"].count(b"never bare pytest") == 1
    assert b"Fridays from 2026-11-21" in accepted["MEMORY.md"]
    assert _evidence(accepted) == _evidence(original), "evidence is read only"
    assert not any(rel.endswith(".md") and rel not in original for rel in accepted), "no topic file in a Codex folder"

    hist = cli("history", "--store", str(codex_store), "--json").json
    assert [r["status"] for r in hist["runs"]] == ["proposed"]
    assert [e["action"] for e in hist["events"]] == ["accept"]

    back = cli("rollback", "1", "--store", str(codex_store), "--json")
    assert back.code == 0, back.stderr
    assert snapshot_bytes(codex_store) == original, "rollback is byte-exact"


def test_held_codex_lease_skips_the_run(codex_store, home, cli):
    _lease(home / ".codex", until=time.time() + 3600)
    original = snapshot_bytes(codex_store)

    run = cli("run", "--store", str(codex_store), "--engine", "offline", "--force", "--json")
    assert run.code == 0, run.stderr
    assert run.json["status"] == "skipped" and run.json["reason"] == "lock"
    assert "Codex's memory consolidation holds its lease" in run.json["error"]
    assert snapshot_bytes(codex_store) == original
    assert cli("proposals", "--store", str(codex_store), "--json").json["proposals"] == []


def test_expired_or_finished_lease_lets_the_run_go(codex_store, home, cli):
    _lease(home / ".codex", until=time.time() - 10)  # Codex died mid-run: its lease ran out

    run = cli("run", "--store", str(codex_store), "--engine", "offline", "--force", "--json")
    assert run.json["status"] == "proposed", run.stdout


def test_what_codex_writes_before_the_accept_is_merged(codex_store, cli):
    assert cli("run", "--store", str(codex_store), "--engine", "offline", "--force", "--json").json["status"] == \
        "proposed"
    handbook = codex_store / "MEMORY.md"
    codex_block = "\n# Task Group: shop search\n\nscope: the search index\napplies_to: cwd=/home/ana/src/shop\n"
    handbook.write_text(handbook.read_text() + codex_block)  # Codex's phase 2 ran meanwhile

    acc = cli("accept", "--store", str(codex_store), "--json")
    assert acc.code == 0, acc.stderr
    text = handbook.read_text()
    assert "# Task Group: shop search" in text, "Codex's new block is kept"
    assert text.count("never bare pytest") == 1, "the proposal's merge of the duplicate is applied"


def test_run_all_finds_the_codex_folder(codex_store, cli):
    status = cli("status", "--all", "--json")
    assert status.code == 0, status.stderr
    assert str(codex_store.resolve()) in status.stdout


def test_accept_waits_while_codex_consolidates(codex_store, home, cli):
    assert cli("run", "--store", str(codex_store), "--engine", "offline", "--force", "--json").json["status"] == \
        "proposed"
    _lease(home / ".codex", until=time.time() + 3600)  # Codex's phase 2 started after the run
    before = snapshot_bytes(codex_store)

    acc = cli("accept", "--store", str(codex_store))
    assert acc.code != 0 and "Traceback" not in acc.stderr
    assert "Codex's memory consolidation holds its lease" in acc.stderr and "nothing written" in acc.stderr
    assert snapshot_bytes(codex_store) == before
