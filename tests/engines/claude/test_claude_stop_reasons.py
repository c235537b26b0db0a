"""Every way a turn can end, and every fault of the API: the right named outcome, never a partial dream.

A dream is proposed only after a final `end_turn` reply. Each failure below
names its reason, leaves the staging copy as the last whole turn left it (the
pipeline then discards it) and carries the usage spent so far.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.claude_store import engine_input, four_phase_script
from helpers.fake_anthropic import (  # noqa: F401
    FakeAnthropic,
    Reply,
    fake_api,
    memory,
    overloaded,
    rate_limited,
    text,
)

from dream.engines.claude import ClaudeEngine
from dream.errors import EngineFailed
from dream.store.tree import read_tree

DELETE_DEPLOY = memory("delete", path="/memories/deploy.md")


@pytest.mark.parametrize(("stop", "reason"), [
    ("max_tokens", "max_tokens"),
    ("refusal", "refusal"),
    ("model_context_window_exceeded", "context"),
])
def test_a_reply_that_stops_early_fails_named_and_its_tool_calls_never_run(
    tmp_path: Path, fake_api: FakeAnthropic, stop: str, reason: str
) -> None:
    inp = engine_input(tmp_path)
    before = read_tree(inp.staging)
    # the model's first turn is whole; the second is cut off in the middle of a delete
    fake_api.play(Reply([memory("view", path="/memories")]), Reply([text("Deleting"), DELETE_DEPLOY], stop_reason=stop))
    with pytest.raises(EngineFailed) as caught:
        ClaudeEngine().consolidate(inp)
    assert caught.value.reason == reason and stop in str(caught.value)
    assert read_tree(inp.staging) == before  # the cut-off delete did not run
    assert caught.value.usage.turns == 2 and caught.value.usage.output_tokens > 0  # spent, and recorded


def test_a_cut_off_summary_is_not_a_final_reply(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    script = four_phase_script()
    fake_api.play(*script[:-1], Reply([text("- merged pytest-notes.md into")], stop_reason="max_tokens"))
    with pytest.raises(EngineFailed) as caught:
        ClaudeEngine().consolidate(engine_input(tmp_path))
    assert caught.value.reason == "max_tokens" and caught.value.usage.turns == 7


def test_pause_turn_is_sent_back_and_the_run_goes_on(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    script = four_phase_script()
    fake_api.play(script[0], Reply([text("Still thinking about the index")], stop_reason="pause_turn"), *script[1:])
    result = ClaudeEngine().consolidate(engine_input(tmp_path))
    assert result.usage.turns == 8 and "merged" in result.summary
    resumed = fake_api.requests[2]["messages"]
    assert resumed[-1]["role"] == "assistant" and resumed[-1]["content"][0]["text"] == "Still thinking about the index"
    assert fake_api.protocol_errors == []


def test_a_prompt_too_long_for_the_window_fails_as_context_without_retrying(
    tmp_path: Path, fake_api: FakeAnthropic
) -> None:
    fake_api.context_window = 2_500  # the system prompt and tools fit, the conversation soon does not
    script = four_phase_script()
    fake_api.play(*script)
    with pytest.raises(EngineFailed) as caught:
        ClaudeEngine().consolidate(engine_input(tmp_path))
    assert caught.value.reason == "context" and "prompt is too long" in str(caught.value)
    assert len(fake_api.requests) == caught.value.usage.turns + 1  # the 400 is not retried


def test_429_with_retry_after_is_waited_out(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    fake_api.play(rate_limited(retry_after="1"), *four_phase_script())
    result = ClaudeEngine().consolidate(engine_input(tmp_path))
    assert result.usage.turns == 7 and len(fake_api.requests) == 8


def test_529_overloaded_until_the_retries_run_out_fails_as_api(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    inp = engine_input(tmp_path)
    script = four_phase_script()
    fake_api.play(script[0], overloaded(times=99))
    with pytest.raises(EngineFailed) as caught:
        ClaudeEngine().consolidate(inp)
    assert caught.value.reason == "api" and "529" in str(caught.value) and "Overloaded" in str(caught.value)
    assert caught.value.usage.turns == 1
