"""Context economy against the fake API: used results leave, the stable prefix is cached, betas degrade.

The fake imitates the server side of it all: prompt caching with its
minimum length, TTL and lookback, and ``clear_tool_uses_20250919`` behind its
beta header, or a gateway that refuses the field.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import date
from pathlib import Path

import polars as pl
import pytest
from helpers.claude_store import engine_input, four_phase_script
from helpers.fake_anthropic import CONTEXT_BETA, Drop, FakeAnthropic, Reply, fake_api, text, tool_use  # noqa: F401

from dream.engines.base import EngineInput
from dream.engines.claude import ClaudeEngine
from dream.engines.claude.context import CLIENT, PLACEHOLDER, Policy, clear_client_side

SESSIONS = 24


def big_input(tmp_path: Path) -> EngineInput:
    """The small store, with 24 sessions of about 11,000 characters (one capped result each)."""
    rows = [(f"b{s:02d}", date(2026, 10, 1 + s), seq, "user" if seq % 2 else "assistant", f"entry {seq} " + "z" * 1800)
            for s in range(SESSIONS) for seq in range(1, 7)]
    frame = pl.DataFrame(rows, schema=["session", "date", "seq", "role", "text"], orient="row")
    return replace(engine_input(tmp_path), sessions=frame)


def reading_script() -> list[Reply]:
    """Read three sessions a turn, then stop."""
    turns = [Reply([tool_use("read_session", session_id=f"b{n:02d}") for n in range(s, s + 3)])
             for s in range(0, SESSIONS, 3)]
    return [*turns, Reply([text("- nothing to change")])]


def cleared_results(request: dict) -> int:
    return sum(1 for m in request["messages"] if m["role"] == "user" and isinstance(m["content"], list)
               for b in m["content"] if b.get("type") == "tool_result" and b.get("content") == PLACEHOLDER)


def test_used_results_are_cleared_client_side_and_the_context_stays_bounded(
    tmp_path: Path, fake_api: FakeAnthropic
) -> None:
    fake_api.play(*reading_script())
    ClaudeEngine().consolidate(big_input(tmp_path))
    assert fake_api.protocol_errors == []
    assert cleared_results(fake_api.requests[-1]) >= 6  # the older sessions' results gave way
    assert "context_management" not in fake_api.requests[-1]  # the client side needs no beta
    sizes = [len(json.dumps(r["messages"])) // 4 for r in fake_api.requests]
    assert max(sizes) <= CLIENT.trigger + 12_000  # never more than the trigger and one turn of results


def test_each_clearing_reads_the_cleared_history_from_the_cache(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    reads = reading_script()[:-1]
    fake_api.play(*reads, *reads, *reads, Reply([text("- nothing to change")]))  # every session three times
    ClaudeEngine().consolidate(big_input(tmp_path))
    assert fake_api.protocol_errors == []  # never more than the API's four breakpoints
    first_message = fake_api.usages[1]["cache_read_input_tokens"]  # what every request reads at least
    clearings = [n for n in range(1, len(fake_api.requests))
                 if cleared_results(fake_api.requests[n]) > cleared_results(fake_api.requests[n - 1])]
    assert len(clearings) >= 2
    # the first clearing falls back to the first message; each later one reads up to the one before it
    assert [fake_api.usages[n]["cache_read_input_tokens"] > first_message for n in clearings[1:]] == \
        [True] * len(clearings[1:])


def test_without_clearing_the_same_run_grows_without_bound(
    tmp_path: Path, fake_api: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DREAM_CONTEXT_EDITING", "off")
    fake_api.play(*reading_script())
    ClaudeEngine().consolidate(big_input(tmp_path))
    assert cleared_results(fake_api.requests[-1]) == 0
    assert len(json.dumps(fake_api.requests[-1]["messages"])) // 4 > CLIENT.trigger + 12_000


def test_server_side_context_editing_sends_the_edit_and_its_beta(
    tmp_path: Path, fake_api: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DREAM_CONTEXT_EDITING", "server")
    fake_api.play(*reading_script())
    ClaudeEngine().consolidate(big_input(tmp_path))
    assert fake_api.protocol_errors == []
    first = fake_api.requests[0]
    (edit,) = first["context_management"]["edits"]
    assert edit["type"] == "clear_tool_uses_20250919" and edit["trigger"]["value"] == CLIENT.trigger
    assert CONTEXT_BETA in fake_api.headers[0]["anthropic-beta"]
    assert any(fake_api.applied_edits)  # the server cleared something
    assert cleared_results(fake_api.requests[-1]) == 0  # and the client kept its whole history


def test_a_gateway_without_the_beta_degrades_to_client_side_clearing(
    tmp_path: Path, fake_api: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DREAM_CONTEXT_EDITING", "server")
    fake_api.context_management = "rejected"
    fake_api.play(*reading_script())
    result = ClaudeEngine().consolidate(big_input(tmp_path))
    assert result.summary == "- nothing to change"
    assert len(fake_api.protocol_errors) == 1 and "context_management" in fake_api.protocol_errors[0]
    assert all("context_management" not in r for r in fake_api.requests[1:])
    assert cleared_results(fake_api.requests[-1]) >= 6


def test_clearing_needs_at_least_its_minimum_and_keeps_its_placeholder_bytes() -> None:
    def result(i: int, size: int) -> dict:
        return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "r" * size}]}

    policy = Policy(trigger=1_000, keep=1, at_least=2_000)
    small = [result(i, 1_500) for i in range(4)]  # 1,500 tokens over the trigger, but only 1,125 could go
    assert clear_client_side(small, policy) is small
    big = [result(i, 4_000) for i in range(4)]
    once = clear_client_side(big, policy)
    assert [m["content"][0]["content"] == PLACEHOLDER for m in once] == [True, True, True, False]
    assert big[0]["content"][0]["content"] == "r" * 4_000  # the history given is not changed in place
    assert clear_client_side(once, policy)[:3] == once[:3]  # cleared stays cleared, byte for byte


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


def test_a_resume_after_a_cut_stream_sends_the_cleared_history(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    script = reading_script()
    fake_api.play(*script[:-2], Drop(), *script[-2:])
    ClaudeEngine().consolidate(big_input(tmp_path))
    dropped = next(i for i, r in enumerate(fake_api.requests) if i and r["messages"] == fake_api.requests[i - 1]["messages"])
    assert cleared_results(fake_api.requests[dropped]) >= 6  # resumed from the cleared transcript, not the full one
    assert fake_api.protocol_errors == []
