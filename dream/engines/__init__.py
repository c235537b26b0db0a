"""Engines do the consolidating. `select_engine` picks one by name."""

from __future__ import annotations

from dream.engines.base import Change, Engine, EngineInput, EngineResult
from dream.engines.configured import API_KEY_VARIABLES, require_configured, resolve_engine_name


__all__ = ["API_KEY_VARIABLES", "Change", "Engine", "EngineInput", "EngineResult", "require_configured",
           "resolve_engine_name", "select_engine"]


def select_engine(name: str) -> Engine:
    name = resolve_engine_name(name)
    if name == "offline":
        from dream.engines.offline import OfflineEngine  # start-up: `dream diff` needs offline.similarity only

        return OfflineEngine()
    if name == "claude":
        from dream.engines.claude import ClaudeEngine  # start-up: the anthropic SDK, only for this engine

        return ClaudeEngine()
    raise ValueError(f"unknown engine {name!r}")
