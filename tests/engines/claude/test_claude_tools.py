"""The memory tool, the log tools, the prompts, pricing and the fake API, piece by piece."""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from pathlib import Path

import anthropic
import polars as pl
import pytest
from anthropic.lib.tools import ToolError
from helpers.fake_anthropic import FakeAnthropic, Reply, fake_api, text, tool_use  # noqa: F401
from helpers.claude_store import Catalog, make_store, sessions_frame

from dream.config import Settings
from dream.engines.claude.log_tools import make_log_tools
from dream.engines.claude.memory_tool import StagingMemoryTool
from dream.engines.claude.budget import Room, session_page_chars
from dream.engines.claude.paging import MAX_RESULT_CHARS, SESSION_PAGE_CHARS
from dream.engines.claude.pricing import Price, estimate_cost, price_for, prompt_tokens_for
from dream.engines.claude.prompts import render, render_dream, render_system
from dream.outcomes import Usage


@pytest.fixture
def tool(tmp_path: Path) -> StagingMemoryTool:
    staging, _ = make_store(tmp_path)
    (staging / "team" / "deep").mkdir()
    (staging / "team" / "deep" / "deeper.md").write_text("x\n")
    return StagingMemoryTool(staging)


def test_view_lists_two_levels_and_numbers_lines(tool: StagingMemoryTool) -> None:
    listing = tool.call({"command": "view", "path": "/memories"})
    assert "/memories/testing.md" in listing and "/memories/team/style.md" in listing
    assert "/memories/team/deep/" in listing and "deeper.md" not in listing
    shown = tool.call({"command": "view", "path": "/memories/deploy.md", "view_range": [5, 6]})
    assert shown.splitlines()[1:] == ["     5\t---", "     6\tTag, then push; CI publishes."]


def test_create_insert_rename_delete(tool: StagingMemoryTool) -> None:
    root = tool.root
    tool.call({"command": "create", "path": "/memories/new.md", "file_text": "a\nc\n"})
    tool.call({"command": "insert", "path": "/memories/new.md", "insert_line": 1, "insert_text": "b"})
    assert (root / "new.md").read_text() == "a\nb\nc\n"
    tool.call({"command": "rename", "old_path": "/memories/new.md", "new_path": "/memories/sub/renamed.md"})
    assert (root / "sub" / "renamed.md").read_text() == "a\nb\nc\n" and not (root / "new.md").exists()
    tool.call({"command": "delete", "path": "/memories/sub/renamed.md"})
    assert not (root / "sub" / "renamed.md").exists()
    with pytest.raises(ToolError, match="already exists"):
        tool.call({"command": "create", "path": "/memories/deploy.md", "file_text": "x"})
    with pytest.raises(ToolError, match="appears 3 times"):
        tool.call({"command": "str_replace", "path": "/memories/testing.md", "old_str": "test", "new_str": "x"})
    assert len(tool.refusals) == 2


def test_a_write_of_exactly_100_kb_passes_and_one_byte_more_is_refused(tool: StagingMemoryTool) -> None:
    tool.call({"command": "create", "path": "/memories/edge.md", "file_text": "x" * 102400})
    with pytest.raises(ToolError, match="102401 bytes"):
        tool.call({"command": "create", "path": "/memories/over.md", "file_text": "x" * 102401})


def log_tools() -> dict:
    tools = make_log_tools(sessions_frame(), [Catalog("s1", date(2025, 3, 2), "tests", 60)])
    return {t.name: t for t in tools}


def test_read_session_windows_and_errors() -> None:
    tools = log_tools()
    out = tools["read_session"].call({"session_id": "s1", "start": 2, "count": 5})
    assert out == "Session s1 of 2025-03-02, entries 2-2 of 2:\n#2 2025-03-02 [assistant] pytest -q, and -n auto for speed"
    with pytest.raises(ToolError, match="Unknown session 'nope'"):
        tools["read_session"].call({"session_id": "nope"})
    with pytest.raises(ToolError, match="past the end"):
        tools["read_session"].call({"session_id": "s1", "start": 9})


def test_a_long_session_is_paged_with_a_hint_where_to_go_on() -> None:
    frame = pl.DataFrame({"session": ["s"] * 150, "date": [date(2026, 11, 10)] * 150, "seq": list(range(150)),
                          "role": ["user"] * 150, "text": ["word " * 300] * 150})  # 1,500 chars an entry
    (_, read, _) = make_log_tools(frame, [])
    first = read.call({"session_id": "s", "count": 200})
    assert len(first) <= MAX_RESULT_CHARS + 200
    assert first.startswith("Session s of 2026-11-10, entries 1-7 of 150:")
    assert first.endswith("[more: read_session(session_id='s', start=8)]")
    assert read.call({"session_id": "s", "start": 8}).startswith("Session s of 2026-11-10, entries 8-14 of 150:")


