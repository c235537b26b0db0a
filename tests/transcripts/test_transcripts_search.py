"""Store discovery and narrow, redacted search over raw transcripts."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from dream.errors import BadInput
from dream.transcripts.discover import discover_stores
from dream.transcripts.search import search_transcripts
from dream.transcripts.synthetic import ClaudeSession, CodexSession, write_jsonl

START = datetime(2026, 5, 9, 23, 58, tzinfo=timezone.utc)
TOKEN = "ghp_" + "Q7w" * 12
SID = "0199a1b2-c3d4-4e5f-8a9b-0c1d2e3f4a5b"


def make_store(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text("")
    return folder


def test_discovery_finds_claude_memory_folders_under_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    projects = tmp_path / ".claude" / "projects"
    a = make_store(projects / "-work-a" / "memory")
    b = make_store(projects / "-work-b" / "memory")
    make_store(a / "team")  # inside a store: part of it, not another store
    (projects / "-work-c" / "memory").mkdir(parents=True)  # no MEMORY.md yet
    assert discover_stores() == [a.resolve(), b.resolve()]


def test_discovery_under_given_roots_skips_hidden_and_links(tmp_path):
    top = make_store(tmp_path / "repo")
    deep = make_store(tmp_path / "work" / "x" / "notes")
    make_store(tmp_path / "work" / ".cache" / "s")
    make_store(tmp_path / "work" / "node_modules" / "pkg")
    (tmp_path / "work" / "link").symlink_to(top)
    assert discover_stores([tmp_path / "repo", tmp_path / "work", tmp_path / "missing"]) == [
        top.resolve(), deep.resolve()]
    assert discover_stores([tmp_path / "work"], max_depth=1) == []


@pytest.fixture
def transcripts(tmp_path) -> Path:
    folder = tmp_path / "project"
    one = ClaudeSession("sess-a", START)
    one.user("why does the build fail?")
    tool = one.tool_use("Bash", {"command": "make build"})
    one.tool_result(tool, "gcc: error: unknown flag -fexotic\n" + "noise\n" * 50_000)
    one.assistant(f"It fails on -fexotic; I pushed with {TOKEN}.")
    for i in range(30):  # crosses midnight
        one.user(f"retry {i} -fexotic")
    write_jsonl(folder / "sess-a.jsonl", one.records)
    two = ClaudeSession("sess-b", START)
    two.user("unrelated -fexotic mention")
    write_jsonl(folder / "sess-b.jsonl", two.records)
    codex = CodexSession(SID, START)
    codex.user("grep for -fexotic please")
    write_jsonl(folder / "codex" / f"rollout-2026-05-09T22-00-00-{SID}.jsonl", codex.records)
    return folder


def test_search_finds_tool_output_with_short_excerpt(transcripts):
    hits = search_transcripts([transcripts], "unknown flag", max_hits=5)
    assert len(hits) == 1
    hit = hits[0]
    assert (hit["session"], hit["role"], hit["line"]) == ("sess-a", "tool_result", 3)
    assert hit["excerpt"].startswith("gcc: error: unknown flag -fexotic")
    assert len(hit["excerpt"]) <= 402


def test_search_filters_and_cap(transcripts):
    everything = search_transcripts([transcripts], r"-fexotic", max_hits=200)
    assert {h["session"] for h in everything} == {"sess-a", "sess-b", SID}
    assert len(search_transcripts([transcripts], r"-fexotic", max_hits=3)) == 3
    only_b = search_transcripts([transcripts], r"-fexotic", session="sess-b")
    assert [h["session"] for h in only_b] == ["sess-b"]
    by_codex_id = search_transcripts([transcripts], r"fexotic", session=SID[:8])
    assert [(h["session"], h["role"]) for h in by_codex_id] == [(SID, "user")]  # once, not twice
    next_day = search_transcripts([transcripts], r"retry \d+", date="2026-05-10", max_hits=200)
    assert next_day and all(h["timestamp"].startswith("2026-05-10") for h in next_day)
    assert len(next_day) < 30


def test_search_excerpts_are_redacted(transcripts):
    hits = search_transcripts([transcripts], "pushed with")
    assert len(hits) == 1
    assert TOKEN not in hits[0]["excerpt"] and "[REDACTED:github-token]" in hits[0]["excerpt"]
    direct = search_transcripts([transcripts], "ghp_")
    assert direct and all(TOKEN not in h["excerpt"] for h in direct)


def test_bad_pattern_is_bad_input(transcripts):
    with pytest.raises(BadInput, match="not a valid regular expression"):
        search_transcripts([transcripts], "(unclosed")
    with pytest.raises(BadInput, match="empty"):
        search_transcripts([transcripts], "")
