"""Every tool result is capped as documented (paging.MAX_RESULT_CHARS), the first line and listings included.

On main a 350 KB one-line file reached the model whole (the pager always kept
the first line) and a folder listing of 1,000 files was 31K characters. Here a
model reads both through the strict fake server and every result it gets stays
under the cap, with the pointer to read on, and following the pointers shows
every file and every session once.
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from helpers.claude_store import Catalog, engine_input
from helpers.fake_anthropic import FakeAnthropic, Reply, fake_api, memory, text, tool_use  # noqa: F401

from dream.engines.claude import ClaudeEngine
from dream.engines.claude.paging import MAX_RESULT_CHARS

NOTE = 200  # the header and the pointer to read on, beside the capped rows


def _content(result: dict[str, Any]) -> str:
    content = result["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def _last_result(body: dict[str, Any]) -> str:
    return _content([b for b in body["messages"][-1]["content"] if b.get("type") == "tool_result"][-1])


def follower(first: dict[str, Any], pointer: str, call) -> Any:
    """A model that makes `first`, then follows each `[more: ...]` pointer the result gives, then stops."""
    def step(body: dict[str, Any]) -> Reply:
        if len(body["messages"]) == 1:
            return Reply([first])
        found = re.search(pointer, _last_result(body))
        return Reply([call(int(found.group(1)))]) if found else Reply([text("Nothing to change.")])
    return step


@pytest.fixture
def big_store(tmp_path: Path):
    inp = engine_input(tmp_path)
    (inp.staging.folder() / "blob.md").write_text("x" * 350_000 + "\n")  # one line of 350 KB: a pasted blob
    many = inp.staging.folder() / "many"
    many.mkdir()
    for n in range(1000):
        (many / f"note_{n:04d}.md").write_text("---\nname: n\n---\nx\n")
    return inp


def test_a_350_kb_one_line_file_is_cut_not_sent_whole(big_store, fake_api: FakeAnthropic) -> None:
    fake_api.play(Reply([memory("view", path="/memories/blob.md")]), Reply([text("Nothing to change.")]))
    ClaudeEngine().consolidate(big_store)
    (result,) = fake_api.tool_results()
    shown = _content(result)
    assert not result.get("is_error") and len(shown) <= MAX_RESULT_CHARS + NOTE
    assert "line cut here" in shown and f"{350_000 - shown.count('x'):,} more characters not shown" in shown
    assert fake_api.protocol_errors == []


def test_a_listing_of_1000_files_is_paged_and_the_pages_cover_every_file(big_store, fake_api: FakeAnthropic) -> None:
    view = lambda start: memory("view", path="/memories/many", view_range=[start, -1])  # noqa: E731
    fake_api.play(*[follower(memory("view", path="/memories/many"),
                             r"\[more: view /memories/many with view_range=\[(\d+), -1\]\]", view)] * 20)
    ClaudeEngine().consolidate(big_store)
    pages = [_content(r) for r in fake_api.tool_results()]
    assert len(pages) > 1 and all(len(p) <= MAX_RESULT_CHARS + NOTE for p in pages)
    listed = re.findall(r"note_(\d{4})\.md", "".join(pages))
    assert sorted(listed) == [f"{n:04d}" for n in range(1000)]  # each once, none left out


def test_a_list_of_480_sessions_is_paged_and_covers_every_session(big_store, fake_api: FakeAnthropic) -> None:
    ids = [f"s{n:03d}-{'deploy-notes-' * 2}" for n in range(480)]
    frame = pl.DataFrame({"session": ids, "date": [date(2026, 11, 1)] * 480, "seq": [1] * 480,
                          "role": ["user"] * 480, "text": ["remember to tag releases"] * 480})
    inp = big_store.__class__(**{**vars(big_store), "sessions": frame,
                                 "catalog": [Catalog(i, date(2026, 11, 1), "deploy notes", 24) for i in ids]})
    more = lambda start: tool_use("list_sessions", start=start)  # noqa: E731
    fake_api.play(*[follower(tool_use("list_sessions"), r"\[more: list_sessions\(start=(\d+)\)\]", more)] * 20)
    ClaudeEngine().consolidate(inp)
    pages = [_content(r) for r in fake_api.tool_results()]
    assert len(pages) > 1 and all(len(p) <= MAX_RESULT_CHARS + NOTE for p in pages)
    assert sorted(re.findall(r"^(s\d{3})-", "\n".join(pages), re.MULTILINE)) == sorted(i[:4] for i in ids)
