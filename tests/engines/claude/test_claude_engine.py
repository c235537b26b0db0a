"""The claude engine end to end against the fake Messages API: a normal four-phase run."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path

import polars as pl
from helpers.fake_anthropic import FakeAnthropic, Reply, fake_api, memory, text, tool_use  # noqa: F401

from dream.config import Settings
from dream.engines.base import EngineInput
from dream.engines.claude import ClaudeEngine
from dream.store.tree import read_tree

INDEX = (
    "- [Testing](testing.md) — how we run tests\n"
    "- [Pytest notes](pytest-notes.md) — more about pytest\n"
    "- [Deploy](deploy.md) — how releases go out\n"
)
TESTING = "---\nname: testing\ndescription: how tests run\ntype: project\n---\nRun `pytest -q` from the repo root.\n"
PYTEST_NOTES = "---\nname: pytest-notes\ndescription: pytest\ntype: project\n---\nUse `-n auto` for xdist.\n"
DEPLOY = "---\nname: deploy\ndescription: releases\ntype: project\n---\nTag, then push; CI publishes.\n"
TEAM = "---\nname: style\ndescription: team style\ntype: feedback\n---\nBlack, 100 columns.\n"


@dataclass
class Catalog:
    session_id: str
    date: date
    title: str
    size: int
    rel: str = ""


def make_store(root: Path) -> tuple[Path, Path]:
    """A staging copy and a live store with logs (the logs only to prove they keep their bytes)."""
    staging = root / "staging"
    (staging / "team").mkdir(parents=True)
    (staging / "MEMORY.md").write_text(INDEX)
    (staging / "testing.md").write_text(TESTING)
    (staging / "pytest-notes.md").write_text(PYTEST_NOTES)
    (staging / "deploy.md").write_text(DEPLOY)
    (staging / "team" / "style.md").write_text(TEAM)
    store = root / "store"
    log = store / "logs" / "2025" / "03" / "02" / "s1-tests.md"
    log.parent.mkdir(parents=True)
    log.write_text("> how do we run tests?\n< pytest -q, and -n auto for speed\n")
    return staging, store


def sessions_frame() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "session": ["s1", "s1", "s2"],
            "date": [date(2025, 3, 2)] * 3,
            "seq": [1, 2, 1],
            "role": ["user", "assistant", "user"],
            "text": ["how do we run tests?", "pytest -q, and -n auto for speed", "deploy on fridays? no."],
        }
    )


def engine_input(root: Path, **settings: object) -> EngineInput:
    staging, store = make_store(root)
    return EngineInput(
        store_root=store,
        staging=staging,
        sessions=sessions_frame(),
        catalog=[Catalog("s1", date(2025, 3, 2), "tests", 60), Catalog("s2", date(2025, 3, 2), "deploy", 30)],
        settings=Settings(**settings),
        today=date(2025, 3, 3),
    )


MERGED_TESTING = TESTING.replace(
    "Run `pytest -q` from the repo root.\n",
    "Run `pytest -q` from the repo root; add `-n auto` (xdist) for speed.\n",
)
NEW_INDEX = (
    "- [Testing](testing.md) — how we run tests: pytest -q, -n auto\n"
    "- [Deploy](deploy.md) — how releases go out\n"
)
SUMMARY = (
    "- merged pytest-notes.md into testing.md: both described running pytest\n"
    "- updated testing.md: added the xdist flag from session s1\n"
    "- pruned MEMORY.md: dropped the pointer to pytest-notes.md and sharpened the testing hook"
)


def four_phase_script() -> list[Reply]:
    return [
        # Orient
        Reply([text("Orienting."), memory("view", path="/memories")]),
        Reply([memory("view", path="/memories/MEMORY.md"), memory("view", path="/memories/testing.md"),
               memory("view", path="/memories/pytest-notes.md")]),
        # Gather
        Reply([tool_use("list_sessions")]),
        Reply([tool_use("read_session", session_id="s1", start=1, count=50),
               tool_use("search_logs", pattern="pytest|xdist")]),
        # Consolidate
        Reply([memory("str_replace", path="/memories/testing.md",
                      old_str="Run `pytest -q` from the repo root.\n",
                      new_str="Run `pytest -q` from the repo root; add `-n auto` (xdist) for speed.\n"),
               memory("delete", path="/memories/pytest-notes.md")]),
        # Prune
        Reply([memory("str_replace", path="/memories/MEMORY.md", old_str=INDEX, new_str=NEW_INDEX)]),
        Reply([text(SUMMARY)]),
    ]


def test_four_phase_run_merges_two_files_and_rewrites_the_index(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    inp = engine_input(tmp_path)
    before = read_tree(inp.staging)
    fake_api.play(*four_phase_script())

    result = ClaudeEngine().consolidate(inp)

    expected = dict(before)
    expected["testing.md"] = MERGED_TESTING.encode()
    expected["MEMORY.md"] = NEW_INDEX.encode()
    del expected["pytest-notes.md"]
    assert read_tree(inp.staging) == expected
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
    inp = engine_input(tmp_path)
    fake_api.play(*four_phase_script())
    ClaudeEngine().consolidate(inp)
    by_id = {r["tool_use_id"]: r for r in fake_api.tool_results()}
    calls = [b for m in fake_api.requests[-1]["messages"] if m["role"] == "assistant" for b in m["content"]
             if b.get("type") == "tool_use"]
    out = {c["name"] + str(c["input"].get("session_id", c["input"].get("pattern", ""))): _content(by_id[c["id"]])
           for c in calls if c["name"] != "memory"}
    assert "s1 | 2025-03-02 | tests | 2 |" in out["list_sessions"]
    assert "#2 [assistant] pytest -q, and -n auto for speed" in out["read_sessions1"]
    assert out["search_logspytest|xdist"] == "1 matching entries:\ns1 #2 [assistant] pytest -q, and -n auto for speed"


def test_requests_carry_the_stable_prefix_and_no_shell_or_network_tool(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    fake_api.play(*four_phase_script())
    ClaudeEngine().consolidate(engine_input(tmp_path))
    first = fake_api.requests[0]
    names = [t["name"] for t in first["tools"]]
    assert names == ["memory", "list_sessions", "read_session", "search_logs"]
    assert first["tools"][0]["type"] == "memory_20250818"
    assert first["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert "Orient" in first["system"][0]["text"] and "team/" in first["system"][0]["text"]
    assert first["cache_control"] == {"type": "ephemeral"}
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
