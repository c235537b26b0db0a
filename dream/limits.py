"""Limits shared by every worker of a fleet: model calls gated by Prefect, and a budget for the night.

Model calls: when the settings name a Prefect global concurrency limit
(`model_concurrency_limit`) or rate limit (`model_rate_limit`), every model
request of the Claude engine takes a slot of it first, so N stores on M
workers never send more requests at once (or per second) than the limit
allows, whatever the number of stores. The slot is held from before the
request until its reply has been read (the engine's one model-call site),
and released when the call fails.

The budget: a fleet run with `fleet_budget_tokens` or `fleet_budget_usd`
charges each dreamed store's usage to a `Ledger`, and a store that would
start once the ledger has reached the budget is skipped with reason
``budget``. The next night's fleet dreams those stores first
(`dream.pipeline.fleet`). The ledger is local to a process for
`dream run --all`, and a Prefect global concurrency limit used as a counter
when the shards of one fleet run share it from several machines.

Prefect is imported only when a limit is named: a store without one pays nothing.
"""

from __future__ import annotations

import os
import threading
from contextlib import AbstractContextManager, ExitStack, nullcontext
from dataclasses import dataclass
from typing import Any, Protocol

from dream.errors import ConfigError


# ---------------------------------------------------------------- model calls


def model_call_slot(settings: Any) -> AbstractContextManager:
    """The slots one model call must hold: the named concurrency limit and rate limit, if any."""
    concurrency_name = getattr(settings, "model_concurrency_limit", None)
    rate_name = getattr(settings, "model_rate_limit", None)
    if not concurrency_name and not rate_name:
        return nullcontext()
    _require_prefect_api(str(concurrency_name or rate_name))
    stack = ExitStack()
    if rate_name:
        from prefect.concurrency.sync import rate_limit  # start-up: Prefect takes ~1 s to import; only named limits need it

        rate_limit(rate_name, occupy=1, strict=True)  # returns once the rate allows one more call
    if concurrency_name:
        from prefect.concurrency.sync import concurrency  # start-up: as above

        stack.enter_context(concurrency(concurrency_name, occupy=1, strict=True))
    return stack


def _require_prefect_api(name: str) -> None:
    """A named limit lives on a Prefect server: without one, say so rather than start a temporary server."""
    from prefect.settings import PREFECT_API_URL  # start-up: as above

    if not (PREFECT_API_URL.value() or os.environ.get("PREFECT_API_URL")):
        raise ConfigError(f"the model call limit {name!r} is a Prefect limit, but PREFECT_API_URL is not set; "
                          "set it to the server that holds the limit, or remove the setting")


# ---------------------------------------------------------------- the fleet's budget


@dataclass(frozen=True)
class Budget:
    """What one night of a fleet may spend: tokens or dollars (whichever is set; tokens first)."""

    tokens: int | None = None
    usd: float | None = None

    @classmethod
    def from_settings(cls, settings: Any) -> Budget | None:
        budget = cls(settings.fleet_budget_tokens, settings.fleet_budget_usd)
        return budget if budget.tokens is not None or budget.usd is not None else None

    @property
    def unit(self) -> str:
        return "tokens" if self.tokens is not None else "usd"

    @property
    def limit(self) -> float:
        return float(self.tokens if self.tokens is not None else self.usd or 0)

    def cost(self, usage: dict) -> float:
        """A run's spend in this budget's unit, from its outcome's usage."""
        if self.unit == "usd":
            return float(usage.get("cost_usd") or 0)
        return float(sum(usage.get(key) or 0 for key in
                         ("input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens")))

    def describe(self, spent: float) -> str:
        if self.unit == "usd":
            return f"the fleet's budget of ${self.limit:,.2f} for the night is spent (${spent:,.2f})"
        return f"the fleet's budget of {self.limit:,.0f} tokens for the night is spent ({spent:,.0f})"


class Ledger(Protocol):
    def spent(self) -> float: ...

    def charge(self, amount: float) -> None: ...


class LocalLedger:
    """The spend of one process's fleet run (`dream run --all`, or a fleet flow's own threads)."""

    def __init__(self) -> None:
        self._spent = 0.0
        self._lock = threading.Lock()

    def spent(self) -> float:
        with self._lock:
            return self._spent

    def charge(self, amount: float) -> None:
        with self._lock:
            self._spent += amount


@dataclass
class Spending:
    """A budget and the ledger it is charged to: what a fleet's dreamers share."""

    budget: Budget
    ledger: Ledger

    def spent_out(self) -> str | None:
        """Why no further store may start (the budget is reached), or None."""
        spent = self.ledger.spent()
        return self.budget.describe(spent) if spent >= self.budget.limit else None

    def charge(self, usage: dict) -> None:
        cost = self.budget.cost(usage)
        if cost > 0:
            self.ledger.charge(cost)
