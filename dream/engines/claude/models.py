"""What dream knows of each Claude model, from the typed data file `models.toml`, checked on load.

A model's facts are its family's: context window, output limit, the thinking
configuration it takes, whether it takes the effort parameter, and its list
prices with any long-prompt tier. A model is matched by the longest name of
the table it starts with (``claude-haiku-4-5-20251001`` is ``claude-haiku-4-5``).
A model the table does not know (a gateway's) has no facts: dream then sends
what the settings say and plans for `DEFAULT_PROMPT_TOKENS`.
"""

from __future__ import annotations

import tomllib
from enum import StrEnum
from functools import cache
from importlib.resources import files
from typing import Annotated, Any

import msgspec
from msgspec import Meta

DATA_FILE = "models.toml"
DEFAULT_PROMPT_TOKENS = 200_000  # what dream plans for with a model the table does not know
MIN_THINKING_BUDGET = 1_024  # the API's least `budget_tokens` of manual extended thinking


class Thinking(StrEnum):
    """Which `thinking` configuration a model takes (the docs' thinking troubleshooting page)."""

    ALWAYS = "always"  # adaptive, cannot be turned off: `disabled` and manual `enabled` are 400
    ADAPTIVE = "adaptive"  # adaptive; `disabled` turns it off
    BETWEEN_TOOLS = "between_tools"  # adaptive; `disabled` is 400, `between_tools` turns it off
    MANUAL = "manual"  # manual extended thinking only (`enabled` with `budget_tokens`); `adaptive` is 400
    NONE = "none"  # no thinking: no `thinking` field is sent


Positive = Annotated[float, Meta(ge=0)]
Tokens = Annotated[int, Meta(ge=1_000)]


class LongPrompt(msgspec.Struct, forbid_unknown_fields=True):
    """A request whose prompt is over `above` tokens pays `factor` times the price of every token, output included."""

    above: Tokens
    factor: Annotated[float, Meta(gt=1)]


class Family(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    models: Annotated[list[str], Meta(min_length=1)]
    context_window: Tokens
    max_output: Tokens
    thinking: Thinking
    effort: bool
    input: Positive
    cache_write: Positive
    cache_read: Positive
    output: Positive
    long_prompt: LongPrompt | None = None

    @property
    def prompt_tokens(self) -> int:
        """The longest prompt dream plans for: where the price rises, else the whole window."""
        return self.long_prompt.above if self.long_prompt else self.context_window


@cache
def families() -> list[Family]:
    """The table, checked: a malformed entry fails loudly, naming the file and the field."""
    text = files("dream.engines.claude").joinpath(DATA_FILE).read_text("utf-8")
    try:
        table = msgspec.convert(tomllib.loads(text), dict[str, list[Family]])
    except (msgspec.ValidationError, tomllib.TOMLDecodeError) as err:
        raise ValueError(f"dream/engines/claude/{DATA_FILE}: {err}") from None
    return table["family"]


@cache
def _by_name() -> dict[str, Family]:
    named: dict[str, Family] = {}
    for family in families():
        for name in family.models:
            if name in named:
                raise ValueError(f"dream/engines/claude/{DATA_FILE}: {name!r} is in two families")
            named[name] = family
    return named


def longest_match(model: str, names: Any) -> str | None:
    """The longest name in `names` that is `model` or a prefix of it ending before a `-` or `[`."""
    matching = [n for n in names if model == n or model.startswith(n + "-") or model.startswith(n + "[")]
    return max(matching, key=len, default=None)


def facts_for(model: str) -> Family | None:
    """The facts of `model`'s family, or None for a model the table does not know."""
    name = longest_match(model, _by_name())
    return None if name is None else _by_name()[name]


def thinking_param(model: str, wanted: str, max_tokens: int, allowance: int) -> dict[str, Any] | None:
    """The `thinking` field for `model` when the settings ask for `wanted` (adaptive, disabled or none).

    Each model gets the form it takes, so no request is a 400: manual extended
    thinking with a budget for a model without adaptive thinking, no field for
    one that cannot stop thinking when asked to stop (it thinks anyway), and
    `between_tools` for one that takes it instead of `disabled`.
    """
    facts = facts_for(model)
    kind = facts.thinking if facts else None
    if wanted == "none" or kind is Thinking.NONE:
        return None
    if wanted == "disabled":
        if kind is Thinking.ALWAYS:
            return None
        return {"type": "between_tools"} if kind is Thinking.BETWEEN_TOOLS else {"type": "disabled"}
    if kind is Thinking.MANUAL:
        budget = min(allowance, max_tokens - 1)
        return {"type": "enabled", "budget_tokens": budget} if budget >= MIN_THINKING_BUDGET else None
    return {"type": "adaptive", "display": "omitted"}  # its text is of no use to dream


def takes_effort(model: str) -> bool:
    """Whether `output_config.effort` may be sent (a model the table does not know: as the settings say)."""
    facts = facts_for(model)
    return facts is None or facts.effort


def max_output_for(model: str) -> int | None:
    facts = facts_for(model)
    return None if facts is None else facts.max_output
