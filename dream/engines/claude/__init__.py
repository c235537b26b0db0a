"""The `claude` engine: the four-phase dream done by a Claude model in a forked agent."""

from dream.engines.claude.agent import ClaudeEngine

__all__ = ["ClaudeEngine"]
