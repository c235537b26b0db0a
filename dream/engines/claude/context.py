"""Context economy: tool results the model has used leave the conversation.

Without it every turn resends every file and session read so far, and a
mid-size dream reads millions of tokens (bench/bench_claude_context.py).
One policy (`Policy`), two places to apply it:

- **client** (the default): the history is edited here before each
  request. Once it passes `trigger` tokens (characters / 4), every tool
  result the model has already seen is replaced by a placeholder, but only
  when at least `at_least` tokens go. A placeholder keeps its bytes from then
  on, so the prefix up to the newest results stays cached until the next
  clearing, a few turns later. Any Anthropic-compatible endpoint serves it.
  The newest placeholder carries a cache breakpoint (`_place_breakpoint`):
  the next clearing changes nothing before it, so that clearing reads the
  whole cleared history from the cache and rewrites only what came after,
  instead of falling back to the first message and rewriting it all.
- **server** (``DREAM_CONTEXT_EDITING=server``): the API's context editing,
  ``clear_tool_uses_20250919`` with the beta ``context-management-2025-06-27``.
  The server clears statelessly on every request past the trigger, so the
  boundary moves each turn and the cache breaks each turn: on the reference
  store it read 56% from the cache against 72% for the client side, and cost
  more. An endpoint that refuses the beta switches the run to the client
  side (`is_unsupported`).
- **off** (``DREAM_CONTEXT_EDITING=off``): nothing is cleared; for comparison.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

import anthropic

BETA = "context-management-2025-06-27"
EDIT = "clear_tool_uses_20250919"
PLACEHOLDER = "[this tool result was cleared to save context; call the tool again if you still need it]"


@dataclass(frozen=True)
class Policy:
    """When to clear, in tokens; bench/bench_claude_context.py measured these on the reference store."""

    trigger: int = 40_000  # clear once the history is this long (peak context stays near it)
    keep: int = 0  # recent tool results that stay even so (see CLIENT and SERVER)
    at_least: int = 25_000  # and only if this much goes: the cache breaks every few turns, not every turn


# Client side, the history is cleared before the newest results are added, so every result it loses
# has been seen (used) by the model. The server clears after they are added: it keeps a turn's worth.
CLIENT = Policy()
SERVER = Policy(keep=6)


MODE_VARIABLE = "DREAM_CONTEXT_EDITING"  # server | client | off: overrides the choice by host


def mode_for() -> str:
    """``client`` unless the environment asks for ``server`` or ``off``."""
    chosen = os.environ.get(MODE_VARIABLE, "").strip().lower()
    return chosen if chosen in ("server", "client", "off") else "client"


def server_param(policy: Policy = SERVER) -> dict[str, Any]:
    """The ``context_management`` request field for the server mode."""
    return {
        "edits": [
            {
                "type": EDIT,
                "trigger": {"type": "input_tokens", "value": policy.trigger},
                "keep": {"type": "tool_uses", "value": policy.keep},
                "clear_at_least": {"type": "input_tokens", "value": policy.at_least},
            }
        ]
    }


def is_unsupported(err: anthropic.APIStatusError) -> bool:
    """A 400 that refuses the context-management field or beta: the endpoint lacks it."""
    text = str(err.message if isinstance(err.message, str) else err).lower()
    return err.status_code == 400 and ("context_management" in text or BETA in text)


def clear_client_side(messages: list[Any], policy: Policy = CLIENT) -> list[Any]:
    """`messages` with the oldest tool results replaced by a placeholder, as the server edit would.

    A result once cleared stays cleared with the same bytes, so the prefix up
    to it stays cacheable.
    """
    victims = _victims(messages, policy)
    marked = _marked(messages)
    if not victims and len(marked) <= 1:
        return messages
    out = [dict(m, content=list(m["content"])) if isinstance(m.get("content"), list) else m for m in messages]
    for i, j in victims:
        out[i]["content"][j] = {**out[i]["content"][j], "content": PLACEHOLDER}
    return _place_breakpoint(out, marked, victims[-1] if victims else None)


def _victims(messages: list[Any], policy: Policy) -> list[tuple[int, int]]:
    """The tool results to clear now: none under the trigger, or when too little would go."""
    if estimate_tokens(messages) <= policy.trigger:
        return []
    live = [(i, j) for i, m in enumerate(messages) if m.get("role") == "user" and isinstance(m.get("content"), list)
            for j, b in enumerate(m["content"]) if _is_live_result(b)]
    victims = live[: max(0, len(live) - policy.keep)]
    freed = sum(estimate_tokens(messages[i]["content"][j].get("content", "")) for i, j in victims)
    return victims if freed >= policy.at_least else []


def _marked(messages: list[Any]) -> list[tuple[int, int]]:
    """Where the history carries a cache breakpoint: the first message, then the newest placeholder."""
    return [(i, j) for i, m in enumerate(messages) if m.get("role") == "user" and isinstance(m.get("content"), list)
            for j, b in enumerate(m["content"]) if isinstance(b, dict) and b.get("cache_control")]


def _place_breakpoint(out: list[Any], marked: list[tuple[int, int]], boundary: tuple[int, int] | None) -> list[Any]:
    """One breakpoint in the history, on the newest placeholder; two on the request that clears.

    The request that clears reads up to the last breakpoint (nothing before it
    changed) and writes one at the new boundary for the next clearing. With
    the system prompt's and the runner's own on the last block, a request
    never carries more than the API's four.
    """
    keep = set(marked[-1:])
    if boundary is not None:
        keep.add(boundary)
        out[boundary[0]]["content"][boundary[1]] = {**out[boundary[0]]["content"][boundary[1]],
                                                    "cache_control": {"type": "ephemeral"}}
    for i, j in marked:
        if (i, j) not in keep:
            out[i]["content"][j] = {k: v for k, v in out[i]["content"][j].items() if k != "cache_control"}
    return out


def _is_live_result(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "tool_result" and block.get("content") != PLACEHOLDER


def estimate_tokens(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, default=str)) // 4
