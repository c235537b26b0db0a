"""Context economy that never rewrites history: fresh conversation segments, and where the cache breakpoints go.

Current models think every turn, and a thinking block is bound to its
prefix: the system prompt, the tools and every message before it. When any of
that changes, the API rejects the request (400) or drops the block and every
later one (`thinking.block_binding.prefix_mismatch_behavior`; docs,
"Preserved thinking"). Clearing used tool results in place, as dream did, is
such a change. So nothing sent is ever edited. Instead, once a request and
its reply, as the API counted them (thinking included, shown or not), and the
results just returned pass the segment's opening by `GROWTH` tokens, the next
request starts a **new segment**:

- the same first message, byte for byte (its breakpoint is still cached);
- a digest of the segment that ends: every call the model made with what it
  came to (a path viewed, a page of a session read, an edit made or refused)
  and the model's own words, so it knows what it has done;
- the results of its last calls in full, which it has not seen yet.

A segment has no thinking block from an earlier one, so no block is ever
sent on a changed prefix. ``DREAM_CONTEXT_EDITING=off`` keeps one segment
for the whole run (for comparison).

**Breakpoints** (at most the API's four, `breakpoints`): the system prompt
(it caches the tools before it too), the first message, the last block of
the previous request and the last block of this one. The previous request's
end is where its cache entry was written, so it is read there exactly,
however many blocks the newest turn added: the 20-block lookback never has
to find it. With parallel calls a turn adds two blocks per call (tool_use and
tool_result), so ten calls put the previous entry 20+ blocks back, past the
lookback, and caching only the end of each request read 43% from the cache.
"""

from __future__ import annotations

import json
import os
from typing import Any

from dream.engines.claude import tokens

GROWTH = 60_000  # tokens a segment may grow past its opening (as the API reported them) before the next one starts
RESULT_CHARS_IN_DIGEST = 160  # of a result's first line, in the digest
TEXT_CHARS_IN_DIGEST = 400  # of each of the model's own text blocks, in the digest
MODE_VARIABLE = "DREAM_CONTEXT_EDITING"  # segments (default) | off
CACHE = {"type": "ephemeral"}
_NOT_DIGESTED = ("[A new conversation", "[budget left")  # a segment's opening, and the budget line after each turn


def mode_for() -> str:
    chosen = os.environ.get(MODE_VARIABLE, "").strip().lower()
    return "off" if chosen == "off" else "segments"


def context_size(usage: Any) -> int:
    """What a request and its reply take in the context, as the API counted them (thinking included)."""
    return sum(getattr(usage, k, None) or 0 for k in
               ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens"))


def open_segment(first: dict[str, Any], done: list[str], unseen: dict[str, Any], calls: dict[str, str]) -> dict[str, Any]:
    """The user message that opens the next segment: `first`, the digest `done`, the unseen results.

    `unseen` is the ending segment's last message: the results of the model's
    last calls. `calls` names each tool_use id's call as the digest shows it.
    """
    lines = ["[A new conversation segment: the earlier turns of tonight's dream were summed up to keep the "
             "context small. What you did so far, in order:]", *done,
             "[The files in /memories are as your edits left them; view a file again for its text. "
             "The results of your last calls follow; you have not seen them yet.]"]
    blocks = [dict(first["content"][0]), {"type": "text", "text": "\n".join(lines)}]
    for block in unseen["content"] if isinstance(unseen.get("content"), list) else []:
        if block.get("type") == "tool_result":
            refused = " (refused)" if block.get("is_error") else ""
            blocks.append({"type": "text", "text": f"Result of {calls.get(block['tool_use_id'], 'a call')}{refused}:"
                                                   f"\n{_result_text(block)}"})
        elif block.get("type") == "text":
            blocks.append(dict(block))
    return {"role": "user", "content": blocks}


def digest_lines(message: dict[str, Any], calls: dict[str, str]) -> list[str]:
    """One message of an ending segment in digest lines: the model's words, each call and what it came to."""
    lines = []
    content = message["content"] if isinstance(message.get("content"), list) else []
    for block in content:
        kind = block.get("type")
        if message["role"] == "assistant" and kind == "text" and block["text"].strip():
            lines.append(f"- you wrote: {_short(block['text'], TEXT_CHARS_IN_DIGEST)}")
        elif kind == "tool_result":
            outcome = "refused: " if block.get("is_error") else "→ "
            lines.append(f"- {calls.get(block['tool_use_id'], 'a call')} {outcome}"
                         f"{_short(_result_text(block), RESULT_CHARS_IN_DIGEST)}")
        elif message["role"] == "user" and kind == "text" and not block["text"].startswith(_NOT_DIGESTED):
            lines.append(f"- dream told you: {_short(block['text'], TEXT_CHARS_IN_DIGEST)}")
    return lines


def describe_call(name: str, args: Any) -> str:
    """`memory view /memories/x.md`, `read_session s01 start=38`: a call in a line."""
    if not isinstance(args, dict):
        return name
    if name == "memory":
        paths = " → ".join(str(args[k]) for k in ("path", "old_path", "new_path") if k in args)
        return f"memory {args.get('command', '?')} {paths}".strip()
    shown = " ".join(f"{k}={v}" for k, v in args.items() if k not in ("file_text", "new_str", "old_str"))
    return f"{name} {shown}".strip()


def breakpoints(system: list[dict[str, Any]], messages: list[dict[str, Any]], previous_end: int | None) -> None:
    """Mark the request's cache breakpoints in place (see the module's docstring); none elsewhere.

    `previous_end` is the number of messages the previous request of this
    segment sent; its last block is where that request's entry was written.
    """
    for block in (b for m in messages if isinstance(m.get("content"), list) for b in m["content"]):
        block.pop("cache_control", None)
    system[-1]["cache_control"] = CACHE
    marks = [(0, 0), (len(messages) - 1, -1)]
    if previous_end is not None and 0 < previous_end < len(messages):
        marks.append((previous_end - 1, -1))
    for i, j in marks:
        if isinstance(messages[i].get("content"), list) and messages[i]["content"]:
            block = messages[i]["content"][j]
            if block.get("type") not in ("thinking", "redacted_thinking"):  # these take no cache_control
                block["cache_control"] = CACHE


def _result_text(block: dict[str, Any]) -> str:
    content = block.get("content", "")
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict))
    return content if isinstance(content, str) else json.dumps(content)


def _short(value: str, limit: int) -> str:
    flat = " ".join(value.split())
    return flat if len(flat) <= limit else flat[:limit] + "…"


def estimate_tokens(value: Any) -> int:
    return tokens.estimate(json.dumps(value, ensure_ascii=False, default=str))
