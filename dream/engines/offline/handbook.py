"""Relative dates in Codex's handbook (``MEMORY.md`` of a Codex memory folder), for the offline engine.

Codex's phase 2 writes each ``# Task Group:`` block from rollouts it cites under ``rollout_summary_files``,
each with its ``updated_at=``: a "yesterday" in the block counts from that day, as a Claude Code topic's
counts from its frontmatter date. A block whose rollouts give no date, or several, keeps its words and the
report says why.
"""

from __future__ import annotations

import re
from datetime import date

from dream.engines.offline import dates
from dream.engines.offline.kinds import ChangeAction
from dream.engines.offline.orient import Workspace
from dream.store.layouts import LayoutKind, named
from dream.store.tree import INDEX_NAME

_GROUP = re.compile(r"^#\s+Task Group\b", re.IGNORECASE)
_UPDATED = re.compile(r"\bupdated_at\s*[=:]\s*`?(\d{4}-\d{2}-\d{2})")


def absolute_dates(ws: Workspace) -> None:
    """Rewrite the relative dates of each task group from the one date its rollouts were written."""
    if named(ws.settings.layout).kind != LayoutKind.CODEX:
        return
    lines = ws.store.index_lines
    if not dates.has_relative_dates(lines):
        return
    for start, end in _groups(lines):
        block = lines[start:end]
        if not dates.has_relative_dates(block):
            continue
        bases = sorted({date.fromisoformat(m.group(1)) for line in block for m in _UPDATED.finditer(line)})
        where = f"{INDEX_NAME} line {start + 1} ({block[0].lstrip('# ').strip()[:60]})"
        if len(bases) != 1:
            why = "its rollouts give no date" if not bases else "its rollouts have several dates"
            ws.note(f"{where}: relative dates left as they are: {why}")
            continue
        new_lines, rewrites, unresolved = dates.rewrite_lines(block, bases[0])
        for u in unresolved:
            ws.ask(f"{INDEX_NAME} line {start + u.line + 1}: “{u.phrase}”, written {bases[0].isoformat()}, {u.why}: "
                   "left as written; write the date it means")
        if rewrites:
            lines[start:end] = new_lines
            detail = "; ".join(f"{r.phrase} → {r.absolute}" for r in rewrites)
            ws.change(ChangeAction.DATED, INDEX_NAME,
                      f"relative dates of {where} made absolute from its rollouts' date {bases[0]}", detail)


def _groups(lines: list[str]) -> list[tuple[int, int]]:
    """(first, past-last) line of each task group block."""
    starts = [n for n, line in enumerate(lines) if _GROUP.match(line)]
    return list(zip(starts, [*starts[1:], len(lines)]))
