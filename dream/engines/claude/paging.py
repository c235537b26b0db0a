"""The size cap of one tool result, shared by every tool the agent has.

A result that would pass `MAX_RESULT_CHARS` stops at a whole line and the
tool says where to continue (``start=…`` or ``view_range``), so a single call
can never flood the model's context; bench/bench_claude_context.py sized it.
A first line longer than the cap is cut (a 350 KB one-line file must not
reach the model whole), saying how much was left out, and the page after it
starts at the next line; folder listings and the session list page the same way.
"""

from __future__ import annotations

MAX_RESULT_CHARS = 12_000  # about 3K tokens
# For a model with a 1M-token prompt, a page of a session is larger: every page is a call, and every few calls
# cost a turn of thinking and a re-read of the whole conversation (bench/bench_claude_context.py, digests rows).
# A model with a 200K window keeps the smaller page: ten of these in one turn would not fit beside the rest.
SESSION_PAGE_CHARS = 32_000  # about 8K tokens
LONG_PROMPT_TOKENS = 1_000_000


CUT_NOTE_CHARS = 120  # room for the note that ends a cut line
# The most any one result may hold, whatever the tool: the largest page and its header and pointer. Each tool
# pages below it; this catches one that would not (a new tool, a bug), so no result floods the context.
MAX_ANY_RESULT_CHARS = SESSION_PAGE_CHARS + 1_000


def capped(lines: list[str], limit: int = MAX_RESULT_CHARS) -> list[str]:
    """The leading lines that fit in `limit` characters; a first line alone over it is cut to fit (see `cut_line`)."""
    kept: list[str] = []
    size = 0
    for line in lines:
        size += len(line) + 1
        if size > limit:
            if not kept:
                kept.append(cut_line(line, limit))
            break
        kept.append(line)
    return kept


def cut_line(line: str, limit: int) -> str:
    """`line` cut to `limit` characters with the count of those left out: a line this long is never shown whole."""
    keep = max(0, limit - CUT_NOTE_CHARS)
    return line[:keep] + f" [… line cut here: {len(line) - keep:,} more characters not shown]"



def capped_result(result: object) -> object:
    """A tool's result held to `MAX_ANY_RESULT_CHARS`: a text over it is cut, saying so; other results as they are."""
    if isinstance(result, str) and len(result) > MAX_ANY_RESULT_CHARS:
        return cut_line(result, MAX_ANY_RESULT_CHARS)
    return result