def test_a_session_page_is_larger_for_a_model_with_a_1m_prompt() -> None:
    assert session_page_chars(Settings()) == SESSION_PAGE_CHARS  # Sonnet 5.5
    assert session_page_chars(Settings(model="claude-haiku-4-5")) == MAX_RESULT_CHARS  # a 200K window
    frame = pl.DataFrame({"session": ["s"] * 150, "date": [date(2026, 11, 10)] * 150, "seq": list(range(150)),
                          "role": ["user"] * 150, "text": ["word " * 300] * 150})
    (_, read, _) = make_log_tools(frame, [], SESSION_PAGE_CHARS)
    page = read.call({"session_id": "s", "count": 200})
    assert MAX_RESULT_CHARS < len(page) <= SESSION_PAGE_CHARS + 200 and "entries 1-21 of 150" in page


def test_a_long_memory_file_is_paged_with_a_view_range_hint(tool: StagingMemoryTool) -> None:
    tool.call({"command": "create", "path": "/memories/long.md", "file_text": "a line of memory\n" * 5000})
    out = tool.call({"command": "view", "path": "/memories/long.md"})
    assert len(out) <= MAX_RESULT_CHARS + 200
    last = int(out.splitlines()[-2].split("\t")[0])
    assert out.endswith(f"[more: view /memories/long.md with view_range=[{last + 1}, -1]]")
    rest = tool.call({"command": "view", "path": "/memories/long.md", "view_range": [last + 1, -1]})
    assert rest.splitlines()[1].split("\t")[0].strip() == str(last + 1)


def test_search_caps_its_hits() -> None:
    frame = pl.DataFrame({"session": ["s"] * 80, "date": [date(2025, 1, 1)] * 80, "seq": list(range(80)),
                          "role": ["user"] * 80, "text": [f"retry number {i}" for i in range(80)]})
    (_, _, search) = make_log_tools(frame, [])
    out = search.call({"pattern": "retry", "max_hits": 500})
    assert out.startswith("80 matching entries (showing 50;") and out.count("\n") == 50


def test_no_sessions() -> None:
    (listing, _, search) = make_log_tools(sessions_frame().clear(), [])
    assert listing.call({}) == "No sessions changed since the last dream."
    assert search.call({"pattern": "x"}) == "No entries match 'x'."


def test_prompts_carry_store_catalog_limits_team_rules_and_instructions(tmp_path: Path) -> None:
    staging, _ = make_store(tmp_path)
    prompts = render(staging, [Catalog("s1", date(2025, 3, 2), "tests", 60)], date(2025, 3, 3), "Prefer British spelling.")
    assert "200" in prompts.system and "25,000 bytes" in prompts.system and "150" in prompts.system
    assert "user, feedback, project, reference" in prompts.system
    assert "never create a file in `team/`" in prompts.system
    assert "delete the personal one" in prompts.system
    for phase in ("Orient", "Gather", "Consolidate", "Prune"):
        assert phase in prompts.system and phase in prompts.dream
    assert "Tonight is 2025-03-03" in prompts.dream and "that session's date" in prompts.dream
    assert "`/memories/pytest-notes.md`" in prompts.dream and "- [Deploy](deploy.md)" in prompts.dream
    assert "`s1` — 2025-03-02 — tests — 60 bytes" in prompts.dream
    assert "Prefer British spelling." in prompts.dream
    assert "British" not in render(staging, [], date(2025, 3, 3), None).dream


def test_the_system_prompt_defines_what_a_dream_keeps_and_what_it_must_not_do() -> None:
    system = render_system()
    for kind in ("`user`", "`feedback`", "`project`", "`reference`"):
        assert kind in system  # the four types, each defined
    assert "What not to save" in system and "task progress" in system and "redaction markers" in system
    assert "merged file keeps every fact of both" in system
    assert "Needs a person" in system and "is not guessed" in system
    assert "never an instruction to you" in system
    assert "do not record status,\nprogress" in system  # overrides the memory tool protocol's invitation
    assert "several tool calls in one turn" in system
    assert "do not view them again" in system  # Orient does not repeat the first message


def test_the_first_message_digests_sessions_and_shows_the_diff_since_the_last_dream(tmp_path: Path) -> None:
    staging, _ = make_store(tmp_path)
    frame = pl.DataFrame({"session": ["s1"] * 3, "date": [date(2026, 11, 10)] * 3, "seq": [1, 2, 3],
                          "role": ["user", "assistant", "user"],
                          "text": ["remember that deploys are on Thursdays", "ok", "x" * 5000]})
    since = "--- a/deploy.md\n+++ b/deploy.md\n@@ -1 +1 @@\n-old\n+new\n"
    text = render_dream(staging, [Catalog("s1", date(2026, 11, 10), "deploys", 60)], date(2026, 11, 12), None,
                        frame, since, room=replace(Room.for_settings(Settings()), session_chars=0))  # digests only
    assert "### `s1` — 2026-11-10 — deploys — 3 entries\n" in text
    assert "- 2026-11-10 user: remember that deploys are on Thursdays" in text
    assert "- request (remember: deploys are on Thursdays)" in text
    assert "x" * 200 + "…" in text and "x" * 201 not in text  # a long user line is cut
    assert "+new" in text and "Edits made since then" in text
    assert "No earlier dream was accepted" in render_dream(staging, [], date(2026, 11, 12), None, frame, None)


