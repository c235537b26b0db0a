"""The run's budgets, and the limits derived from the store and the signal.

A run **fails** on two budgets only, unless the user sets more:

- `max_cost_usd`, the hard ceiling in dollars, estimated from the reported
  usage at the model's price (`pricing.py`); thinking is output and so is
  in it, and so is every token of a reply whose stream broke;
- `timeout_seconds`, the wall clock.

`max_turns`, `max_input_tokens` and `max_output_tokens` bind only when the
user sets them. What a run needs otherwise is derived (`Limits`): the
`max_tokens` of a request from the largest memory file and the thinking a
turn takes, with one retry at twice that when a reply is cut off; and how much
of each part of the first message may take, from the model's prompt limit (`Room`).

The model is told what is left after every batch of calls (`left`); past
`SOFT_SHARE` of any budget it is asked to finish. A run stopped at a budget
proposes what it staged (agent.py), marked partial.

One `Budget` lives for a whole run, across the consolidating pass and the
corrective turn. It is checked after every reply that asks for another turn:
the reply's tokens are already spent, so a run can pass a budget by at most
one reply; it then stops before any of that reply's tool calls run. A reply
that ends the run (a `finish` call, or a text summary) is paid for, so its
calls run; any request after it is checked first.

"Input tokens" counts everything the model read: uncached input, cache
writes and cache reads.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from dream.config import Settings
from dream.engines.claude.paging import LONG_PROMPT_TOKENS, MAX_RESULT_CHARS, SESSION_PAGE_CHARS
from dream.engines.claude.models import max_output_for
from dream.engines.claude.pricing import estimate_cost, price_for, prompt_tokens_for
from dream.errors import BudgetExceeded
from dream.outcomes import Usage

# Shares of the model's prompt limit (its window, or where its price rises), in tokens as `tokens.py` counts them.
# The first request (system, tools, first message) takes at most FIRST_MESSAGE_SHARE; the rest is the
# conversation's: a segment grows by context.GROWTH, a turn's results and its reply (thinking included).
FIRST_MESSAGE_SHARE = 0.5
SESSIONS_SHARE = 0.3  # the sessions, in full and as digests together; sessions past it wait for the next part
FILES_SHARE = 0.1  # the small topic files shown in full (within prompts.MAX_FILES_CHARS_SHOWN)
LISTING_SHARE = 0.03  # the listing of the memory files; the rest is one `view` away
INDEX_SHARE = 0.05  # the index shown (within prompts.MAX_INDEX_CHARS_SHOWN)
LINT_SHARE = 0.02  # the claims the project no longer supports (dream lint)
SOFT_SHARE = 0.75  # of a budget: past it, the model is asked to finish
THINKING_ALLOWANCE = 8_000  # output tokens a turn may think before it writes (a heavy turn thinks about 6K)
MIN_TURN_TOKENS = 16_000
MAX_TURN_TOKENS = 64_000  # the first cap; the one retry doubles it (current models write up to 128K)
CHARS_PER_TOKEN = 3  # a low count (markdown is ~4): generous for a file a turn writes, cautious for a prompt


@dataclass(frozen=True)
class Limits:
    """What a run of this store needs per request."""

    max_tokens: int  # the `max_tokens` of every request
    retry_max_tokens: int  # of the one retry of a reply cut off by max_tokens

    @classmethod
    def for_store(cls, settings: Settings, largest_file_bytes: int) -> Limits:
        if settings.max_tokens_per_turn is not None:
            first = settings.max_tokens_per_turn
        else:
            first = min(MAX_TURN_TOKENS, max(MIN_TURN_TOKENS, THINKING_ALLOWANCE + largest_file_bytes // CHARS_PER_TOKEN))
        ceiling = max_output_for(settings.model) or 2 * first  # a request over the model's output limit is a 400
        return cls(min(first, ceiling), min(2 * first, ceiling))


@dataclass(frozen=True)
class Room:
    """What the first message may take: tokens (`tokens.estimate`) per part, and characters of sessions in full."""

    request: int  # the whole first request: system, tools and the first message
    sessions: int
    files: int
    listing: int
    index: int
    lint: int
    session_chars: int  # the `first_message_session_chars` setting

    @classmethod
    def for_settings(cls, settings: Settings) -> Room:
        limit = prompt_tokens_for(settings.model, settings.prices)
        return cls(int(limit * FIRST_MESSAGE_SHARE), int(limit * SESSIONS_SHARE), int(limit * FILES_SHARE),
                   int(limit * LISTING_SHARE), int(limit * INDEX_SHARE), int(limit * LINT_SHARE),
                   settings.first_message_session_chars)

    def scaled(self, factor: float) -> Room:
        """The same room, every part but the request's limit `factor` as large (a first message that did not fit)."""
        return Room(self.request, int(self.sessions * factor), int(self.files * factor), int(self.listing * factor),
                    int(self.index * factor), int(self.lint * factor), int(self.session_chars * factor))


