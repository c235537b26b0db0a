"""Estimated cost of a run, from the list prices in `prices.toml` (and the user's `prices` setting).

Prices are US dollars per million tokens: uncached input, 5-minute cache
writes, cache reads and output. A model is priced by the longest name in the
table it starts with; the user's `prices` setting comes first and may price a
model the table does not know (a gateway's). A model priced nowhere is
`None`: its cost is not guessed (it shows as 0, and a dollar ceiling cannot
hold it, which `budget.py` says once). The figure is an estimate either way:
the bill is the authority.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

from dream.outcomes import Usage

CACHE_WRITE_FACTOR = 1.25  # the 5-minute write, when a user's price gives only input and output
CACHE_READ_FACTOR = 0.10


@dataclass(frozen=True)
class Price:
    input_per_mtok: float
    output_per_mtok: float
    cache_write_per_mtok: float
    cache_read_per_mtok: float


DEFAULT_PROMPT_TOKENS = 200_000  # what dream plans for with a model the table does not know


@cache
def _families() -> list[dict[str, Any]]:
    return list(tomllib.loads(files("dream.engines.claude").joinpath("prices.toml").read_text("utf-8"))["family"])


@cache
def table() -> dict[str, Price]:
    """Model name (or name prefix) -> its list price, from the shipped data file."""
    return {model: Price(f["input"], f["output"], f["cache_write"], f["cache_read"])
            for f in _families() for model in f["models"]}


def price_for(model: str, overrides: dict[str, Any] | None = None) -> Price | None:
    """The price of `model`: the user's own first, then the longest matching name of the table."""
    for prices in (_user_prices(overrides or {}), table()):
        name = _longest_match(model, prices)
        if name is not None:
            return prices[name]
    return None


def prompt_tokens_for(model: str, overrides: dict[str, Any] | None = None) -> int:
    """The longest prompt dream plans for with `model`: its window, or where its price rises.

    The user's `prompt_tokens` for it comes first (a local model's small window), then prices.toml's.
    """
    own = {name: _given(p).get("prompt_tokens") for name, p in (overrides or {}).items()}
    table_limits = {name: f["prompt_tokens"] for f in _families() for name in f["models"]}
    for limits in ({n: v for n, v in own.items() if v is not None}, table_limits):
        name = _longest_match(model, limits)
        if name is not None:
            return int(limits[name])
    return DEFAULT_PROMPT_TOKENS


def _longest_match(model: str, names: dict[str, Any]) -> str | None:
    """The longest name in `names` that is `model` or a prefix of it ending before a `-` or `[`."""
    matching = [n for n in names if model == n or model.startswith(n + "-") or model.startswith(n + "[")]
    return max(matching, key=len, default=None)


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
    """Dollars for `usage` on `model` (0.0 when nothing prices it); `input_tokens` excludes cached tokens."""
    price = price_for(model, overrides)
    if price is None:
        return 0.0
    dollars = (
        usage.input_tokens * price.input_per_mtok
        + usage.cache_creation_tokens * price.cache_write_per_mtok
        + usage.cache_read_tokens * price.cache_read_per_mtok
        + usage.output_tokens * price.output_per_mtok
    ) / 1_000_000
    return round(dollars, 6)
