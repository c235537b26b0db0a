"""The Claude engine's prompts describe the store's own layout (prompts/system.md.j2, dream.md.j2), against the
fake Messages API: which file is the index and its budget, which are memories, which evidence is read only."""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path

from helpers.fake_anthropic import FakeAnthropic, Reply, fake_api, text  # noqa: F401
from helpers.reference_store import make_store

from dream.outcomes import Status
from dream.pipeline.run import run

CODEX_FIXTURE = Path(__file__).parents[2] / "cli" / "codex_memories"
NIGHT = datetime(2026, 11, 22, 3).timestamp()


def first_request(store: Path, fake: FakeAnthropic) -> tuple[str, str]:
    fake.play(*[Reply([text("Nothing needed changing.")])] * 2)  # the engine asks once to go on
    outcome = run(store, engine="claude", force=True, now=NIGHT)
    assert outcome.status in (Status.NOOP, Status.PROPOSED), outcome.error
    first = fake.requests[0]
    return first["system"][0]["text"], first["messages"][0]["content"][0]["text"]


def test_a_codex_folder_is_described_as_codex_keeps_it(home: Path, fake_api: FakeAnthropic) -> None:
    store = home / ".codex" / "memories"
    shutil.copytree(CODEX_FIXTURE, store)
    system, message = first_request(store, fake_api)

    assert "`/memories/memory_summary.md` is the **index**" in system and "2,500 tokens" in system
    assert "`/memories/MEMORY.md` is the **handbook**, the memories" in system
    assert "`/memories/skills/<name>/SKILL.md` are **skills**, memories too" in system
    assert "**read only**: `extensions`, `phase2_workspace_diff.md`, `raw_memories.md`, `rollout_summaries`" in system
    assert "never create `<topic>.md` files" in system
    assert "`feedback`: how the user wants" not in system and "Shared memories in `team/`" not in system
    assert "## The current index (`/memories/memory_summary.md`)" in message
    assert "the agent loads 2,500." in message and "over its budget" not in message
    assert "#### `/memories/MEMORY.md`" in message  # the handbook is a memory, shown as one
    assert "uv run pytest" in message  # the evidence arrives as the night's sessions


def test_an_index_over_its_budget_is_named_so_in_the_first_message(home: Path, fake_api: FakeAnthropic) -> None:
    store = home / ".codex" / "memories"
    shutil.copytree(CODEX_FIXTURE, store)
    with open(store / "memory_summary.md", "a") as summary:
        summary.write("".join(f"- routing note {n}: where the notes on topic {n} live -> MEMORY.md\n" for n in range(250)))
    _, message = first_request(store, fake_api)
    assert "the agent loads 2,500: it is **over its budget**, and what lies beyond is never read" in message


def test_a_claude_code_store_keeps_its_own_description(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    system, message = first_request(make_store(tmp_path / "store"), fake_api)
    assert "It holds the index\n  `/memories/MEMORY.md`, topic files" in system
    assert "`feedback`: how the user wants" in system and "Shared memories in `team/`" in system
    assert "Codex" not in system and "memory_summary.md" not in system
    assert "## The current index (`/memories/MEMORY.md`)" in message and "the agent loads" not in message
