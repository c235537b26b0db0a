"""Context economy: tool results the model has used leave the conversation.

Without it every turn resends every file and session read so far, and a
mid-size dream reads millions of tokens (see bench/bench_claude_context.py).
Two ways to the same effect, one policy (`Policy`):

- **server**: the API's context editing (``clear_tool_uses_20250919``, beta
  ``context-management-2025-06-27``). The server replaces the oldest tool
  results with a placeholder once the prompt passes `trigger` tokens, keeping
  the last `keep` tool uses, and only when at least `at_least` tokens go, so
  the cache is broken rarely and for a real gain.
- **client**: the same edit made here on the history before each request,
  for Anthropic-compatible endpoints (a gateway, a local proxy) that lack the
  beta. Tokens are estimated as characters / 4.

The server mode is used against Anthropic's own API only; any other
``base_url`` gets the client mode (``DREAM_CONTEXT_EDITING=server|client``
overrides), and a server that refuses the beta switches the run to it
(`is_unsupported`).
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
ANTHROPIC_HOSTS = ("api.anthropic.com",)


@dataclass(frozen=True)
class Policy:
    """When to clear: sizes in tokens, measured by bench/bench_claude_context.py."""

    trigger: int = 24_000  # clear once the prompt is this long
    keep: int = 6  # the most recent tool uses stay (about one turn of reads)
    at_least: int = 8_000  # and only if this much goes, so the cache breaks rarely


POLICY = Policy()


MODE_VARIABLE = "DREAM_CONTEXT_EDITING"  # server | client: overrides the choice by host (a gateway that forwards betas)


def mode_for(client: anthropic.Anthropic) -> str:
    """``server`` against Anthropic's API, ``client`` against any other endpoint, unless the environment says."""
    chosen = os.environ.get(MODE_VARIABLE, "").strip().lower()
    if chosen in ("server", "client"):
        return chosen
    return "server" if client.base_url.host in ANTHROPIC_HOSTS else "client"


def server_param(policy: Policy = POLICY) -> dict[str, Any]:
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


def clear_client_side(messages: list[Any], policy: Policy = POLICY) -> list[Any]:
    """`messages` with the oldest tool results replaced by a placeholder, as the server edit would.

    A result once cleared stays cleared with the same bytes, so the prefix up
    to it stays cacheable.
    """
    if estimate_tokens(messages) <= policy.trigger:
        return messages
    live = [(i, j) for i, m in enumerate(messages) if m.get("role") == "user" and isinstance(m.get("content"), list)
            for j, b in enumerate(m["content"]) if _is_live_result(b)]
    victims = live[: max(0, len(live) - policy.keep)]
    freed = sum(estimate_tokens(messages[i]["content"][j].get("content", "")) for i, j in victims)
    if not victims or freed < policy.at_least:
        return messages
    out = [dict(m, content=list(m["content"])) if isinstance(m.get("content"), list) else m for m in messages]
    for i, j in victims:
        out[i]["content"][j] = {**out[i]["content"][j], "content": PLACEHOLDER}
    return out


def _is_live_result(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "tool_result" and block.get("content") != PLACEHOLDER


def estimate_tokens(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, default=str)) // 4
