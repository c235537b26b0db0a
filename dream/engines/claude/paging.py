"""The size cap of one tool result, shared by every tool the agent has.

A result that would pass `MAX_RESULT_CHARS` stops at a whole line and the
tool says where to continue (``start=…`` or ``view_range``), so a single call
can never flood the model's context; bench/bench_claude_context.py sized it.
"""

from __future__ import annotations

MAX_RESULT_CHARS = 12_000  # about 3K tokens


def capped(lines: list[str], limit: int = MAX_RESULT_CHARS) -> list[str]:
    """The leading lines that fit in `limit` characters (always at least one)."""
    kept: list[str] = []
    size = 0
    for line in lines:
        size += len(line) + 1
        if kept and size > limit:
            break
        kept.append(line)
    return kept
