"""Estimated cost of a run, from the list prices of the model table (`models.toml`) and the user's `prices`.

Prices are US dollars per million tokens: uncached input, 5-minute cache
writes, cache reads and output. A request is priced on its own: a model
with a long-prompt tier (Haiku 5.5, over 100K) charges every token of a
request whose prompt passes it at the higher rate, output included. A model is priced by the longest name in the
table it starts with; the user's `prices` setting comes first and may price a
model the table does not know (a gateway's). A model priced nowhere is
`None`: its cost is not guessed (it shows as 0, and a dollar ceiling cannot
hold it, which `budget.py` says once). The figure is an estimate either way:
the bill is the authority.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from dream.engines.claude.models import DEFAULT_PROMPT_TOKENS, facts_for, families, longest_match
from dream.outcomes import Usage

CACHE_WRITE_FACTOR = 1.25  # the 5-minute write, when a user's price gives only input and output
CACHE_READ_FACTOR = 0.10


@dataclass(frozen=True)
class Price:
    input_per_mtok: float
    output_per_mtok: float
    cache_write_per_mtok: float
    cache_read_per_mtok: float


@cache
def table() -> dict[str, Price]:
    """Model name (or name prefix) -> its list price, from the shipped data file."""
    return {model: Price(f.input, f.output, f.cache_write, f.cache_read) for f in families() for model in f.models}


def price_for(model: str, overrides: dict[str, Any] | None = None) -> Price | None:
    """The price of `model`: the user's own first, then the longest matching name of the table."""
    for prices in (_user_prices(overrides or {}), table()):
        name = longest_match(model, prices)
        if name is not None:
            return prices[name]
    return None


def prompt_tokens_for(model: str, overrides: dict[str, Any] | None = None) -> int:
    """The longest prompt dream plans for with `model`: its window, or where its price rises.

    The user's `prompt_tokens` for it comes first (a local model's small window), then the model table's.
    """
    own = {name: int(v) for name, p in (overrides or {}).items() if (v := _given(p).get("prompt_tokens")) is not None}
    name = longest_match(model, own)
    if name is not None:
        return own[name]
    facts = facts_for(model)
    return DEFAULT_PROMPT_TOKENS if facts is None else facts.prompt_tokens


def _user_prices(overrides: dict[str, Any]) -> dict[str, Price]:
    out = {}
    for model, p in overrides.items():
        given = _given(p)
        write = given.get("cache_write")
        read = given.get("cache_read")
        out[model] = Price(given["input"], given["output"],
                           given["input"] * CACHE_WRITE_FACTOR if write is None else write,
                           given["input"] * CACHE_READ_FACTOR if read is None else read)
    return out


def _given(price: Any) -> dict[str, Any]:
    """A user's price as a dict: from the config (a `ModelPrice`) or as a plain mapping."""
    if isinstance(price, dict):
        return price
    return {k: getattr(price, k, None) for k in ("input", "output", "cache_write", "cache_read", "prompt_tokens")}


def estimate_cost(model: str, usage: Usage, overrides: dict[str, Any] | None = None) -> float:
    """Dollars for `usage` of one request on `model` (0.0 when nothing prices it); `input_tokens` excludes cached
    tokens. A run's cost is the sum over its requests: a long-prompt tier applies request by request."""
    price = price_for(model, overrides)
    if price is None:
        return 0.0
    dollars = (
        usage.input_tokens * price.input_per_mtok
        + usage.cache_creation_tokens * price.cache_write_per_mtok
        + usage.cache_read_tokens * price.cache_read_per_mtok
        + usage.output_tokens * price.output_per_mtok
    ) / 1_000_000
    return round(dollars * long_prompt_factor(model, usage, overrides), 6)


def long_prompt_factor(model: str, usage: Usage, overrides: dict[str, Any] | None = None) -> float:
    """How many times the list price a request with this `usage` pays: its model's tier when its prompt passes it.

    A user's own price for the model has no tier: it is taken as the price of every request.
    """
    facts = facts_for(model)
    if facts is None or facts.long_prompt is None or longest_match(model, overrides or {}) is not None:
        return 1.0
    prompt = usage.input_tokens + usage.cache_creation_tokens + usage.cache_read_tokens
    return facts.long_prompt.factor if prompt > facts.long_prompt.above else 1.0
