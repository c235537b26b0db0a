"""The claude engine end to end against the fake Messages API: a normal four-phase run."""

from __future__ import annotations

from pathlib import Path

from dream.engines.claude import ClaudeEngine
from dream.store.tree import read_tree
from helpers.claude_store import MERGED_TESTING, NEW_INDEX, SUMMARY, engine_input, four_phase_script
from helpers.fake_anthropic import FakeAnthropic, Reply, fake_api, memory, text, tool_use  # noqa: F401


def test_four_phase_run_merges_two_files_and_rewrites_the_index(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    inp = engine_input(tmp_path)
    before = read_tree(inp.staging.folder())
    fake_api.play(*four_phase_script())

    result = ClaudeEngine().consolidate(inp)

    expected = dict(before)
    expected["testing.md"] = MERGED_TESTING.encode()
    expected["MEMORY.md"] = NEW_INDEX.encode()
    del expected["pytest-notes.md"]
    assert read_tree(inp.staging.folder()) == expected
    assert fake_api.protocol_errors == []
    results = fake_api.tool_results()
    assert len(results) == 10 and not any(r.get("is_error") for r in results)
    assert result.summary == SUMMARY
    assert {(c.action, c.path) for c in result.changes} == {
        ("updated", "MEMORY.md"), ("updated", "testing.md"), ("merged", "pytest-notes.md"),
    }
    assert result.usage.turns == 7
    assert result.usage.output_tokens > 0 and result.usage.cost_usd > 0


def test_log_tools_read_the_gathered_sessions(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    inp = engine_input(tmp_path, first_message_session_chars=0)  # digests: a read returns the entries
    fake_api.play(*four_phase_script())
    ClaudeEngine().consolidate(inp)
    by_id = {r["tool_use_id"]: r for r in fake_api.tool_results()}
    calls = [b for m in fake_api.requests[-1]["messages"] if m["role"] == "assistant" for b in m["content"]
             if b.get("type") == "tool_use"]
    out = {c["name"] + str(c["input"].get("session_id", c["input"].get("pattern", ""))): _content(by_id[c["id"]])
           for c in calls if c["name"] != "memory"}
    assert "s1 | 2025-03-02 | tests | 2 |" in out["list_sessions"]
    # every entry carries its session's date: relative dates resolve against it, not against tonight
    assert "#2 2025-03-02 [assistant] pytest -q, and -n auto for speed" in out["read_sessions1"]
    assert out["search_logspytest|xdist"] == (
        "1 matching entries:\ns1 #2 2025-03-02 [assistant] pytest -q, and -n auto for speed")


def test_requests_carry_the_stable_prefix_and_no_shell_or_network_tool(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    fake_api.play(*four_phase_script())
    ClaudeEngine().consolidate(engine_input(tmp_path))
    first = fake_api.requests[0]
    names = [t["name"] for t in first["tools"]]
    assert names == ["memory", "list_sessions", "read_session", "search_logs", "finish"]
    assert first["tools"][0]["type"] == "memory_20250818"
    assert first["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert "Orient" in first["system"][0]["text"] and "team/" in first["system"][0]["text"]
    assert first["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}  # the turn's own entry
    # the system prompt and the tools are the same bytes in every request: the cacheable prefix
    assert all(r["system"] == first["system"] and r["tools"] == first["tools"] for r in fake_api.requests)
    # tonight's part (date, store, sessions) comes after the prefix, in the first user message
    dream_prompt = first["messages"][0]["content"][0]["text"]
    assert "2025-03-03" in dream_prompt and "`s1`" in dream_prompt and "/memories/testing.md" in dream_prompt
    assert "2025-03-03" not in first["system"][0]["text"]


def test_a_second_run_of_the_same_store_reads_the_cache(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    fake_api.play(*four_phase_script())
    first = ClaudeEngine().consolidate(engine_input(tmp_path / "one"))
    first_opening = fake_api.usages[0]
    fake_api.play(*four_phase_script())
    second = ClaudeEngine().consolidate(engine_input(tmp_path / "two"))
    second_opening = fake_api.usages[0]
    # the first request of the first run writes the prefix, the same request of the second run reads it
    assert first_opening["cache_read_input_tokens"] == 0 and first_opening["cache_creation_input_tokens"] > 0
    assert second_opening["cache_read_input_tokens"] >= first_opening["cache_creation_input_tokens"]
    # later turns of a run read the conversation cached by the turn before
    assert all(u["cache_read_input_tokens"] > 0 for u in fake_api.usages)
    assert second.usage.cache_read_tokens > first.usage.cache_read_tokens
    assert second.usage.cost_usd < first.usage.cost_usd


def _content(result: dict) -> str:
    content = result["content"]
    return content if isinstance(content, str) else " ".join(b.get("text", "") for b in content)
