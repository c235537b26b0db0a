"""The offline engine: deterministic consolidation, no network, no clock.

It follows the four phases of a dream (docs/engines.md), one module each:
orient (read the staging copy), gather (explicit requests in what the user
said), consolidate (duplicates, absolute dates, new memories, forget) and
prune (pointers, orphans, long lines, budget). "Today" is `inp.today`, and
every date it writes comes from a session or from a file's own dates, so the
same input always gives the same output.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dream.engines.base import EngineInput, EngineResult

if TYPE_CHECKING:
    from dream.engines.offline.orient import Workspace

# The phases are imported by the methods: `dream diff` and `dream accept` import
# `dream.engines.offline.similarity` (for the retention report), which runs this
# file, and must not pay for the whole engine (polars, dateparser).

__all__ = ["OfflineEngine"]


class OfflineEngine:
    name = "offline"

    def consolidate(self, inp: EngineInput) -> EngineResult:
        from dream.engines.offline import (  # start-up: see the comment above
            consolidate, handbook, instructed, lint_notes, notice, orient, prune, skills)
        from dream.engines.offline import requests as gather  # start-up: see the comment above

        ws, before = orient.load(inp.staging, inp.settings, inp.today, inp)
        known = instructed.load(inp)  # what CLAUDE.md / AGENTS.md already say (dream/engines/instructions.py)
        requests, settled = notice.withdrawn(gather.gather_requests(inp.sessions), inp.sessions)
        requests = instructed.drop_said(ws, known, requests)
        consolidate.merge_duplicates(ws, inp.sessions)
        skills.note_repeats(ws)  # a Codex handbook bullet a skill says too: a person picks the place
        instructed.tidy(ws, known, inp.pinned)
        consolidate.absolute_dates(ws, inp.sessions)  # a memory with no date: its session's
        handbook.absolute_dates(ws)  # a Codex handbook's task groups, from their rollouts' dates
        consolidate.apply_requests(ws, requests)
        notice.note_unread(ws, inp.sessions, settled)
        lint_notes.note_findings(ws, inp.findings, inp.pinned)
        prune.prune(ws)
        orient.save(ws, inp.staging, before)
        return EngineResult(changes=ws.changes, summary=_summary(ws, len(requests)), needs_person=ws.needs)

    def correct(self, inp: EngineInput, problems: list[str]) -> EngineResult:
        """After a failed validation, prune again: that is all the offline engine can fix."""
        from dream.engines.offline import orient, prune  # start-up: see the comment above

        ws, before = orient.load(inp.staging, inp.settings, inp.today, inp)
        prune.prune(ws)
        orient.save(ws, inp.staging, before)
        return EngineResult(changes=ws.changes, summary=_summary(ws, 0), needs_person=ws.needs)


def _summary(ws: Workspace, request_count: int) -> str:
    counts: dict[str, int] = {}
    for change in ws.changes:
        counts[change.action] = counts.get(change.action, 0) + 1
    head = ", ".join(f"{n} {action}" for action, n in sorted(counts.items())) or "no changes"
    lines = [f"offline engine: {head}; {request_count} request(s) found in the sessions."]
    lines += [f"note: {note}" for note in ws.notes]
    return "\n".join(lines)
