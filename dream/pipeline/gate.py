"""The gate: is a dream due for this store?

Cheap by design, since a scan may check hundreds of stores every few
minutes: it reads ``.dream/state.json`` and stats the activity logs, and
never reads a log or the history. The checks run in a fixed
order and the first closed one names the reason:
``disabled`` → ``backoff`` → ``hours`` → ``sessions``. Only the last one
needs the logs' stats, so they are taken only when it is reached, or when a
caller asks how many sessions are waiting (`dream status`): in a fleet
scan, most stores were dreamed within `min_hours` and cost one file read.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

from dream.config import Settings
from dream.outcomes import SkipReason
from dream.pipeline.sessions import scan_sessions
from dream.store.state import StoreState, load_state
from dream.store.layout import Layout


@dataclass
class GateDecision:
    open: bool
    reason: SkipReason | None
    message: str
    hours_since: float | None  # None: never consolidated
    count_waiting: Callable[[], int] = field(repr=False, compare=False)  # counted once, when first asked

    @property
    def sessions_waiting(self) -> int:
        """Sessions changed since the last dream, plus requests offered again."""
        return self.count_waiting()

    def to_json(self) -> dict:
        return {
            "open": self.open,
            "reason": None if self.reason is None else str(self.reason),
            "message": self.message,
            "hours_since_last": None if self.hours_since is None else round(self.hours_since, 2),
            "sessions_waiting": self.sessions_waiting,
        }


def check_gate(layout: Layout, settings: Settings, *, force: bool = False,
               now: float | None = None, state: StoreState | None = None) -> GateDecision:
    now = time.time() if now is None else now
    state = state or load_state(layout)
    since = state.last_consolidated_at
    hours = None if since is None else (now - since) / 3600

    @cache
    def count_waiting() -> int:
        return len(scan_sessions(layout.root, since=since)) + len(state.replay)  # replay: requests not accepted

    def closed(reason: SkipReason, message: str) -> GateDecision:
        return GateDecision(False, reason, message, hours, count_waiting)

    if not settings.enabled:
        return closed(SkipReason.DISABLED, "dreaming is disabled for this store (enabled = false)")
    if not force:
        if state.backoff_until and now < state.backoff_until:
            left = (state.backoff_until - now) / 60
            return closed(SkipReason.BACKOFF, f"backing off after {state.failures} failed run(s), {left:.0f} min left")
        if hours is not None and hours < settings.min_hours:
            return closed(SkipReason.HOURS, f"{hours:.1f} h since the last dream, min_hours is {settings.min_hours:g}")
        waiting = count_waiting()
        if waiting < settings.min_sessions:
            return closed(SkipReason.SESSIONS, f"{waiting} session(s) changed since the last dream, min_sessions is {settings.min_sessions}")
    return GateDecision(True, None, "forced" if force else "due", hours, count_waiting)
