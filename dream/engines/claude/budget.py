"""The run's budgets: turns, total input and output tokens, and wall-clock time.

One `Budget` lives for a whole run, across the consolidating pass and the
corrective turn, so a correction cannot buy a run more than its budgets. It
is checked after every reply of the model: the reply's tokens are already
spent, so a run can pass a token budget by at most one reply; it then stops
before any of that reply's tool calls run.

"Input tokens" counts everything the model read: uncached input, cache
writes and cache reads, because each of them is context the model processed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from dream.config import Settings
from dream.engines.claude.pricing import estimate_cost
from dream.errors import BudgetExceeded
from dream.outcomes import Usage


@dataclass
class Budget:
    settings: Settings
    started: float = field(default_factory=time.monotonic)
    usage: Usage = field(default_factory=Usage)

    @property
    def input_total(self) -> int:
        u = self.usage
        return u.input_tokens + u.cache_read_tokens + u.cache_creation_tokens

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def remaining_seconds(self) -> float:
        return self.settings.timeout_seconds - self.elapsed()

    def record(self, reply_usage: Any) -> None:
        """Add one reply's usage (the API's `usage` object) and re-estimate the cost."""
        self.usage.turns += 1
        self.usage.input_tokens += reply_usage.input_tokens or 0
        self.usage.output_tokens += reply_usage.output_tokens or 0
        self.usage.cache_read_tokens += getattr(reply_usage, "cache_read_input_tokens", None) or 0
        self.usage.cache_creation_tokens += getattr(reply_usage, "cache_creation_input_tokens", None) or 0
        self.usage.cost_usd = estimate_cost(self.settings.model, self.usage)

    def check(self, *, wants_more: bool) -> None:
        """Raise BudgetExceeded naming the first budget passed. `wants_more`: the reply asked for tools."""
        s = self.settings
        if self.input_total > s.max_input_tokens:
            raise BudgetExceeded(
                "input_tokens",
                f"the model read {self.input_total} input tokens, over max_input_tokens={s.max_input_tokens}",
            )
        if self.usage.output_tokens > s.max_output_tokens:
            raise BudgetExceeded(
                "output_tokens",
                f"the model wrote {self.usage.output_tokens} output tokens, over max_output_tokens={s.max_output_tokens}",
            )
        if self.elapsed() > s.timeout_seconds:
            raise BudgetExceeded(
                "timeout", f"the run took {self.elapsed():.0f}s, over timeout_seconds={s.timeout_seconds:g}"
            )
        if wants_more and self.usage.turns >= s.max_turns:
            raise BudgetExceeded(
                "turns", f"the model still wanted tools after {self.usage.turns} turns (max_turns={s.max_turns})"
            )

    def check_time_left(self) -> None:
        """Before a request: fail now rather than start a request the clock has no room for."""
        if self.remaining_seconds() <= 0:
            raise BudgetExceeded(
                "timeout", f"the run took {self.elapsed():.0f}s, over timeout_seconds={self.settings.timeout_seconds:g}"
            )
