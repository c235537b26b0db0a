"""The gate: is a dream due for this store?

Cheap by design, since a scan may check hundreds of stores every few
minutes: it reads ``.dream/state.json`` and stats the activity logs, and
never reads the history. The checks run in a fixed
order and the first closed one names the reason:
``disabled`` → ``backoff`` → ``part`` → ``hours`` → ``sessions``. Only the last one
needs the logs, so they are listed only when it is reached, or when a
caller asks how many sessions are waiting (`dream status`): in a fleet
scan, most stores were dreamed within `min_hours` and cost one file read.

The sessions check counts the logs no run has read yet (new or changed
content, `dream.store.ledger`); logs a pending proposal holds wait for a
person, not for another run, so they are shown but not counted. The
backoff after failed runs holds back only the engine that failed. A dream
in parts (the Claude engine's sessions did not fit one run) runs its next
part as soon as no proposal is pending, whatever the hours and sessions say. A last
dream dated in the future (a clock that was wrong) is not trusted: the
hours check passes, with a warning, and the next run records a true time.

`dream run` imports a store's configured transcripts first and then gates
on what came; `preview_gate` is that decision seen from outside a run
(`dream status`, the fleet scan of `dream run --all` and Prefect), so
what status says is what a run does.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cache

from dream.config import Settings
from dream.errors import BadInput
from dream.outcomes import SkipReason
from dream.store.layout import Layout
from dream.store.ledger import Ledger, held, ledger_for, unread
from dream.store.sessions import SessionFile, scan_sessions
from dream.store.state import StoreState, load_state

FORCE_HINT = "`dream run --force` runs now"
NO_LOGS_HINT = ("no session logs in logs/ yet: `dream import --from claude-code` (or `--from codex`) brings the "
                "agent's transcripts in; `dream run --force` tidies the memory files alone")


@dataclass(frozen=True)
class Waiting:
    new: int  # logs no run has read, as they are now
    held: int  # logs a pending proposal read, waiting for a person
    logs: int  # every log in logs/

    @property
    def total(self) -> int:
        return self.new + self.held


@dataclass
class GateDecision:
    open: bool
    reason: SkipReason | None
    message: str
    hours_since: float | None  # None: never consolidated (or a date in the future, not trusted)
    count_waiting: Callable[[], Waiting] = field(repr=False, compare=False)  # counted once, when first asked
    warnings: list[str] = field(default_factory=list)
    to_import: int = 0  # transcripts the run's import would read first (`preview_gate` only)

    @property
    def sessions_waiting(self) -> int:
        """Sessions whose requests no person has decided on: new ones and those in a pending proposal."""
        return self.count_waiting().total

    @property
    def sessions_new(self) -> int:
        """Sessions no run has read yet: what the gate counts."""
        return self.count_waiting().new

    def to_json(self) -> dict:
        waiting = self.count_waiting()
        return {
            "open": self.open,
            "reason": None if self.reason is None else str(self.reason),
            "message": self.message,
            "hours_since_last": None if self.hours_since is None else round(self.hours_since, 2),
            "sessions_waiting": waiting.total,
            "sessions_new": waiting.new,
            "sessions_in_proposals": waiting.held,
            "transcripts_to_import": self.to_import,
            "warnings": self.warnings,
        }


def check_gate(layout: Layout, settings: Settings, *, force: bool = False,
               now: float | None = None, state: StoreState | None = None,
               engine: str | None = None) -> GateDecision:
    """Whether a run of `engine` (default: the configured one) is due now."""
    now = time.time() if now is None else now
    state = state or load_state(layout)
    hours, warnings = hours_since_last(state, now)

    @cache
    def count_waiting() -> Waiting:
        logs = scan_sessions(layout.root, logs_path=settings.imported_logs_path)
        ledger = store_ledger(layout, state, logs)
        fresh = unread(logs, ledger)
        kept = len(held(fresh, ledger))
        return Waiting(new=len(fresh) - kept, held=kept, logs=len(logs))

    def closed(reason: SkipReason, message: str) -> GateDecision:
        return GateDecision(False, reason, message, hours, count_waiting, warnings)

    if not settings.enabled:
        return closed(SkipReason.DISABLED, "dreaming is disabled for this store (enabled = false)")
    if not force:
        if state.backoff_until and now < state.backoff_until and _backs_off(state, engine or settings.engine):
            left = (state.backoff_until - now) / 60
            which = f"{state.failed_engine} " if state.failed_engine else ""
            why = f" (the last: {state.last_error})" if state.last_error else ""
            return closed(SkipReason.BACKOFF, f"backing off after {state.failures} failed {which}run(s){why}, "
                                              f"{left:.0f} min left; {FORCE_HINT}")
        if state.next_part:  # a dream in parts: the next part runs once no part waits for a person
            return _next_part(count_waiting(), hours, count_waiting, warnings)
        if hours is not None and hours < settings.min_hours:
            return closed(SkipReason.HOURS, f"{hours:.1f} h since the last dream, min_hours is {settings.min_hours:g}; "
                                            f"{FORCE_HINT}")
        waiting = count_waiting()
        if waiting.new < settings.min_sessions:
            return closed(SkipReason.SESSIONS, sessions_message(waiting, settings.min_sessions))
    return GateDecision(True, None, "forced" if force else "due", hours, count_waiting, warnings)


def _next_part(waiting: Waiting, hours: float | None, count_waiting: Callable[[], Waiting],
               warnings: list[str]) -> GateDecision:
    if waiting.held:
        message = (f"a dream in parts: the pending proposal ({waiting.held} session(s)) waits for a person; the next "
                   f"part ({waiting.new} session(s)) runs once it is decided; {FORCE_HINT}")
        return GateDecision(False, SkipReason.PART, message, hours, count_waiting, warnings)
    return GateDecision(True, None, f"the next part of a dream in parts ({waiting.new} session(s) wait)", hours,
                        count_waiting, warnings)


def preview_gate(layout: Layout, settings: Settings, *, force: bool = False, now: float | None = None,
                 state: StoreState | None = None) -> GateDecision:
    """The gate `dream run` will meet, counting the transcripts its import reads first.

    Stat only: each transcript new or changed since the last import counts as
    one session more. Raises `BadInput` when the configured transcripts cannot
    be found, as the run's import would.
    """
    decision = check_gate(layout, settings, force=force, now=now, state=state)
    source = settings.transcripts
    if decision.reason != SkipReason.SESSIONS or source is None:
        return decision
    from dream.transcripts.importer import changed_since_import, resolve_source_path  # start-up: readers, patterns

    changed = changed_since_import(layout.root, source, resolve_source_path(layout.root, source, None, settings),
                                   settings)
    new = decision.sessions_new
    counted = f"{changed} {source} transcript(s) changed since the last import"
    if new + changed >= settings.min_sessions:
        return replace(decision, open=True, reason=None, to_import=changed,
                       message=f"{counted}: `dream run` imports them, then dreams")
    return replace(decision, to_import=changed,
                   message=f"{new} new session(s) and {counted}, min_sessions is {settings.min_sessions:g}; "
                           "`dream run --force` imports them and runs now")


def store_ledger(layout: Layout, state: StoreState, logs: list[SessionFile]) -> Ledger:
    """The store's ledger (`dream.store.ledger`), holding only for proposals still pending.

    The logs of a proposal that is no longer pending (superseded by a run
    that failed to read them, or closed by a crash before its logs were
    settled) are nobody's: read again. An old store's pending proposals
    keep their logs.
    """
    def pending_logs() -> dict[str, list[str]]:
        from dream.versions.proposals import Proposals  # start-up: only an old store without a ledger needs it

        return Proposals(layout).pending_logs()

    ledger = ledger_for(layout, state, logs, pending_logs)
    holders = {entry.proposal for entry in ledger.values() if entry.proposal is not None}
    if not holders:
        return ledger
    from dream.versions.proposals import PENDING, Proposals  # start-up: only a store with a proposal needs it

    proposals = Proposals(layout)
    gone = {pid for pid in holders if not _is_pending(proposals, pid, PENDING)}
    return {rel: entry for rel, entry in ledger.items() if entry.proposal not in gone}


def _is_pending(proposals, proposal_id: str, pending: str) -> bool:
    try:
        return proposals.get(proposal_id).status == pending
    except BadInput:  # removed by gc, or damaged: it holds nothing
        return False


def _backs_off(state: StoreState, engine: str) -> bool:
    """Whether the backoff holds back `engine`: only the engine that failed (any, for an old state)."""
    if state.failed_engine is None:
        return True
    from dream.engines.configured import resolve_engine_name  # start-up: loads polars; only a backoff needs it

    return resolve_engine_name(engine) == state.failed_engine


def sessions_message(waiting: Waiting, min_sessions: int) -> str:
    if waiting.logs == 0:
        return NO_LOGS_HINT
    held_part = f" ({waiting.held} more wait in a pending proposal)" if waiting.held else ""
    return (f"{waiting.new} new session(s) since the last dream{held_part}, min_sessions is {min_sessions}; "
            f"{FORCE_HINT}")


def hours_since_last(state: StoreState, now: float) -> tuple[float | None, list[str]]:
    """Hours since the last dream, and a warning when its recorded time lies in the future."""
    since = state.last_consolidated_at
    if since is None:
        return None, []
    if since > now + 60:  # a minute of slack for clocks a little apart
        stamp = datetime.fromtimestamp(since).isoformat(timespec="seconds")
        return None, [f"the last dream is recorded at {stamp}, {(since - now) / 3600:.0f} h in the future "
                      f"(a clock was wrong); it is not counted, and this run records the time now"]
    return max(0.0, (now - since) / 3600), []
