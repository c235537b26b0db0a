"""Store layouts: what an agent's memory folder holds, beside the transcript sources (`dream.transcripts`).

A layout says where the index is, which files are memories, which are the
agent's own evidence (read, never written, never proposed for change), what
budget the index has and which top-level names no memory may take. The
pipeline, versions, review and both engines work the same on every layout:
the memory tree (`dream.store.tree.read_tree`) simply never holds evidence.

- ``claude-code``: Claude Code's memory folder: ``MEMORY.md`` indexes topic
  files; ``logs/`` and ``sessions/`` are activity, ``team/`` is shared memory.
- ``codex``: Codex's ``~/.codex/memories``: ``memory_summary.md`` is the
  always-loaded index (Codex loads about 2,500 tokens of it), ``MEMORY.md``
  and ``skills/`` are the memories, ``rollout_summaries/`` and
  ``raw_memories.md`` are the night's evidence (`dream.store.codex`).

A folder is a Codex layout when it holds ``memory_summary.md``,
``raw_memories.md`` or ``rollout_summaries/``; the ``layout`` setting may name
the layout instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path


class LayoutKind(StrEnum):
    CLAUDE_CODE = "claude-code"
    CODEX = "codex"


@dataclass(frozen=True)
class StoreLayout:
    kind: LayoutKind
    index: str  # the file every session loads first
    evidence: frozenset[str]  # top-level names the agent keeps as evidence: read only, never memory
    reserved: frozenset[str]  # top-level names no memory may take (evidence, activity, dream's own)
    index_budget_tokens: int | None = None  # the index's budget where the agent sets one in tokens
    index_links_memories: bool = True  # every memory file has its line in the index (else the index is prose)
    frontmatter: bool = True  # memory files carry Claude Code's frontmatter (name, description, type)

    def is_evidence(self, top: str) -> bool:
        return top.casefold() in {name.casefold() for name in self.evidence}


CLAUDE_CODE = StoreLayout(
    kind=LayoutKind.CLAUDE_CODE, index="MEMORY.md", evidence=frozenset({"logs", "sessions"}),
    reserved=frozenset({"logs", "sessions", ".dream", "team"}),
)
# Names from codex-rs/memories (openai/codex): phase 1 writes rollout_summaries/ and raw_memories.md, phase 2
# writes phase2_workspace_diff.md for its agent; extensions/ holds extension resources; .git is Codex's baseline.
CODEX_EVIDENCE = frozenset({"rollout_summaries", "raw_memories.md", "phase2_workspace_diff.md", "extensions"})
CODEX = StoreLayout(
    kind=LayoutKind.CODEX, index="memory_summary.md", evidence=CODEX_EVIDENCE,
    reserved=CODEX_EVIDENCE | {"logs", "sessions", ".dream", ".git"}, index_budget_tokens=2_500,
    index_links_memories=False, frontmatter=False,
)
LAYOUTS = {layout.kind: layout for layout in (CLAUDE_CODE, CODEX)}
CODEX_MARKS = ("memory_summary.md", "raw_memories.md")  # files only a Codex memory folder holds at its top


def named(kind: str | None) -> StoreLayout:
    """The layout a resolved `layout` setting names (Claude Code's when none is named)."""
    return LAYOUTS[LayoutKind(kind)] if kind else CLAUDE_CODE


def of_tree(paths: Iterable[str]) -> StoreLayout:
    """The layout a memory tree's own files say (for a check that sees the tree, not the folder or settings)."""
    return CODEX if CODEX.index in paths else CLAUDE_CODE


def index_tokens(data: bytes) -> int:
    """Tokens as Codex counts them to cut its summary: about four bytes each."""
    return (len(data) + 3) // 4


def over_budget(layout: StoreLayout, tree: dict[str, bytes]) -> str | None:
    """A sentence for a person when the index is over the budget its agent loads; dream never cuts it itself."""
    data = tree.get(layout.index)
    if layout.index_budget_tokens is None or data is None or index_tokens(data) <= layout.index_budget_tokens:
        return None
    return (f"{layout.index} is about {index_tokens(data):,} tokens, over the {layout.index_budget_tokens:,} the agent "
            f"loads: what is beyond is never read; shorten it (merge its bullets, move detail into MEMORY.md)")


def detect(root: Path) -> StoreLayout:
    """The layout a folder's shape says: Codex's when it holds its summary, raw memories or rollout summaries."""
    if any((root / name).is_file() for name in CODEX_MARKS) or (root / "rollout_summaries").is_dir():
        return CODEX
    return CLAUDE_CODE


def layout_of(root: Path, named: str | None = None) -> StoreLayout:
    """The layout the `layout` setting names, or else the one the folder's shape says."""
    return LAYOUTS[LayoutKind(named)] if named else detect(root)
