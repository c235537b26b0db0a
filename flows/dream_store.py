"""One dream on one store, as a Prefect flow with one task per stage:

    recover → import → gate → lock → snapshot → gather → consolidate → validate → propose → record → policy
                                                                                   ↳ publish → (pause for review)

The run itself is `dream.pipeline.run.run`, the same call as ``dream run``,
with hooks that make each stage a task and hold the store's Prefect slot; so
a scheduled run ends with the same outcome and the same history record. Only
publishing the proposal as an artifact and pausing for review are the
flow's own. A closed gate or a busy lock ends the flow `Completed` with the
reason as its message; only a run that could not produce a valid proposal
ends `Failed`.

A paused run is resumed by the UI's form, or by `dream accept` / `dream
reject` on its proposal (see `dream.review.paused`).

No ``from __future__ import annotations`` here: Prefect validates the flow's
parameters with a pydantic model built from its signature, which must be
real types wherever the flow runs (see flows/dream_fleet.py).
"""

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
    outcome = pipeline.run(store, engine=engine, force=force, call=tasks.as_task, hold=tasks.hold_store)
    if outcome.status != Status.PROPOSED:
        return tasks.final_state(outcome)
    tasks.publish_proposal(store, outcome)
    if outcome.accepted_version is not None or review != "pause":
        return tasks.final_state(outcome)
    with tasks.waiting_for_review(store, outcome.proposal_id):  # `dream accept` / `dream reject` resume it
        answer = pause_flow_run(wait_for_input=tasks.Review, timeout=review_timeout, poll_interval=2)
    return tasks.final_state(outcome, tasks.apply_review(store, outcome.proposal_id, answer))
