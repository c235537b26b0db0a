"""A store's small, hot state: when it was last consolidated and its failure backoff.

Kept as one JSON file so that the gate, which may run every few minutes over
hundreds of stores, can decide without reading the history.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from dream.store.records import DamagedRecord, load_json_record
from dream.store.layout import Layout
from dream.store.tree import atomic_write


@dataclass
class StoreState:
    last_consolidated_at: float | None = None  # epoch seconds of the last proposed/noop run
    failures: int = 0  # consecutive failed runs
    backoff_until: float | None = None  # epoch seconds; the gate stays closed until then, for `failed_engine`
    failed_engine: str | None = None  # the engine whose runs failed (None in a state written before it was kept)
    last_run_id: str | None = None
    last_status: str | None = None
    last_error: str | None = None  # why the last run failed and what the next one does: status shows it while backing off
    # Logs whose requests are offered again, as kept before `dream.store.ledger`: read once, when
    # the ledger is first made, then emptied.
    replay: list[str] = field(default_factory=list)
    # A dream in parts (the sessions did not fit one run): more sessions wait for the next part, which the gate
    # lets run as soon as no proposal is pending, whatever min_hours and min_sessions say.
    next_part: bool = False
    # The most sessions the next run takes (None: as many as fit): half of what a run took when it failed at a budget
    # or the model's window with nothing proposed, so the backoff never repeats the same doomed run; kept for every
    # part of a dream in parts, and cleared once no part is left.
    part_sessions: int | None = None


def load_state(layout: Layout) -> StoreState:
    """The store's state; a missing file means "never consolidated".

    A damaged file is an error, not a fresh start: reading it as "never
    consolidated" would reopen the gate and reset the failure backoff.
    """
    try:
        return load_json_record(layout.state, StoreState, "state file")
    except FileNotFoundError:
        return StoreState()
    except DamagedRecord as exc:
        raise DamagedRecord(f"{exc} (delete it to start afresh: the next run treats the store as never dreamed)") from None


def save_state(layout: Layout, state: StoreState) -> None:
    layout.dream.mkdir(parents=True, exist_ok=True)
    atomic_write(layout.state, (json.dumps(asdict(state), indent=2) + "\n").encode())


SHRINKING_FAILURES = ("budget_", "context")  # failure reasons a smaller part of the sessions can avoid


def shrinks_next_part(reason: str | None) -> bool:
    return reason is not None and reason.startswith(SHRINKING_FAILURES)


def backoff_seconds(failures: int, base_minutes: float, max_hours: float) -> float:
    """Doubling backoff after consecutive failures: base, 2*base, 4*base … capped."""
    if failures <= 0:
        return 0.0
    return min(base_minutes * 60 * 2 ** (failures - 1), max_hours * 3600)
