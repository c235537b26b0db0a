"""Context economy against the fake API: fresh segments instead of edits, breakpoints, the cached prefix.

The fake imitates the server side: prompt caching with its minimum length,
TTL, 20-block lookback and four-breakpoint limit, and thinking blocks bound to
their prefix.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from pathlib import Path

import polars as pl
import pytest
from helpers.claude_store import engine_input, four_phase_script
from helpers.fake_anthropic import Drop, FakeAnthropic, Reply, fake_api, text, tool_use, unmarked  # noqa: F401

from dream.engines.base import EngineInput
from dream.engines.claude import ClaudeEngine
from dream.engines.claude.context import GROWTH

SESSIONS = 24
SEGMENT = "[A new conversation segment"


def big_input(tmp_path: Path) -> EngineInput:
    """The small store, with 24 sessions of about 11,000 characters (one capped result each)."""
    rows = [(f"b{s:02d}", date(2026, 10, 1 + s), seq, "user" if seq % 2 else "assistant", f"entry {seq} " + "z" * 1800)
            for s in range(SESSIONS) for seq in range(1, 7)]
    frame = pl.DataFrame(rows, schema=["session", "date", "seq", "role", "text"], orient="row")
    return replace(engine_input(tmp_path, first_message_session_chars=0), sessions=frame)  # digests: read in full


def reading_script(thinking: int = 1500) -> list[Reply]:
    """Read three sessions a turn, thinking each turn, then stop."""
    turns = [Reply([tool_use("read_session", session_id=f"b{n:02d}") for n in range(s, s + 3)], thinking=thinking)
             for s in range(0, SESSIONS, 3)]
    return [*turns, Reply([text("- nothing to change")], thinking=thinking)]


def segment_starts(fake: FakeAnthropic) -> list[int]:
    return [i for i, r in enumerate(fake.requests) if len(r["messages"]) == 1 and i
            and SEGMENT in r["messages"][0]["content"][1]["text"]]


def test_a_long_run_goes_on_in_fresh_segments_and_the_context_stays_bounded(
    tmp_path: Path, fake_api: FakeAnthropic
) -> None:
    fake_api.play(*reading_script())
    result = ClaudeEngine().consolidate(big_input(tmp_path))
    assert fake_api.protocol_errors == [] and result.summary == "- nothing to change"
    starts = segment_starts(fake_api)
    assert starts, "the run never started a new segment"
    opening = fake_api.requests[starts[0]]["messages"][0]["content"]
    assert opening[0]["text"] == fake_api.requests[0]["messages"][0]["content"][0]["text"]  # the same first message
    assert "read_session session_id=b00" in opening[1]["text"]  # the digest names what was done
    assert any(b["text"].startswith("Result of read_session") for b in opening[2:])  # the unseen results, in full
    sizes = [u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"] + u["output_tokens"]
             for u in fake_api.usages]
    assert max(sizes) <= sizes[0] + GROWTH + 15_000  # the opening, the growth allowed and one turn of results


def test_the_results_just_returned_count_toward_the_next_segment(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    """Ten pages of 30,000 characters a turn: the trigger must count them before they are sent, not after."""
    rows = [(f"w{s:02d}", date(2026, 10, 1 + s), seq, "assistant", "w" * 1900) for s in range(20) for seq in range(16)]
    frame = pl.DataFrame(rows, schema=["session", "date", "seq", "role", "text"], orient="row")
    inp = replace(engine_input(tmp_path, first_message_session_chars=0), sessions=frame)
    turns = [Reply([tool_use("read_session", session_id=f"w{n:02d}") for n in range(s, s + 10)], thinking=1500)
             for s in (0, 10)]
    fake_api.play(*turns, Reply([text("- nothing to change")], thinking=1500))
    ClaudeEngine().consolidate(inp)
    assert fake_api.protocol_errors == []
    starts = {0, *segment_starts(fake_api)}
    sizes = [u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"]
             for u in fake_api.usages]
    opening = 0
    for i, size in enumerate(sizes):
        opening = size if i in starts else opening
        assert i in starts or size <= opening + GROWTH, f"request {i} grew {size - opening} past its segment's opening"
    assert len(starts) == 3  # each turn's 75K tokens of results open the next segment


def test_nothing_sent_is_ever_edited_within_a_segment(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    fake_api.play(*reading_script())
    ClaudeEngine().consolidate(big_input(tmp_path))
    starts = set(segment_starts(fake_api))
    for i in range(1, len(fake_api.requests)):
        if i in starts:
            continue
        before, after = (unmarked(fake_api.requests[j]["messages"]) for j in (i - 1, i))
        assert after[: len(before)] == before, f"request {i} changed what request {i - 1} sent"


def test_off_keeps_one_conversation(tmp_path: Path, fake_api: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DREAM_CONTEXT_EDITING", "off")
    fake_api.play(*reading_script())
    ClaudeEngine().consolidate(big_input(tmp_path))
    assert segment_starts(fake_api) == [] and len(fake_api.requests[-1]["messages"]) == 2 * (SESSIONS // 3) + 1


def test_the_cache_skips_a_prefix_under_the_minimum_length(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    fake_api.min_cacheable = 10_000_000
    fake_api.play(*four_phase_script())
    result = ClaudeEngine().consolidate(engine_input(tmp_path))
    assert result.usage.cache_read_tokens == 0 and result.usage.cache_creation_tokens == 0
    assert result.usage.input_tokens > 0


def test_the_cache_expires_after_its_ttl(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    now = [1_000.0]
    fake_api.clock = lambda: now[0]
    fake_api.play(*four_phase_script())
    ClaudeEngine().consolidate(engine_input(tmp_path / "one"))
    now[0] += 299  # within five minutes of the last use: the same opening is read from the cache
    fake_api.play(*four_phase_script())
    ClaudeEngine().consolidate(engine_input(tmp_path / "two"))
    assert fake_api.usages[0]["cache_read_input_tokens"] > 0
    now[0] += 301  # past the TTL: written again, nothing read
    fake_api.play(*four_phase_script())
    ClaudeEngine().consolidate(engine_input(tmp_path / "three"))
    assert fake_api.usages[0]["cache_read_input_tokens"] == 0 and fake_api.usages[0]["cache_creation_input_tokens"] > 0


def test_the_stable_prefix_is_system_tools_and_tonight_s_digest(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    fake_api.play(*four_phase_script())
    ClaudeEngine().consolidate(engine_input(tmp_path))
    first = fake_api.requests[0]
    assert first["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert first["messages"][0]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    # every later turn reads at least system, tools and the digest from the cache
    opening = fake_api.usages[0]["cache_creation_input_tokens"]
    assert all(u["cache_read_input_tokens"] >= opening for u in fake_api.usages[1:])


def test_a_resume_after_a_cut_stream_sends_the_same_request_again(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    script = reading_script()
    fake_api.play(*script[:-2], Drop(), *script[-2:])
    ClaudeEngine().consolidate(big_input(tmp_path))
    again = [i for i in range(1, len(fake_api.requests))
             if unmarked(fake_api.requests[i]["messages"]) == unmarked(fake_api.requests[i - 1]["messages"])]
    assert len(again) == 1 and fake_api.protocol_errors == []  # the dropped request, sent once more as it was
