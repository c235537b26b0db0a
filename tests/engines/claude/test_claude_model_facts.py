"""Model facts as data (models.toml), held against the installed SDK and the strict fake server.

Issue 37 found: thinking settings the API rejects (the default `adaptive` is a
400 on models with manual extended thinking only, `disabled` a 400 where
thinking is always on), Haiku 5.5 priced at its lower tier always, `pause_turn`
with no limit, and a local path in a tool result.
"""

from __future__ import annotations

import typing
from dataclasses import replace
from pathlib import Path

import anthropic
import pytest
from helpers.claude_store import engine_input, four_phase_script
from helpers.fake_anthropic import FakeAnthropic, Reply, fake_api, memory, text  # noqa: F401

from dream.config import Settings
from dream.engines.claude import ClaudeEngine
from dream.engines.claude.agent import MAX_PAUSES_IN_A_ROW
from dream.engines.claude.budget import Budget
from dream.engines.claude.models import Thinking, facts_for, families
from dream.engines.claude.pricing import estimate_cost
from dream.errors import BudgetExceeded, EngineFailed
from dream.outcomes import Usage

SDK_MODELS = typing.get_args(typing.get_args(anthropic.types.Model)[0])


def test_every_model_the_sdk_ships_has_its_facts_in_the_table() -> None:
    assert len(SDK_MODELS) > 10, "the SDK ships no model names"
    missing = [m for m in SDK_MODELS if facts_for(m) is None]
    assert missing == [], f"add these to dream/engines/claude/models.toml: {missing}"
    for model in SDK_MODELS:
        facts = facts_for(model)
        assert facts is not None and facts.max_output <= facts.context_window
        assert isinstance(facts.thinking, Thinking)
    # the table names each model once, and each family holds a name the SDK ships or an older one it still prices
    names = [n for f in families() for n in f.models]
    assert len(names) == len(set(names))


def test_the_docs_thinking_rules_are_the_tables() -> None:
    """The thinking troubleshooting page: which model takes which thinking (tested apart from the fake's copy)."""
    always = ["claude-opus-5-5", "claude-fable-5-1", "claude-fable-5", "claude-mythos-5", "claude-mythos-preview"]
    assert {facts_for(m).thinking for m in always} == {Thinking.ALWAYS}  # type: ignore[union-attr]
    assert facts_for("claude-sonnet-5-5").thinking is Thinking.BETWEEN_TOOLS  # type: ignore[union-attr]
    manual = ["claude-haiku-4-5-20251001", "claude-opus-4-5-20251101", "claude-sonnet-4-5", "claude-opus-4-1"]
    assert {facts_for(m).thinking for m in manual} == {Thinking.MANUAL}  # type: ignore[union-attr]


@pytest.mark.parametrize("model, thinking, sent", [
    ("claude-haiku-4-5", "adaptive", "enabled"),  # manual extended thinking only: `adaptive` would be a 400
    ("claude-opus-4-1", "adaptive", "enabled"),
    ("claude-opus-5-5", "disabled", None),  # always thinks: `disabled` would be a 400, so no field
    ("claude-fable-5-1", "disabled", None),
    ("claude-sonnet-5-5", "disabled", "between_tools"),  # takes between_tools instead of disabled
    ("claude-opus-4-7", "adaptive", "adaptive"),
    ("claude-3-5-haiku", "adaptive", None),  # no thinking at all; and an output limit of 8,192
])
def test_each_model_gets_a_thinking_configuration_it_takes(
    tmp_path: Path, fake_api: FakeAnthropic, model: str, thinking: str, sent: str | None
) -> None:
    fake_api.play(*four_phase_script())
    inp = engine_input(tmp_path, model=model, thinking=thinking)
    result = ClaudeEngine().consolidate(inp)
    assert "merged" in result.summary and fake_api.protocol_errors == []
    assert {(r.get("thinking") or {}).get("type") for r in fake_api.requests} == {sent}
    facts = facts_for(model)
    assert facts is not None and all(r["max_tokens"] <= facts.max_output for r in fake_api.requests)
    if sent == "enabled":
        assert all(1024 <= r["thinking"]["budget_tokens"] < r["max_tokens"] for r in fake_api.requests)


def test_haiku_5_5_pays_five_times_for_every_token_of_a_request_over_100k_prompt_tokens() -> None:
    small = Usage(input_tokens=50_000, cache_read_tokens=40_000, output_tokens=2_000)
    large = Usage(input_tokens=50_000, cache_read_tokens=60_000, output_tokens=2_000)  # a prompt of 110K
    list_price = (50_000 * 0.10 + 60_000 * 0.01 + 2_000 * 0.50) / 1e6
    assert estimate_cost("claude-haiku-5-5", large) == pytest.approx(5 * list_price)
    assert estimate_cost("claude-haiku-5-5", small) == pytest.approx((50_000 * 0.10 + 40_000 * 0.01 + 2_000 * 0.50) / 1e6)
    assert estimate_cost("claude-sonnet-5-5", large) == pytest.approx((50_000 * 2 + 60_000 * 0.10 + 2_000 * 10) / 1e6)
    # a run is priced request by request: one long request pays its tier, the short ones do not
    budget = Budget(Settings(model="claude-haiku-5-5"))
    for usage in (small, large, small):
        budget.record(anthropic.types.Usage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
                                            cache_read_input_tokens=usage.cache_read_tokens))
    expected = 2 * estimate_cost("claude-haiku-5-5", small) + 5 * list_price
    assert budget.usage.cost_usd == pytest.approx(expected) and budget.usage.turns == 3


def test_a_model_that_pauses_every_time_stops_at_max_turns(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    paused = Reply([text("Still working on it")], stop_reason="pause_turn")
    fake_api.play(*[paused] * 40)
    with pytest.raises(BudgetExceeded) as caught:
        ClaudeEngine().consolidate(engine_input(tmp_path, max_turns=5))
    assert caught.value.budget == "turns" and len(fake_api.requests) == 5


def test_without_max_turns_a_turn_paused_over_and_over_ends_the_run(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    paused = Reply([text("Still working on it")], stop_reason="pause_turn")
    fake_api.play(*[paused] * 40)
    with pytest.raises(EngineFailed) as caught:
        ClaudeEngine().consolidate(engine_input(tmp_path))
    assert caught.value.reason == "paused" and len(fake_api.requests) == MAX_PAUSES_IN_A_ROW + 1


def test_no_local_path_reaches_a_tool_result(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    fake_api.play(Reply([memory("create", path="/memories/deploy.md/inside.md", file_text="x\n"),
                         memory("view", path="/memories/testing.md/")]),
                  Reply([text("Nothing to change.")]))
    inp = engine_input(tmp_path)
    ClaudeEngine().consolidate(replace(inp))
    results = fake_api.tool_results()
    assert results[0]["is_error"] is True and "The file system refused" in str(results[0]["content"])
    for result in results:
        assert str(tmp_path) not in str(result["content"]) and str(tmp_path.resolve()) not in str(result["content"])
