"""Many stores at once: find them, name them, and check their gates cheaply.

A scheduler that looks at every store every few minutes must not pay for a
dream run on each one. `scan_fleet` finds the stores under some roots and
asks each one's gate (state file and log stats only, see
`dream.pipeline.gate.preview_gate`, which `dream status` shows too) whether a
run is due; only the due ones are worth a run. A store that reads transcripts
and is short of sessions is due when its transcripts changed since the last
import (file stats again) could make up the difference.

`run_fleet` is the one fleet sequence, for `dream run --all` and the Prefect
`dream-fleet` flow alike: the same scan, then the due stores handed to a
`Dreamer`. The command line's dreamer is `dream_stores` in this process;
the flow's cuts the due stores into shards (`shards`) and hands each to a
Prefect work pool or a Dask cluster, where `dream_stores` does the work of
its shard. Every path ends in rows of one shape (`fleet_row`).

Each store is named by `dream.store.layout.store_slug`. Nothing here imports Prefect.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dream.config import load_settings
from dream.errors import DreamError, StoreNotFound
from dream.limits import Budget, LocalLedger, Spending
from dream.pipeline.gate import preview_gate
from dream.store.layout import Layout, store_slug
from dream.outcomes import SkipReason, Status
from dream.transcripts.discover import default_roots, discover_stores


@dataclass
class FleetEntry:
    """One store's answer to "is a dream due?"."""

    store: Path
    due: bool
    reason: str | None  # why not due: a SkipReason, or "error"
    message: str

    @property
    def slug(self) -> str:
        return store_slug(self.store)

    def to_json(self) -> dict:
        return {"store": str(self.store), "due": self.due,
                "reason": self.reason, "message": self.message}


def check_store(store: Path, *, force: bool = False, now: float | None = None,
                overrides: dict | None = None) -> FleetEntry:
    """The gate of one store; a store that cannot be read is reported, not raised.

    `store` is taken as found by `discover_stores` (absolute and resolved),
    so it is not resolved again: at a thousand stores every syscall shows.
    """
    try:
        if not store.is_dir():
            raise StoreNotFound(f"{store}: store folder does not exist")
        layout = Layout(store)
        settings = load_settings(layout.root, overrides)  # `dream run --all --min-hours 1` gates with that
        decision = preview_gate(layout, settings, force=force, now=now)
    except DreamError as exc:
        return FleetEntry(store, False, "error", str(exc))
    except Exception as exc:  # one unreadable store must not stop the scan of the others
        return FleetEntry(store, False, "error", f"{store}: {type(exc).__name__}: {exc}")
    reason = None if decision.reason is None else str(decision.reason)
    return FleetEntry(layout.root, decision.open, reason, decision.message)


def fleet_roots(extra: Iterable[str | Path] = ()) -> list[Path]:
    """Claude Code's projects folder and Codex's memory folder, then the extra roots the user named."""
    return [*default_roots(), *(Path(r).expanduser() for r in extra)]


def fleet_stores(extra_roots: Iterable[str | Path] = ()) -> list[Path]:
    """The stores the command line's `--all` covers (status, history, run alike), sorted by path."""
    return discover_stores(fleet_roots(extra_roots))


def scan_fleet(roots: Iterable[str | Path] | None = None, *, force: bool = False,
               now: float | None = None) -> list[FleetEntry]:
    """Every store under `roots` (default: Claude Code's projects) with its gate decision."""
    now = time.time() if now is None else now
    stores = discover_stores(None if roots is None else [Path(r) for r in roots])
    return [check_store(store, force=force, now=now) for store in stores]


# ---------------------------------------------------------------- dreaming a fleet

Row = dict[str, Any]
Dreamer = Callable[[list[Path]], list[Row]]  # dreams the due stores given; one row each, in their order


def fleet_row(store: str | Path, status: str, reason: str | None, message: str | None,
              proposal: str | None = None, changes: int = 0) -> Row:
    """One store's line in a fleet run: `dream run --all` and the Prefect `dream-fleet` table alike."""
    return {"store": str(store), "status": str(status), "reason": reason, "message": message,
            "proposal": proposal, "changes": changes}


def entry_row(entry: FleetEntry) -> Row:
    """The row of a store that was not dreamed: its gate was closed, or it could not be read."""
    status = Status.FAILED if entry.reason == "error" else Status.SKIPPED
    return fleet_row(entry.store, status, entry.reason, entry.message)


def outcome_row(store: str | Path, outcome: dict) -> Row:
    """The row of a dreamed store, from its outcome's JSON (`RunOutcome.to_json`)."""
    return fleet_row(store, outcome["status"], outcome.get("reason"), outcome.get("error"),
                     outcome.get("proposal_id"), outcome.get("changes") or 0)


def failed_row(store: str | Path, message: str) -> Row:
    return fleet_row(store, Status.FAILED, "error", message)


