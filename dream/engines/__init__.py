"""Engines do the consolidating. `select_engine` picks one by name."""

from __future__ import annotations

import os

from dream.engines.base import Change, Engine, EngineInput, EngineResult

# Not deferred like the claude engine: every run's retention report imports offline.similarity,
# which loads the whole offline package anyway.
from dream.engines.offline import OfflineEngine

__all__ = ["Change", "Engine", "EngineInput", "EngineResult", "resolve_engine_name", "select_engine"]


def resolve_engine_name(name: str) -> str:
    """`auto` means claude when an API key is set, offline otherwise."""
    if name == "auto":
        return "claude" if os.environ.get("ANTHROPIC_API_KEY") else "offline"
    return name


def select_engine(name: str) -> Engine:
    name = resolve_engine_name(name)
    if name == "offline":
        return OfflineEngine()
    if name == "claude":
        from dream.engines.claude import ClaudeEngine  # start-up: the anthropic SDK, only for this engine

        return ClaudeEngine()
    raise ValueError(f"unknown engine {name!r}")
