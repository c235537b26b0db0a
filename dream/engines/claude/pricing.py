"""Estimated cost of a run, from a small price table per model family.

Prices are US dollars per million tokens, as published for each family.
Cache writes (5-minute cache) cost 1.25 times the input price and cache reads
0.1 times. A model whose family is not in the table is priced as a Sonnet,
and the figure stays an estimate either way: the bill is the authority.
"""

from __future__ import annotations

from dataclasses import dataclass

from dream.outcomes import Usage

CACHE_WRITE_FACTOR = 1.25
CACHE_READ_FACTOR = 0.10


@dataclass(frozen=True)
class Price:
    input_per_mtok: float
    output_per_mtok: float


# Checked in order: the first prefix the model name starts with wins.
PRICES: list[tuple[str, Price]] = [
    ("claude-opus-4-1", Price(15.0, 75.0)),
    ("claude-opus-4-0", Price(15.0, 75.0)),
    ("claude-opus-4-2", Price(15.0, 75.0)),  # claude-opus-4-20250514
    ("claude-opus", Price(5.0, 25.0)),
    ("claude-sonnet", Price(3.0, 15.0)),
    ("claude-haiku-3", Price(0.8, 4.0)),
    ("claude-haiku", Price(1.0, 5.0)),
]
DEFAULT_PRICE = Price(3.0, 15.0)


def price_for(model: str) -> Price:
    for prefix, price in PRICES:
        if model.startswith(prefix):
            return price
    return DEFAULT_PRICE


def estimate_cost(model: str, usage: Usage) -> float:
    """Dollars for `usage` on `model`; `input_tokens` excludes cached tokens, as the API reports it."""
    price = price_for(model)
    per_input = price.input_per_mtok / 1_000_000
    dollars = (
        usage.input_tokens * per_input
        + usage.cache_creation_tokens * per_input * CACHE_WRITE_FACTOR
        + usage.cache_read_tokens * per_input * CACHE_READ_FACTOR
        + usage.output_tokens * price.output_per_mtok / 1_000_000
    )
    return round(dollars, 6)
