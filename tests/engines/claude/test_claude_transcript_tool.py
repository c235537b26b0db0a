"""`search_transcripts` for the Claude engine: narrow, redacted, read-only, only when configured."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest
from anthropic.lib.tools import ToolError
from helpers.fake_anthropic import FakeAnthropic, Reply, fake_api, memory, text, tool_use  # noqa: F401
from helpers.claude_store import Catalog, sessions_frame

from dream.config import Settings
from dream.engines.base import EngineInput
from dream.store.staging import Staging
from dream.engines.claude import ClaudeEngine
from dream.engines.claude.transcript_tools import MAX_HITS, make_transcript_tools
from dream.transcripts.synthetic import ClaudeSession, write_jsonl

START = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
TOKEN = "ghp_" + "Tr4nscr1pt" * 4
FIRST, SECOND = "aaaa1111-0000-4000-8000-000000000001", "bbbb2222-0000-4000-8000-000000000002"
INDEX = "- [Deploy](deploy.md) — how releases go out\n"
DEPLOY = "---\nname: deploy\ndescription: releases\ntype: project\n---\nTag, then push; CI publishes.\n"


@pytest.fixture
def store(tmp_path: Path, monkeypatch) -> Path:
    """``~/.claude/projects/-app/memory`` with two sessions' transcripts beside it."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    folder = tmp_path / "home" / ".claude" / "projects" / "-app"
    memory_dir = folder / "memory"
    memory_dir.mkdir(parents=True)
    (memory_dir / "MEMORY.md").write_text(INDEX)
    (memory_dir / "deploy.md").write_text(DEPLOY)
    one = ClaudeSession(FIRST, START)
    one.user("why did the deploy fail?")
    one.assistant("Checking the logs.", thinking="secret plan: ConnectionResetError is a red herring")
    call = one.tool_use("Bash", {"command": "make deploy"})
    one.tool_result(call, f"push with {TOKEN}\nConnectionResetError: [Errno 104] peer reset on port 8443\n")
    one.assistant("The registry on port 8443 reset the connection.")
    two = ClaudeSession(SECOND, START + timedelta(days=1))
    for i in range(40):
        two.user(f"retry the deploy, attempt {i}")
    write_jsonl(folder / f"{FIRST}.jsonl", one.records)
    write_jsonl(folder / f"{SECOND}.jsonl", two.records)
    return memory_dir


def tool_for(store: Path, **settings: object):
    (tool,) = make_transcript_tools(store, Settings(transcripts="claude-code", **settings))
    assert tool.name == "search_transcripts"
    return tool


def test_no_tool_without_a_configured_source_or_without_its_folder(store: Path, tmp_path: Path) -> None:
    assert make_transcript_tools(store, Settings()) == []
    assert make_transcript_tools(store, Settings(transcripts="codex")) == []  # no ~/.codex here
    assert make_transcript_tools(store, Settings(transcripts="claude-code", transcripts_path=str(tmp_path / "gone"))) == []


def test_finds_an_exact_detail_in_tool_output_redacted(store: Path) -> None:
    out = tool_for(store).call({"pattern": r"ConnectionResetError: \[Errno"})
    assert out.startswith("1 excerpt(s):")
    assert f"{FIRST} 2026-03-02T" in out and "[tool_result]" in out and "peer reset on port 8443" in out
    assert TOKEN not in out and "[REDACTED:github-token]" in out
    assert "red herring" not in out  # thinking is never searched


def test_session_and_date_filters_and_the_hit_cap(store: Path) -> None:
    tool = tool_for(store)
    assert "No transcript records match" in tool.call({"pattern": "deploy", "session_id": "nope"})
    first_only = tool.call({"pattern": "deploy", "session_id": FIRST})
    assert SECOND not in first_only and FIRST in first_only
    next_day = tool.call({"pattern": "deploy", "date": "2026-03-03", "max_hits": 5})
    assert next_day.startswith("5 excerpt(s) (the first 5;") and FIRST not in next_day
    assert next_day.count("\n") == 5
    capped = tool.call({"pattern": "attempt", "max_hits": 1000})
    assert capped.startswith(f"{MAX_HITS} excerpt(s) (the first {MAX_HITS};") and capped.count("\n") == MAX_HITS


@pytest.mark.parametrize("args, message", [
    ({"pattern": "("}, "not a valid regular expression"),
    ({"pattern": ""}, "1 to 200 characters"),
    ({"pattern": "x" * 201}, "1 to 200 characters"),
    ({"pattern": "deploy", "date": "last tuesday"}, "Bad date"),
    ({"pattern": "deploy", "max_hits": "many"}, "Malformed input"),
])
def test_bad_arguments_are_tool_errors(store: Path, args: dict, message: str) -> None:
    with pytest.raises(ToolError, match=message):
        tool_for(store).call(args)


def test_the_agent_searches_transcripts_during_a_dream_and_they_stay_untouched(
        store: Path, tmp_path: Path, fake_api: FakeAnthropic) -> None:
    staging = tmp_path / "staging"
    staging.mkdir()
    (staging / "MEMORY.md").write_text(INDEX)
    (staging / "deploy.md").write_text(DEPLOY)
    transcripts = {p: p.read_bytes() for p in store.parent.glob("*.jsonl")}
    fake_api.play(
        Reply([tool_use("list_sessions"), tool_use("search_transcripts", pattern="Errno 104", date="2026-03-02")]),
        Reply([memory("str_replace", path="/memories/deploy.md", old_str="CI publishes.\n",
                      new_str="CI publishes. The registry listens on port 8443.\n")]),
        Reply([text("- updated deploy.md: the registry port, from session " + FIRST)]),
    )
    inp = EngineInput(store_root=store, staging=Staging(staging), sessions=sessions_frame(),
                      catalog=[Catalog("s1", date(2025, 3, 2), "tests", 60)],
                      settings=Settings(transcripts="claude-code"), today=date(2026, 3, 4))

    result = ClaudeEngine().consolidate(inp)

    first = fake_api.requests[0]
    assert [t["name"] for t in first["tools"]] == ["memory", "list_sessions", "read_session", "search_logs",
                                                   "search_transcripts", "finish"]
    assert "use it only\nfor an exact detail" in first["messages"][0]["content"][0]["text"]
    found = [r for r in fake_api.tool_results() if "excerpt" in str(r["content"])]
    assert len(found) == 1 and not found[0].get("is_error")
    assert "peer reset on port 8443" in str(found[0]["content"]) and TOKEN not in str(fake_api.requests)
    assert fake_api.protocol_errors == []
    assert "port 8443" in (staging / "deploy.md").read_text() and result.changes[0].path == "deploy.md"
    assert {p: p.read_bytes() for p in transcripts} == transcripts
