"""The kinds of session source dream reads activity from: the `transcripts` setting and `dream import --from`
(read by dream/transcripts; here, not there, since the settings name them)."""

from __future__ import annotations

from enum import StrEnum


class SourceKind(StrEnum):
    CLAUDE_CODE = "claude-code"  # Claude Code's JSONL transcripts beside the project's memory folder
    CODEX = "codex"  # Codex's rollouts under ~/.codex/sessions
    CLAUDE_MEM = "claude-mem"  # claude-mem's database: observations and session summaries, read only
