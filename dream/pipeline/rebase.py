"""Rebasing a stale proposal: dream again on the store as it is now, with the same signal.

A proposal goes stale when the agent's edits since its base collide with
it. Rebase reruns the engine over the sessions the stale proposal read and
the current store; the new proposal supersedes the stale one.
"""

from __future__ import annotations

from pathlib import Path

from dream import history
from dream.errors import ProposalClosed, Refused, RunFailed
from dream.outcomes import SkipReason, Status
from dream.pipeline import run as pipeline
from dream.review.decide import Decision
from dream.store.layout import Layout
from dream.versions.journal import LockedStore
from dream.versions.proposals import PENDING, SUPERSEDED, Proposals


def rebase(store: str | Path, proposal_id: str | None = None, comment: str | None = None) -> Decision:
    """Dream again on the current store, with the same signal, replacing a stale proposal.

    The new run reads the sessions the stale proposal holds (a run reads every
    log no decided proposal accounted for, `dream.store.ledger`) and the
    store as it is now; proposing supersedes the stale proposal.
    """
    layout = Layout.open(store)
    proposals = Proposals(layout)
    stale = proposals.resolve(proposal_id)
    if stale.status != PENDING:
        raise ProposalClosed(f"{layout.root}: proposal {stale.id} is {stale.status}, not pending")
    # Forced: a person asked for this run, so only `enabled` and the lock stop it. The
    # fresh proposal waits for that person too, whatever the auto_accept policy says.
    outcome = pipeline.run(layout.root, engine=stale.engine, force=True, again=True, overrides={"auto_accept": False})
    if outcome.status == Status.FAILED:
        raise RunFailed(outcome.reason or "failed", f"{layout.root}: rebase of {stale.id} failed: {outcome.error}")
    if outcome.status == Status.SKIPPED:
        hint = "; try again when it ends" if outcome.reason == SkipReason.LOCK else ""
        raise Refused(f"{layout.root}: rebase of {stale.id} skipped: {outcome.error}{hint}")
    new_id = outcome.proposal_id
    detail = f"replaced by {new_id}" if new_id else f"nothing left to propose ({outcome.reason})"
    with LockedStore(layout, "rebase"):  # an accept or reject may have closed it since the check above
        stale = proposals.get(stale.id)
        if stale.status == PENDING:  # the run proposed nothing: the stale proposal is moot on this store
            proposals.set_status(stale, SUPERSEDED)
        history.record_event(layout, "rebase", stale.id, outcome.base_version, comment, detail=detail)
    return Decision("rebased", stale.id, outcome.base_version, new_proposal_id=new_id)
