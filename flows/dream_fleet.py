"""Every store on a machine, as one Prefect flow:

    scan (discover stores, check each gate) → dream_store on the due ones (bounded) → table artifact

The scan only stats files, so a scan where nothing is due costs the gate
checks and nothing else: no subflow, no lock, no history write. The due
stores run as `dream_store` subflows, at most `max_concurrency` at a time,
on the flow's task runner (threads by default; Dask, see docs/prefect.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from dream.pipeline.fleet import FleetEntry
from flows import tasks
from flows.dream_store import DAY_SECONDS, dream_store


@task(name="dream", cache_policy=NO_CACHE, persist_result=False, task_run_name="dream {entry.slug}")
def dream_due_store(entry: FleetEntry, engine: str, force: bool, review: str | None, review_timeout: int) -> dict:
    """Run `dream_store` as a subflow and turn its final state into a table row."""
    state = dream_store(str(entry.store), engine=engine, force=force, review=review,
                        review_timeout=review_timeout, return_state=True)
    return tasks.outcome_row(entry.store, state)


@flow(name="dream-fleet", persist_result=False, log_prints=True)
def dream_fleet(roots: list[str] | None = None, engine: Literal["auto", "offline", "claude"] = "auto",
                force: bool = False, max_concurrency: int = 4,
                review: Literal["pause"] | None = None, review_timeout: int = DAY_SECONDS) -> list[dict]:
    """Dream every due store under `roots` (default: Claude Code's ``~/.claude/projects``)."""
    entries = tasks.scan([str(Path(r).expanduser()) for r in roots] if roots else None, force)
    due = [e for e in entries if e.due]
    dreamed = tasks.bounded_map(dream_due_store, due, max(1, max_concurrency), engine=engine, force=force,
                                review=review, review_timeout=review_timeout)
    rows = iter(dreamed)
    table = [next(rows) if e.due else tasks.skipped_row(e) for e in entries]
    tasks.publish_fleet(table)
    print(f"{len(entries)} store(s), {len(due)} due")
    return table
