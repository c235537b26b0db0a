"""The size cap of one tool result, shared by every tool the agent has.

A result that would pass `MAX_RESULT_CHARS` stops at a whole line and the
tool says where to continue (``start=…`` or ``view_range``), so a single call
can never flood the model's context; bench/bench_claude_context.py sized it.
"""

from __future__ import annotations

MAX_RESULT_CHARS = 12_000  # about 3K tokens
# For a model with a 1M-token prompt, a page of a session is larger: every page is a call, and every few calls
# cost a turn of thinking and a re-read of the whole conversation (bench/bench_claude_context.py, digests rows).
# A model with a 200K window keeps the smaller page: ten of these in one turn would not fit beside the rest.
SESSION_PAGE_CHARS = 32_000  # about 8K tokens
LONG_PROMPT_TOKENS = 1_000_000


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
