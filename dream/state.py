"""A store's small, hot state: when it was last consolidated and its failure backoff.

Kept as one JSON file so that the gate, which may run every few minutes over
hundreds of stores, can decide without opening the history database.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields

from .layout import Layout
from .tree import atomic_write


@dataclass
class StoreState:
    last_consolidated_at: float | None = None  # epoch seconds of the last proposed/noop run
    failures: int = 0  # consecutive failed runs
    backoff_until: float | None = None  # epoch seconds; the gate stays closed until then
    last_run_id: str | None = None
    last_status: str | None = None


def load_state(layout: Layout) -> StoreState:
    try:
        raw = json.loads(layout.state.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError, UnicodeDecodeError):
        # A missing or damaged state file only means "never consolidated".
        return StoreState()
    known = {f.name for f in fields(StoreState)}
    return StoreState(**{k: v for k, v in raw.items() if k in known})


def save_state(layout: Layout, state: StoreState) -> None:
    layout.dream.mkdir(parents=True, exist_ok=True)
    atomic_write(layout.state, (json.dumps(asdict(state), indent=2) + "\n").encode())


def backoff_seconds(failures: int, base_minutes: float, max_hours: float) -> float:
    """Doubling backoff after consecutive failures: base, 2*base, 4*base … capped."""
    if failures <= 0:
        return 0.0
    return min(base_minutes * 60 * 2 ** (failures - 1), max_hours * 3600)
