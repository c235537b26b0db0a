"""API faults and budgets: retried where the SDK retries, else a clean failure naming the cause."""

from __future__ import annotations

from pathlib import Path

import anthropic
import pytest
from helpers.claude_store import engine_input, four_phase_script
from helpers.fake_anthropic import (  # noqa: F401
    Drop,
    FakeAnthropic,
    HttpError,
    Reply,
    fake_api,
    memory,
    text,
    tool_use,
)

from dream.engines.claude import ClaudeEngine
from dream.engines.claude.client import MAX_RETRIES
from dream.errors import BudgetExceeded, ConfigError, EngineFailed
from dream.store.tree import read_tree


def test_429_then_success(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    fake_api.play(HttpError(429, "rate_limit_error", "slow down"), *four_phase_script())
    result = ClaudeEngine().consolidate(engine_input(tmp_path))
    assert result.usage.turns == 7
    assert len(fake_api.requests) == 8  # one refused, seven answered


def test_529_overloaded_is_retried(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    script = four_phase_script()
    fake_api.play(script[0], HttpError(529, "overloaded_error", "Overloaded", times=2), *script[1:])
    result = ClaudeEngine().consolidate(engine_input(tmp_path))
    assert result.usage.turns == 7 and len(fake_api.requests) == 9


def test_500_until_the_retries_run_out_fails_with_the_api_error(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    inp = engine_input(tmp_path)
    before = read_tree(inp.staging.folder())
    script = four_phase_script()
    # two good turns, then a server that keeps failing
    fake_api.play(script[0], script[1], HttpError(500, "api_error", "Internal server error", times=99))
    with pytest.raises(EngineFailed) as caught:
        ClaudeEngine().consolidate(inp)
    assert caught.value.reason == "api"
    assert "500" in str(caught.value) and "Internal server error" in str(caught.value)
    assert len(fake_api.requests) == 2 + MAX_RETRIES + 1
    assert caught.value.usage.turns == 2  # what was spent before the failure
    assert read_tree(inp.staging.folder()) == before  # the two good turns only viewed files


def test_a_connection_dropped_mid_response_is_retried(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    script = four_phase_script()
    fake_api.play(script[0], Drop(), *script[1:])
    inp = engine_input(tmp_path)
    result = ClaudeEngine().consolidate(inp)
    assert result.usage.turns == 7 and len(fake_api.requests) == 8
    assert {c.path for c in result.changes} == {"MEMORY.md", "testing.md", "pytest-notes.md"}


def test_streams_dropped_until_the_resumes_run_out_fail_with_api_and_change_nothing(
    tmp_path: Path, fake_api: FakeAnthropic
) -> None:
    inp = engine_input(tmp_path)
    before = read_tree(inp.staging.folder())
    fake_api.play(Drop(times=99))
    with pytest.raises(EngineFailed) as caught:
        ClaudeEngine().consolidate(inp)
    assert caught.value.reason == "api" and "stream ended before the reply did" in str(caught.value)
    assert fake_api.url in str(caught.value) and len(fake_api.requests) == 1 + MAX_RETRIES
    assert read_tree(inp.staging.folder()) == before


def test_a_bad_request_is_not_retried(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    fake_api.play(HttpError(400, "invalid_request_error", "model: not found", times=99))
    with pytest.raises(EngineFailed, match="400: model: not found"):
        ClaudeEngine().consolidate(engine_input(tmp_path))
    assert len(fake_api.requests) == 1


def test_a_tool_use_naming_an_unknown_tool_gets_an_error_result(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    fake_api.play(Reply([tool_use("delete_everything", confirm=True)]), Reply([text("ok, nothing to do")]))
    result = ClaudeEngine().consolidate(engine_input(tmp_path))
    (res,) = fake_api.tool_results()
    assert res["is_error"] is True and "delete_everything" in str(res["content"])
    assert result.summary == "ok, nothing to do"


def test_no_api_key_is_a_configuration_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    with pytest.raises(ConfigError, match="needs ANTHROPIC_API_KEY"):
        ClaudeEngine().consolidate(engine_input(tmp_path))


# -- budgets ----------------------------------------------------------------------


def endless_viewing(n: int = 30, **kw: object) -> list[Reply]:
    return [Reply([memory("view", path="/memories")], **kw) for _ in range(n)]


def test_max_turns(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    fake_api.play(*endless_viewing())
    with pytest.raises(BudgetExceeded) as caught:
        ClaudeEngine().consolidate(engine_input(tmp_path, max_turns=3))
    assert caught.value.reason == "budget_turns" and "max_turns=3" in str(caught.value)
    assert len(fake_api.requests) == 3


def test_a_run_that_ends_on_its_last_allowed_turn_is_fine(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    fake_api.play(*four_phase_script())
    result = ClaudeEngine().consolidate(engine_input(tmp_path, max_turns=7))
    assert result.usage.turns == 7


def test_max_output_tokens(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    fake_api.play(*endless_viewing(output_tokens=400))
    with pytest.raises(BudgetExceeded) as caught:
        ClaudeEngine().consolidate(engine_input(tmp_path, max_output_tokens=1000))
    assert caught.value.reason == "budget_output_tokens"
    assert caught.value.usage.output_tokens == 1200 and len(fake_api.requests) == 3


def test_max_input_tokens(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    fake_api.play(*endless_viewing())
    with pytest.raises(BudgetExceeded) as caught:
        ClaudeEngine().consolidate(engine_input(tmp_path, max_input_tokens=5000))
    assert caught.value.reason == "budget_input_tokens"
    used = caught.value.usage
    assert used.input_tokens + used.cache_read_tokens + used.cache_creation_tokens > 5000


def test_wall_clock_timeout(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    fake_api.play(*endless_viewing(delay=0.3))
    with pytest.raises(BudgetExceeded) as caught:
        ClaudeEngine().consolidate(engine_input(tmp_path, timeout_seconds=0.5))
    assert caught.value.reason == "budget_timeout" and "timeout_seconds=0.5" in str(caught.value)


def test_a_budget_stops_before_the_tools_of_that_turn_run(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    inp = engine_input(tmp_path, max_turns=1)
    fake_api.play(Reply([memory("delete", path="/memories/deploy.md")]))
    with pytest.raises(BudgetExceeded):
        ClaudeEngine().consolidate(inp)
    assert (inp.staging.folder() / "deploy.md").exists()


# -- the corrective turn -------------------------------------------------------------


def test_correct_continues_the_conversation_with_the_problems(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    inp = engine_input(tmp_path)
    engine = ClaudeEngine()
    fake_api.play(Reply([text("- nothing to change")]), Reply([text("- nothing to change, I checked")]))  # nudged once
    engine.consolidate(inp)
    fake_api.play(
        Reply([memory("str_replace", path="/memories/MEMORY.md", old_str="- [Pytest notes](pytest-notes.md) — more about pytest\n", new_str="")]),
        Reply([text("- pruned MEMORY.md: removed the line over the limit")]),
    )
    result = engine.correct(inp, ["MEMORY.md: line_length: line 2 is 180 characters, the limit is 150"])
    first = fake_api.requests[0]["messages"]
    assert [m["role"] for m in first] == ["user", "assistant", "user", "assistant", "user"]
    assert "line 2 is 180 characters" in first[-1]["content"][0]["text"]
    assert [(c.action, c.path) for c in result.changes] == [("updated", "MEMORY.md")]
    assert result.usage.turns == 2  # only the correction's own turns


def test_correct_on_a_fresh_engine_starts_from_the_store_as_left(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    inp = engine_input(tmp_path)
    fake_api.play(Reply([text("- nothing left to fix")]))
    ClaudeEngine().correct(inp, ["testing.md: frontmatter: type is missing"])
    (message,) = fake_api.requests[0]["messages"]
    prompt = message["content"][0]["text"]
    assert "/memories/testing.md" in prompt and "type is missing" in prompt and "change nothing else" in prompt


def test_a_request_still_hanging_when_the_clock_runs_out_is_the_timeout_budget(
    tmp_path: Path, fake_api: FakeAnthropic
) -> None:
    fake_api.play(Reply([text("too late")], delay=1.0))
    client = anthropic.Anthropic(max_retries=0, timeout=0.3)
    with pytest.raises(BudgetExceeded) as caught:
        ClaudeEngine(client=client).consolidate(engine_input(tmp_path, timeout_seconds=0.2))
    assert caught.value.reason == "budget_timeout"


def test_each_request_gets_a_share_of_the_wall_clock() -> None:
    from dream.engines.claude.client import request_timeout

    assert request_timeout(900) == 180  # five tries fit in the budget
    assert request_timeout(100) == 60  # but a reply gets at least a minute
    assert request_timeout(0.5) == 0.5  # and never more than the budget
    assert request_timeout(86_400) == 600  # nor more than the SDK's ceiling
