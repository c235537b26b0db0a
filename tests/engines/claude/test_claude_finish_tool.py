"""The `finish` tool: a dream ends in the same reply as its last edits, without a separate summary request.

Against the strict test server (tests/helpers/fake_anthropic.py): it answers
400 to a request whose tool_use blocks lack their tool_result, and to a tool
type a gateway does not know.
"""

from __future__ import annotations

from pathlib import Path

from helpers.claude_store import INDEX, NEW_INDEX, SUMMARY, engine_input, four_phase_script
from helpers.fake_anthropic import FakeAnthropic, Reply, fake_api, memory, raw_tool_use, text, tool_use  # noqa: F401
from helpers.scripted_models import PREAMBLE

from dream.engines.claude import ClaudeEngine

MERGE = memory("delete", path="/memories/pytest-notes.md")
PRUNE = memory("str_replace", path="/memories/MEMORY.md", old_str=INDEX, new_str=NEW_INDEX)


def results_of(request: dict) -> list[dict]:
    return [b for b in request["messages"][-1]["content"] if b.get("type") == "tool_result"]


def test_a_finish_beside_the_last_edits_ends_the_run_without_another_request(
    tmp_path: Path, fake_api: FakeAnthropic
) -> None:
    inp = engine_input(tmp_path)
    fake_api.play(Reply([tool_use("read_session", session_id="s1", start=1, count=50)]),
                  Reply([text("Merging."), MERGE, PRUNE, tool_use("finish", summary=SUMMARY)]))
    result = ClaudeEngine().consolidate(inp)
    assert len(fake_api.requests) == 2 and fake_api.protocol_errors == []
    assert result.summary == SUMMARY and result.usage.turns == 2
    staged = inp.staging.folder()
    assert not (staged / "pytest-notes.md").exists() and (staged / "MEMORY.md").read_text() == NEW_INDEX
    deleted = next(c for c in result.changes if c.path == "pytest-notes.md")
    assert deleted.action == "merged" and "both described running pytest" in deleted.reason


def test_a_finish_whose_sibling_edit_failed_sends_the_results_back_and_the_model_goes_on(
    tmp_path: Path, fake_api: FakeAnthropic
) -> None:
    inp = engine_input(tmp_path)
    wrong = memory("str_replace", path="/memories/MEMORY.md", old_str="no such text", new_str=NEW_INDEX)
    fake_api.play(Reply([tool_use("list_sessions")]),
                  Reply([MERGE, wrong, tool_use("finish", summary=SUMMARY)]),
                  Reply([PRUNE, tool_use("finish", summary=SUMMARY)]))
    result = ClaudeEngine().consolidate(inp)
    assert len(fake_api.requests) == 3 and fake_api.protocol_errors == []
    sent = results_of(fake_api.requests[2])
    assert [r.get("is_error", False) for r in sent] == [False, True, True]
    assert sent[2]["content"].startswith("Not finished: 1 of the other calls")
    assert (inp.staging.folder() / "MEMORY.md").read_text() == NEW_INDEX and result.summary == SUMMARY


def test_a_finish_as_the_first_act_is_nudged_once(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    inp = engine_input(tmp_path)
    fake_api.play(Reply([tool_use("finish", summary="Nothing needed changing.")], thinking=900),
                  Reply([MERGE, PRUNE, tool_use("finish", summary=SUMMARY)]))
    result = ClaudeEngine().consolidate(inp)
    nudge = results_of(fake_api.requests[1])[0]
    assert "is_error" not in nudge and "Go on with tonight's dream" in nudge["content"]
    assert result.summary == SUMMARY and not (inp.staging.folder() / "pytest-notes.md").exists()


def test_a_second_lone_finish_after_the_nudge_is_the_summary(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    inp = engine_input(tmp_path)
    fake_api.play(Reply([text(PREAMBLE)]), Reply([tool_use("finish", summary="Nothing needed changing.")]))
    result = ClaudeEngine().consolidate(inp)
    assert len(fake_api.requests) == 2 and result.summary == "Nothing needed changing." and result.changes == []


def test_a_malformed_finish_is_an_error_the_model_reads(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    inp = engine_input(tmp_path)
    fake_api.play(Reply([MERGE, raw_tool_use("finish", {"text": SUMMARY})]), Reply([text(SUMMARY)]))
    result = ClaudeEngine().consolidate(inp)
    error = results_of(fake_api.requests[1])[1]
    assert error["is_error"] and "summary: a non-empty string" in error["content"]
    assert result.summary == SUMMARY


def test_the_text_only_summary_still_ends_a_run(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    inp = engine_input(tmp_path)
    script = four_phase_script()
    fake_api.play(*script)
    result = ClaudeEngine().consolidate(inp)
    assert result.summary == SUMMARY and len(fake_api.requests) == len(script)


def test_a_corrective_turn_after_a_finish_sends_its_results_first(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    inp = engine_input(tmp_path)
    xdist = four_phase_script()[4].blocks[0]  # the str_replace of testing.md
    fake_api.play(Reply([tool_use("list_sessions")]), Reply([MERGE, tool_use("finish", summary=SUMMARY)]),
                  Reply([xdist, tool_use("finish", summary="- updated testing.md: the xdist flag")]))
    engine = ClaudeEngine()
    engine.consolidate(inp)
    result = engine.correct(inp, ["testing.md lacks the xdist flag of session s1"])
    last = fake_api.requests[2]["messages"][-1]["content"]
    assert [b["type"] for b in last] == ["tool_result", "tool_result", "text", "text"]
    assert fake_api.protocol_errors == [] and last[2]["text"].startswith("[budget left: ")
    staged = inp.staging.folder()
    assert "does not pass validation" in last[3]["text"] and "-n auto" in (staged / "testing.md").read_text()


def test_a_gateway_that_knows_only_custom_tools_takes_the_finish_tool(tmp_path: Path,
                                                                      fake_api: FakeAnthropic) -> None:
    fake_api.tool_types = "custom"
    inp = engine_input(tmp_path, memory_tool="custom")
    fake_api.play(Reply([tool_use("list_sessions")]), Reply([MERGE, PRUNE, tool_use("finish", summary=SUMMARY)]))
    result = ClaudeEngine().consolidate(inp)
    finish = next(t for t in fake_api.requests[0]["tools"] if t["name"] == "finish")
    assert "type" not in finish and finish["input_schema"]["required"] == ["summary"]
    assert fake_api.protocol_errors == [] and result.summary == SUMMARY and len(fake_api.requests) == 2


def test_a_finish_on_the_last_allowed_turn_is_not_over_the_turn_budget(tmp_path: Path,
                                                                       fake_api: FakeAnthropic) -> None:
    inp = engine_input(tmp_path, max_turns=2)
    fake_api.play(Reply([tool_use("list_sessions")]), Reply([MERGE, PRUNE, tool_use("finish", summary=SUMMARY)]))
    result = ClaudeEngine().consolidate(inp)
    assert result.usage.turns == 2 and result.summary == SUMMARY
