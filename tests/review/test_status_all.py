"""`dream status --all`: every store under ~/.claude/projects (and --root folders), one row each."""

from __future__ import annotations

import shutil
from datetime import datetime, timezone
from pathlib import Path

from helpers.stores import DEMO

from dream.pipeline.status import fleet_status, transcripts_waiting
from dream.transcripts.synthetic import ClaudeSession, write_jsonl

START = datetime(2026, 5, 4, 10, 0, tzinfo=timezone.utc)


def projects(home: Path) -> Path:
    return home / ".claude" / "projects"


def demo_project(home: Path) -> Path:
    """The demo store (nine session logs, never dreamed) as a project's memory."""
    store = projects(home) / "-work-demo" / "memory"
    shutil.copytree(DEMO, store, ignore=shutil.ignore_patterns(".dream"))
    return store


def transcript_project(home: Path, sessions: int) -> Path:
    """A project whose store imports Claude Code transcripts, none imported yet."""
    folder = projects(home) / "-work-api"
    store = folder / "memory"
    (store / ".dream").mkdir(parents=True)
    (store / "MEMORY.md").write_text("- [Stack](stack.md) — go, postgres\n")
    (store / ".dream" / "config.toml").write_text('transcripts = "claude-code"\nmin_sessions = 2\n')
    for i in range(sessions):
        session = ClaudeSession(f"9f0e{i:04d}-0000-4000-8000-000000000000", START)
        session.user(f"add endpoint number {i}")
        session.assistant("Added.")
        write_jsonl(folder / f"{session.session_id}.jsonl", session.records)
    return store


def broken_project(home: Path) -> Path:
    store = projects(home) / "-work-broken" / "memory"
    (store / ".dream").mkdir(parents=True)
    (store / "MEMORY.md").write_text("- [A](a.md) — a\n")
    (store / ".dream" / "config.toml").write_text("min_sessions = 'many'\n")
    return store


def by_store(rows: list[dict]) -> dict[str, dict]:
    return {row["store"]: row for row in rows}


def test_lists_every_store_with_gate_sessions_last_dream_and_pending(home: Path) -> None:
    demo, api, broken = demo_project(home), transcript_project(home, 3), broken_project(home)
    (projects(home) / "-work-no-memory").mkdir()  # a project without a memory folder is no store
    write_jsonl(projects(home) / "-work-no-memory" / "s.jsonl", ClaudeSession("s", START).records)

    rows = by_store(fleet_status())

    assert sorted(rows) == sorted(str(p.resolve()) for p in (demo, api, broken))
    d = rows[str(demo.resolve())]
    assert d["gate"]["open"] and d["gate"]["sessions_waiting"] == 9
    assert d["last_consolidated_at"] is None and d["pending"] == []
    # a Claude Code memory folder reads the transcripts beside it with no config (none here)
    assert d["transcripts"] == {"source": "claude-code", "path": str(demo.parent), "changed": 0, "error": None}
    a = rows[str(api.resolve())]  # nothing imported yet: no logs, but the run imports 3 transcripts first
    assert a["gate"]["open"] and a["gate"]["transcripts_to_import"] == 3 and a["gate"]["sessions_waiting"] == 0
    assert a["transcripts"] == {"source": "claude-code", "path": str(api.parent), "changed": 3, "error": None}
    b = rows[str(broken.resolve())]
    assert set(b) == {"store", "error"} and "min_sessions" in b["error"] and "config.toml" in b["error"]


def test_extra_roots_are_searched_too(home: Path, tmp_path: Path) -> None:
    demo = demo_project(home)
    elsewhere = tmp_path / "work" / "team-notes"
    elsewhere.mkdir(parents=True)
    (elsewhere / "MEMORY.md").write_text("- [Oncall](oncall.md) — rota\n")

    assert [r["store"] for r in fleet_status()] == [str(demo.resolve())]
    rows = by_store(fleet_status([tmp_path / "work"]))
    assert sorted(rows) == sorted([str(demo.resolve()), str(elsewhere.resolve())])


def test_no_claude_folder_means_no_stores(home: Path) -> None:
    assert fleet_status() == []


def test_transcripts_waiting_drops_to_zero_after_an_import_and_counts_a_grown_session(home: Path, cli) -> None:
    store = transcript_project(home, 2)
    assert transcripts_waiting(store)["changed"] == 2

    assert cli("import", "--store", str(store), "--from", "claude-code", "--json").code == 0
    assert transcripts_waiting(store)["changed"] == 0

    grown = next(store.parent.glob("*.jsonl"))
    more = ClaudeSession("grown", START)
    more.user("one more thing")
    write_jsonl(grown, more.records, append=True)
    assert transcripts_waiting(store)["changed"] == 1


def test_a_missing_transcript_folder_is_reported_on_the_row(home: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    (store / ".dream").mkdir(parents=True)
    (store / "MEMORY.md").write_text("- [A](a.md) — a\n")
    (store / ".dream" / "config.toml").write_text('transcripts = "codex"\n')  # ~/.codex does not exist

    (row,) = fleet_status([tmp_path])

    assert row["gate"]["sessions_waiting"] == 0
    assert row["transcripts"]["changed"] is None and "does not exist" in row["transcripts"]["error"]


def test_status_all_through_the_cli(home: Path, tmp_path: Path, cli) -> None:
    demo, api = demo_project(home), transcript_project(home, 3)
    env = {"HOME": str(home), "COLUMNS": "250"}
    ran = cli("run", "--store", str(demo), "--json", env=env).json
    assert ran["status"] == "proposed"

    listing = cli("status", "--all", "--json", env=env)

    assert listing.code == 0, listing.stderr
    rows = by_store(listing.json["stores"])
    assert sorted(rows) == sorted([str(demo.resolve()), str(api.resolve())])
    d = rows[str(demo.resolve())]  # dreamed: pending proposal, last dream set, its sessions wait for a person
    assert d["pending"] == [ran["proposal_id"]] and d["last_consolidated_at"] is not None
    assert d["gate"]["sessions_waiting"] == ran["sessions_read"] and d["gate"]["sessions_new"] == 0
    assert d["gate"]["reason"] == "hours"

    people = cli("status", "--all", env=env)
    assert people.code == 0 and "2 store(s)" in people.stdout
    assert ran["proposal_id"] in people.stdout and "+3 to import" in people.stdout

    # --root implies --all; --store is neither needed nor read
    other = tmp_path / "elsewhere" / "notes"
    other.mkdir(parents=True)
    (other / "MEMORY.md").write_text("- [A](a.md) — a\n")
    with_root = cli("status", "--root", str(tmp_path / "elsewhere"), "--store", "/no/such/store", "--json", env=env)
    assert with_root.code == 0, with_root.stderr
    assert str(other.resolve()) in by_store(with_root.json["stores"])

    empty = cli("status", "--all", env={"HOME": str(tmp_path / "empty-home")})
    assert empty.code == 0 and "no memory stores found" in empty.stdout
