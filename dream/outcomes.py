"""Every way a run can end, with a name.

A run's `status` is one of `proposed`, `noop`, `skipped` or `failed`; skips
and failures also carry a `reason`. These strings are part of the JSON
output and the history, so they never change once released.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any


class Status(StrEnum):
    PROPOSED = "proposed"
    NOOP = "noop"
    SKIPPED = "skipped"
    FAILED = "failed"


class SkipReason(StrEnum):
    DISABLED = "disabled"
    HOURS = "hours"
    SESSIONS = "sessions"
    LOCK = "lock"
    BACKOFF = "backoff"
    BUDGET = "budget"  # the fleet's budget for the night was spent before this store's turn
    PART = "part"  # a dream in parts: the pending part waits for a person before the next part runs


class NoopReason(StrEnum):
    NO_SIGNAL = "no_signal"  # nothing changed since the last dream: no engine call
    NO_CHANGES = "no_changes"  # the engine ran and proposed nothing


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0
    turns: int = 0
    cost_usd: float = 0.0

    def add(self, other: "Usage") -> None:
        for key, value in asdict(other).items():
            setattr(self, key, getattr(self, key) + value)


@dataclass
class RunOutcome:
    status: Status
    engine: str | None = None
    reason: str | None = None
    proposal_id: str | None = None
    base_version: int | None = None
    changes: int = 0
    lines_added: int = 0  # in the proposal's diff
    lines_removed: int = 0
    sessions_read: int = 0
    run_id: str = ""
    duration_s: float = 0.0
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    redactions: int = 0
    accepted_version: int | None = None  # set when the auto_accept policy took the proposal
    needs_person: list[str] = field(default_factory=list)  # shown even when the run changed nothing

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["status"] = str(self.status)
        return data