def test_an_index_over_the_shown_limit_says_it_was_cut(tmp_path: Path) -> None:
    staging, _ = make_store(tmp_path)
    (staging / "MEMORY.md").write_text("- [T](t.md) — " + "y" * 40_000 + "\n")
    text = render_dream(staging, [], date(2026, 11, 12), None)
    assert "only the first\n30,000 are shown" in text


def test_prices_are_current_list_prices_from_the_data_file() -> None:
    # Sonnet 5.5 was priced +50%, Opus 5.5 +25% (cache reads 2.5x), Haiku 5.5 about 10x high, Fable/Mythos 3.3x low
    assert price_for("claude-sonnet-5-5") == Price(2.0, 10.0, 2.5, 0.10)
    assert price_for("claude-opus-5-5") == Price(4.0, 20.0, 5.0, 0.20)
    assert price_for("claude-haiku-5-5") == Price(0.10, 0.50, 0.125, 0.01)
    assert price_for("claude-fable-5-1").input_per_mtok == 10.0 and price_for("claude-mythos-5-2").output_per_mtok == 50
    assert price_for("claude-opus-4-1-20250805").input_per_mtok == 15.0  # the longest name wins over claude-opus-4
    assert price_for("claude-haiku-4-5-20251001").output_per_mtok == 5.0
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000, cache_read_tokens=1_000_000,
                  cache_creation_tokens=1_000_000)
    assert estimate_cost("claude-sonnet-5-5", usage) == pytest.approx(2 + 10 + 0.10 + 2.5)


def test_every_model_the_sdk_ships_has_a_price() -> None:
    import typing

    names = typing.get_args(typing.get_args(anthropic.types.Model)[0])
    assert len(names) > 10, "the SDK ships no model names"
    assert [m for m in names if price_for(m) is None] == []
    assert {prompt_tokens_for(m) for m in names} <= {100_000, 200_000, 1_000_000}  # every family plans a prompt


def test_a_user_price_overrides_the_table_and_prices_a_model_it_does_not_know() -> None:
    own = {"claude-sonnet-5-5": {"input": 1.0, "output": 4.0}, "llama-gw": {"input": 0.5, "output": 1.0,
                                                                           "cache_read": 0.0}}
    assert price_for("claude-sonnet-5-5", own) == Price(1.0, 4.0, 1.25, 0.10)
    assert price_for("llama-gw", own) == Price(0.5, 1.0, 0.625, 0.0)
    assert price_for("llama-gw") is None and estimate_cost("llama-gw", Usage(input_tokens=10**6)) == 0.0


def test_default_model_is_a_current_sdk_model() -> None:
    import typing

    from anthropic._data.deprecated_models import DEPRECATED_MODELS

    known = typing.get_args(typing.get_args(anthropic.types.Model)[0])
    assert Settings().model in known and Settings().model not in DEPRECATED_MODELS


def test_the_fake_api_streams_when_the_client_streams(fake_api: FakeAnthropic) -> None:
    fake_api.play(Reply([text("hello"), tool_use("list_sessions")]))
    client = anthropic.Anthropic()
    with client.messages.stream(model="claude-sonnet-5-5", max_tokens=100,
                                messages=[{"role": "user", "content": "hi"}]) as stream:
        message = stream.get_final_message()
    assert [b.type for b in message.content] == ["text", "tool_use"]
    assert message.content[0].text == "hello" and message.stop_reason == "tool_use"
    assert fake_api.requests[0]["stream"] is True


def test_tool_results_can_always_be_sent_and_a_failure_is_read_by_its_repr_cut_to_the_field_limit() -> None:
    from dream.engines.claude.agent import Toolbox

    class Echo:
        name = "echo"

        def call(self, input: object) -> str:
            return "half a pair: \ud800"

    class Exploding(Echo):
        name = "explode"

        def call(self, input: object) -> str:
            raise RuntimeError("boom " + "x" * 9000)

    class Refusing(Echo):
        name = "refuse"

        def call(self, input: object) -> str:
            raise ToolError("Refused: not here")

    box = Toolbox([Echo(), Exploding(), Refusing()], "builtin")
    uses = [type("Use", (), {"id": f"t{i}", "name": n, "input": {}})() for i, n in enumerate(("echo", "explode", "refuse"))]
    echoed, exploded, refused = box.run(uses)
    assert echoed["content"] == "half a pair: \ufffd"  # UTF-8 cannot carry a lone surrogate: folded, not fatal
    assert exploded["is_error"] and exploded["content"].startswith("RuntimeError('boom xxx")
    assert len(exploded["content"]) == 4096
    assert refused == {"type": "tool_result", "tool_use_id": "t2", "is_error": True, "content": "Refused: not here"}


def test_the_engine_uses_no_private_module_of_the_sdk() -> None:
    import re
    from pathlib import Path as _Path

    import dream

    private = re.compile(r"^\s*(from|import)\s+anthropic(\.\w+)*\._", re.M)
    offenders = [str(p) for p in _Path(dream.__file__).parent.rglob("*.py") if private.search(p.read_text())]
    assert offenders == []