def session_page_chars(settings: Settings) -> int:
    """A page of `read_session`: larger for a model with a 1M-token prompt (paging.py says why)."""
    return SESSION_PAGE_CHARS if prompt_tokens_for(settings.model, settings.prices) >= LONG_PROMPT_TOKENS else MAX_RESULT_CHARS


@dataclass
class Budget:
    settings: Settings
    started: float = field(default_factory=time.monotonic)
    usage: Usage = field(default_factory=Usage)

    @property
    def input_total(self) -> int:
        u = self.usage
        return u.input_tokens + u.cache_read_tokens + u.cache_creation_tokens

    @property
    def priced(self) -> bool:
        return price_for(self.settings.model, self.settings.prices) is not None

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def remaining_seconds(self) -> float:
        return self.settings.timeout_seconds - self.elapsed()

    def record(self, reply_usage: Any, *, whole: bool = True) -> None:
        """Add one reply's usage (the API's `usage` object); `whole` is False for a stream that broke off."""
        reply = Usage(input_tokens=getattr(reply_usage, "input_tokens", None) or 0,
                      output_tokens=getattr(reply_usage, "output_tokens", None) or 0,
                      cache_read_tokens=getattr(reply_usage, "cache_read_input_tokens", None) or 0,
                      cache_creation_tokens=getattr(reply_usage, "cache_creation_input_tokens", None) or 0,
                      turns=1 if whole else 0)
        reply.cost_usd = estimate_cost(self.settings.model, reply, self.settings.prices)  # priced per request: tiers
        self.usage.add(reply)
        self.usage.cost_usd = round(self.usage.cost_usd, 6)

    def check(self, *, wants_more: bool) -> None:
        """Raise BudgetExceeded naming the first budget passed. `wants_more`: the reply asked for tools."""
        s = self.settings
        if self.usage.cost_usd > s.max_cost_usd:
            raise BudgetExceeded("cost", f"the run cost an estimated ${self.usage.cost_usd:.2f}, over "
                                         f"max_cost_usd={s.max_cost_usd:g}")
        if s.max_input_tokens is not None and self.input_total > s.max_input_tokens:
            raise BudgetExceeded(
                "input_tokens",
                f"the model read {self.input_total} input tokens, over max_input_tokens={s.max_input_tokens}",
            )
        if s.max_output_tokens is not None and self.usage.output_tokens > s.max_output_tokens:
            raise BudgetExceeded(
                "output_tokens",
                f"the model wrote {self.usage.output_tokens} output tokens, over max_output_tokens={s.max_output_tokens}",
            )
        if self.elapsed() > s.timeout_seconds:
            raise BudgetExceeded(
                "timeout", f"the run took {self.elapsed():.0f}s, over timeout_seconds={s.timeout_seconds:g}"
            )
        if wants_more and s.max_turns is not None and self.usage.turns >= s.max_turns:
            raise BudgetExceeded(
                "turns", f"the model still wanted tools after {self.usage.turns} turns (max_turns={s.max_turns})"
            )

    def left(self) -> str:
        """What the run has left, as the model is told after its calls; at a soft limit, the request to finish."""
        s = self.settings
        parts = [f"{max(0.0, s.timeout_seconds - self.elapsed()) / 60:.0f} min of {s.timeout_seconds / 60:.0f}"]
        if self.priced:
            parts.insert(0, f"${max(0.0, s.max_cost_usd - self.usage.cost_usd):.2f} of ${s.max_cost_usd:.2f}")
        if s.max_turns is not None:
            parts.append(f"{max(0, s.max_turns - self.usage.turns)} of {s.max_turns} turns")
        line = f"[budget left: {', '.join(parts)}]"
        if self.past_soft_limit():
            line += (" You are near the end of the budget: make your last edits now and call finish in the same"
                     " reply; list what you did not get to under \"Needs a person\". At the limit the run stops and"
                     " proposes what it has staged, and the sessions it did not read wait for the next run.")
        return line

    def past_soft_limit(self) -> bool:
        s = self.settings
        used = [self.elapsed() / s.timeout_seconds if s.timeout_seconds else 0.0]
        if self.priced and s.max_cost_usd:
            used.append(self.usage.cost_usd / s.max_cost_usd)
        if s.max_turns:
            used.append(self.usage.turns / s.max_turns)
        if s.max_input_tokens:
            used.append(self.input_total / s.max_input_tokens)
        if s.max_output_tokens:
            used.append(self.usage.output_tokens / s.max_output_tokens)
        return max(used) >= SOFT_SHARE

    def check_time_left(self) -> None:
        """Before a request: fail now rather than start a request the clock has no room for."""
        if self.remaining_seconds() <= 0:
            raise BudgetExceeded(
                "timeout", f"the run took {self.elapsed():.0f}s, over timeout_seconds={self.settings.timeout_seconds:g}"
            )
