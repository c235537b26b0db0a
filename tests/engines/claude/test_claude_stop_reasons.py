"""Every way a turn can end, and every fault of the API: the right named outcome, never a partial dream.

A dream is proposed only after a final `end_turn` reply. Each failure below
names its reason, leaves the staging copy as the last whole turn left it (the
pipeline then discards it) and carries the usage spent so far.
"""

from __future__ import annotations

from pathlib import Path

import anthropic
import pytest
from helpers.claude_store import engine_input, four_phase_script
from helpers.fake_anthropic import (  # noqa: F401
    FakeAnthropic,
    Reply,
    StreamError,
    fake_api,
    memory,
    overloaded,
    rate_limited,
    text,
)

from dream.engines.claude import ClaudeEngine
from dream.errors import BudgetExceeded, EngineFailed
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
    before = read_tree(inp.staging.folder())
    # the model's first turn is whole; the second is cut off in the middle of a delete (max_tokens: and its retry)
    cut = Reply([text("Deleting"), DELETE_DEPLOY], stop_reason=stop)
    fake_api.play(Reply([memory("view", path="/memories")]), *[cut] * (2 if stop == "max_tokens" else 1))
    with pytest.raises(EngineFailed) as caught:
        ClaudeEngine().consolidate(inp)
    assert caught.value.reason == reason and stop in str(caught.value)
    assert read_tree(inp.staging.folder()) == before  # the cut-off delete did not run
    assert caught.value.usage.turns == (3 if stop == "max_tokens" else 2)  # spent, and recorded
    assert caught.value.usage.output_tokens > 0


def test_a_cut_off_summary_is_not_a_final_reply(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    script = four_phase_script()
    fake_api.play(*script[:-1], *[Reply([text("- merged pytest-notes.md into")], stop_reason="max_tokens")] * 2)
    with pytest.raises(EngineFailed) as caught:
        ClaudeEngine().consolidate(engine_input(tmp_path))
    assert caught.value.reason == "max_tokens" and caught.value.usage.turns == 8


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


def test_a_correction_after_a_cut_off_conversation_starts_afresh(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    inp = engine_input(tmp_path)
    engine = ClaudeEngine()
    fake_api.play(*[Reply([text("Deleting"), DELETE_DEPLOY], stop_reason="max_tokens")] * 2)
    with pytest.raises(EngineFailed):
        engine.consolidate(inp)
    fake_api.play(Reply([text("- nothing left to fix")]))
    engine.correct(inp, ["MEMORY.md: line_length: line 2 is 180 characters"])
    assert fake_api.protocol_errors == []  # no tool_use of the cut-off reply left without its result
    (message,) = fake_api.requests[0]["messages"]
    assert "line 2 is 180 characters" in message["content"][0]["text"]


def test_every_request_streams(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    fake_api.play(*four_phase_script())
    ClaudeEngine().consolidate(engine_input(tmp_path))
    assert len(fake_api.requests) == 7 and all(r.get("stream") is True for r in fake_api.requests)


def test_a_retry_after_longer_than_the_time_left_ends_the_run_at_once(
    tmp_path: Path, fake_api: FakeAnthropic
) -> None:
    fake_api.play(rate_limited(retry_after="3600"), *four_phase_script())
    with pytest.raises(BudgetExceeded) as caught:
        ClaudeEngine().consolidate(engine_input(tmp_path, timeout_seconds=60))
    assert caught.value.reason == "budget_timeout" and "asked to wait 3600 s" in str(caught.value)
    assert len(fake_api.requests) == 1


def test_a_stream_that_goes_silent_half_way_is_asked_for_again(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    script = four_phase_script()
    stuck = Reply(script[1].blocks, stall=3.0)  # the second reply starts, then nothing for longer than the timeout
    fake_api.play(script[0], stuck, *script[1:])
    client = anthropic.Anthropic(max_retries=0, timeout=1.0)
    result = ClaudeEngine(client=client).consolidate(engine_input(tmp_path))
    assert result.usage.turns == 7 and len(fake_api.requests) == 8
    assert fake_api.protocol_errors == []


def test_an_api_that_cannot_be_reached_fails_after_the_sdk_s_retries_only(tmp_path: Path) -> None:
    client = anthropic.Anthropic(api_key="sk-ant-test", base_url="http://127.0.0.1:9", max_retries=1)
    with pytest.raises(EngineFailed) as caught:
        ClaudeEngine(client=client).consolidate(engine_input(tmp_path))
    assert caught.value.reason == "api" and "connection to the Anthropic API at http://127.0.0.1:9" in str(caught.value)
    assert caught.value.usage.turns == 0


def test_a_stop_reason_dream_does_not_know_is_no_final_reply(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    fake_api.play(Reply([text("- merged everything")], stop_reason="sleepy"))
    with pytest.raises(EngineFailed) as caught:
        ClaudeEngine().consolidate(engine_input(tmp_path))
    assert caught.value.reason == "api" and "'sleepy'" in str(caught.value)


def test_overloaded_in_the_middle_of_a_streamed_reply_is_asked_for_again(
    tmp_path: Path, fake_api: FakeAnthropic
) -> None:
    script = four_phase_script()
    fake_api.play(script[0], StreamError(), *script[1:])
    result = ClaudeEngine().consolidate(engine_input(tmp_path))
    assert result.usage.turns == 7 and len(fake_api.requests) == 8 and "merged" in result.summary


def test_a_stream_that_keeps_breaking_with_errors_fails_as_api_and_changes_nothing(
    tmp_path: Path, fake_api: FakeAnthropic
) -> None:
    inp = engine_input(tmp_path)
    before = read_tree(inp.staging.folder())
    fake_api.play(StreamError(times=99))
    with pytest.raises(EngineFailed) as caught:
        ClaudeEngine().consolidate(inp)
    assert caught.value.reason == "api" and "overloaded_error" in str(caught.value)
    assert read_tree(inp.staging.folder()) == before