def run_fleet(stores: Iterable[Path], *, force: bool = False, overrides: dict | None = None,
              dreamer: Dreamer | None = None, on_row: Callable[[Row], None] | None = None,
              **local: Any) -> list[Row]:
    """Gate every store cheaply, hand the due ones to `dreamer`; one row per store, in the stores' order.

    A store whose gate is closed is not run at all (no lock, no history
    record). The due stores are handed over in turn order: the ones the last
    night's budget skipped first, then the others by path. Without a
    `dreamer` they are dreamed here, by `dream_stores` with `local`'s options
    (engine, max_concurrency, spending), and `on_row` hears each row as soon
    as it is known: the closed ones first, then the dreamed ones as they end.
    A dreamer's rows are heard when it returns them.
    """
    now = time.time()
    entries = [check_store(Path(store), force=force, now=now, overrides=overrides) for store in stores]
    rows: dict[Path, Row] = {}
    for entry in entries:
        if not entry.due:
            rows[entry.store] = _heard(entry_row(entry), on_row)
    due = in_turn_order([entry.store for entry in entries if entry.due])
    if dreamer is None:
        local.setdefault("spending", local_spending(overrides))
        dreamed = dream_stores(due, force=force, overrides=overrides, on_row=on_row, **local)
    else:
        dreamed = [_heard(row, on_row) for row in dreamer(due)]
    rows.update(zip(due, dreamed))
    return [rows[entry.store] for entry in entries]


def local_spending(overrides: dict | None = None) -> Spending | None:
    """The night's budget from the global config (`fleet_budget_tokens` / `_usd`), charged in this process."""
    budget = Budget.from_settings(load_settings(None, overrides))
    return None if budget is None else Spending(budget, LocalLedger())


def in_turn_order(due: list[Path]) -> list[Path]:
    """The stores a budget skipped last time first, so that a night cut short is made up the next one."""
    from dream import history  # start-up: only a fleet with due stores reads histories

    owed = [store for store in due if history.last_run_reason(Layout(store)) == SkipReason.BUDGET]
    return owed + [store for store in due if store not in set(owed)]


def shards(stores: list[Path], size: int) -> list[list[Path]]:
    """The due stores cut into runs of at most `size`, for one worker each."""
    size = max(1, size)
    return [stores[i:i + size] for i in range(0, len(stores), size)]


Hold = Callable[[Any], AbstractContextManager]


def dream_stores(stores: Iterable[Path], *, engine: str | None = None, force: bool = False,
                 max_concurrency: int = 4, overrides: dict | None = None, hold: Hold | None = None,
                 spending: Spending | None = None, on_row: Callable[[Row], None] | None = None) -> list[Row]:
    """A whole `dream run` on each store, `max_concurrency` at a time, in turn; rows in the stores' order.

    This is the work of a shard (and of `dream run --all`): threads in this
    process, one `pipeline.run` each. `hold` is the run's extra hold beside
    the store lock (the Prefect flows' per-store concurrency slot). With
    `spending`, a store whose turn comes once the budget is reached is
    skipped with reason ``budget`` (and recorded so), not dreamed.
    """
    stores = list(stores)
    if not stores:
        return []
    from concurrent.futures import ThreadPoolExecutor, as_completed  # start-up: brings logging, ~8 ms

    rows: dict[int, Row] = {}
    with ThreadPoolExecutor(max_workers=max(1, max_concurrency), thread_name_prefix="dream-fleet") as pool:
        running = {pool.submit(dream_one, store, engine, force, overrides, hold, spending): i
                   for i, store in enumerate(stores)}
        for done in as_completed(running):
            rows[running[done]] = _heard(done.result(), on_row)
    return [rows[i] for i in range(len(stores))]


def dream_one(store: Path, engine: str | None, force: bool, overrides: dict | None,
              hold: Hold | None = None, spending: Spending | None = None) -> Row:
    """A whole `dream run` on one store; an error ends this store's row, never the fleet run."""
    from dream.pipeline import run as pipeline  # start-up: `dream status` imports this module, not the engines

    try:
        spent_out = spending.spent_out() if spending is not None else None
        if spent_out is not None:
            outcome = pipeline.record_skip(store, SkipReason.BUDGET, spent_out, engine=engine, overrides=overrides)
        else:
            outcome = pipeline.run(store, engine=engine, force=force, overrides=overrides,
                                   hold=hold or pipeline.no_extra_hold)
    except DreamError as exc:
        return failed_row(store, str(exc))
    except Exception as exc:  # a bug in one store's run must not cost the others theirs
        return failed_row(store, f"{store}: {type(exc).__name__}: {exc}")
    data = outcome.to_json()
    if spending is not None:
        spending.charge(data["usage"])
    return outcome_row(store, data)


def _heard(row: Row, on_row: Callable[[Row], None] | None) -> Row:
    if on_row is not None:
        on_row(row)
    return row


def fleet_counts(rows: Iterable[Row]) -> dict[str, int]:
    """How many rows ended each way, every status named (0 when none)."""
    counts = {str(status): 0 for status in Status}
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    return counts


def fleet_summary(rows: list[Row]) -> str:
    """``"1 failed, 2 proposed, 6 skipped"``: the counts that are not zero."""
    counts = fleet_counts(rows)
    return ", ".join(f"{n} {status}" for status, n in sorted(counts.items()) if n) or "no stores"


def fleet_failed(rows: Iterable[Row]) -> bool:
    return any(row["status"] == Status.FAILED for row in rows)
