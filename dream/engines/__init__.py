"""Engines do the consolidating. `select_engine` picks one by name."""

from __future__ import annotations

import os

from dream.engines.base import Change, Engine, EngineInput, EngineResult
from dream.errors import ConfigError

# Not deferred like the claude engine: every run's retention report imports offline.similarity,
# which loads the whole offline package anyway.
from dream.engines.offline import OfflineEngine

__all__ = ["Change", "Engine", "EngineInput", "EngineResult", "require_configured", "resolve_engine_name",
           "select_engine"]
API_KEY_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")


def resolve_engine_name(name: str) -> str:
    """`auto` means claude when an API key is set, offline otherwise."""
    if name == "auto":
        return "claude" if os.environ.get("ANTHROPIC_API_KEY") else "offline"
    return name


def require_configured(name: str) -> None:
    """Refuse an engine that cannot run here, before anything is gated, locked or recorded.

    A missing key is the user's configuration, not a failed run: it must not
    start the failure backoff, which would hold back every other engine too.
    """
    if name == "claude" and not any(os.environ.get(v) for v in API_KEY_VARIABLES):
        raise ConfigError("the claude engine needs ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) in the environment; "
                          "set it, or run with --engine offline")


def select_engine(name: str) -> Engine:
    name = resolve_engine_name(name)
    if name == "offline":
        return OfflineEngine()
    if name == "claude":
        from dream.engines.claude import ClaudeEngine  # start-up: the anthropic SDK, only for this engine

        return ClaudeEngine()
    raise ValueError(f"unknown engine {name!r}")
