"""One dream on one store, as a Prefect flow with one task per stage:

    import → gate → lock → snapshot → gather → consolidate → validate → propose → record
                                                                         ↳ artifact → (pause for review)

It mirrors `dream.pipeline.run` step for step, so a scheduled run ends with
the same outcome and the same history record as ``dream run``. A closed gate
or a busy lock ends the flow `Completed` with the reason as its message; only
a run that could not produce a valid proposal ends `Failed`.
"""

from __future__ import annotations

from contextlib import ExitStack
from typing import Literal

from prefect import flow
from prefect.flow_runs import pause_flow_run
from prefect.states import State

from dream.outcomes import Status
from dream.pipeline import run as pipeline
from flows import tasks

DAY_SECONDS = 24 * 3600


@flow(name="dream-store", persist_result=False, log_prints=True)
def dream_store(store: str, engine: Literal["auto", "offline", "claude"] = "auto", force: bool = False,
                review: Literal["pause"] | None = None, review_timeout: int = DAY_SECONDS) -> State:
    """Dream on `store`; with ``review="pause"``, wait for a reviewer's decision and apply it."""
    ctx = pipeline.begin(store, engine=engine, force=force)
    tasks.import_logs(ctx)
    decision = tasks.gate(ctx)
    if not decision.open:
        outcome = pipeline.skipped(ctx, decision.reason, decision.message)
        return tasks.final_state(tasks.finish(ctx, outcome, holds_lock=False))

    with ExitStack() as held:  # the store's slot and lock, released when the run is recorded
        busy = tasks.lock(ctx, held)
        if busy is not None:
            return tasks.final_state(tasks.finish(ctx, busy, holds_lock=False))
        outcome = tasks.finish(ctx, pipeline.locked_run(ctx, call=tasks.as_task))

    if outcome.status != Status.PROPOSED:
        return tasks.final_state(outcome)
    tasks.publish_proposal(ctx, outcome)
    if tasks.apply_policy(ctx, outcome).accepted_version is not None or review != "pause":
        return tasks.final_state(outcome)
    answer = pause_flow_run(wait_for_input=tasks.Review, timeout=review_timeout, poll_interval=2)
    return tasks.final_state(outcome, tasks.apply_review(ctx.layout.root, outcome.proposal_id, answer))
