"""Engines do the consolidating. `select_engine` picks one by name."""

from __future__ import annotations

import os

from dream.engines.base import Change, Engine, EngineInput, EngineResult

__all__ = ["Change", "Engine", "EngineInput", "EngineResult", "resolve_engine_name", "select_engine"]


def resolve_engine_name(name: str) -> str:
    """`auto` means claude when an API key is set, offline otherwise."""
    if name == "auto":
        return "claude" if os.environ.get("ANTHROPIC_API_KEY") else "offline"
    return name


def select_engine(name: str) -> Engine:
    name = resolve_engine_name(name)
    if name == "offline":
        from dream.engines.offline import OfflineEngine

        return OfflineEngine()
    if name == "claude":
        from dream.engines.claude import ClaudeEngine

        return ClaudeEngine()
    raise ValueError(f"unknown engine {name!r}")
