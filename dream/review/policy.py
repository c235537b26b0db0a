"""Unattended decisions: when a proposal may be accepted without a person.

With the setting ``auto_accept = true`` a nightly run accepts its own
proposal, but only when nothing would be lost and the result stays within
the limits: the retention report shows no dropped line, and the proposed
tree passes validation without errors. Anything else waits for review. An
automatic accept is recorded in the audit trail with the actor
``policy:auto_accept``.
"""

from __future__ import annotations

from dataclasses import dataclass

from dream.config import Settings
from dream.errors import Refused
from dream.review.decide import Decision, accept
from dream.review.retention import summarize
from dream.store.layout import Layout
from dream.store.validate import errors as validation_errors
from dream.store.validate import validate_tree
from dream.versions.manifests import Versions
from dream.versions.proposals import PENDING, Proposals

ACTOR = "policy:auto_accept"


@dataclass
class Verdict:
    accept: bool
    reason: str


def judge(layout: Layout, proposal_id: str) -> Verdict:
    """May this proposal be accepted without review?"""
    proposals = Proposals(layout)
    proposal = proposals.get(proposal_id)
    if proposal.status != PENDING:
        return Verdict(False, f"proposal is {proposal.status}")
    report = proposals.report(proposal)
    base = Versions(layout).tree(proposal.base_version)
    tree = proposals.tree(proposal)
    retention = report.get("retention") or summarize(base, tree)
    if retention["dropped"]:
        return Verdict(False, f"it drops {retention['dropped']} line(s)")
    problems = validation_errors(validate_tree(tree, set(proposal.changed), base=base))
    if problems:
        return Verdict(False, f"it breaks {len(problems)} rule(s), first: {problems[0]}")
    return Verdict(True, "drops nothing and stays within the limits")


def auto_accept(layout: Layout, settings: Settings, proposal_id: str | None) -> Decision | None:
    """Accept `proposal_id` when the policy allows it; None when it waits for review."""
    if not settings.auto_accept or not proposal_id:
        return None
    verdict = judge(layout, proposal_id)
    if not verdict.accept:
        return None
    try:
        return accept(layout.root, proposal_id, comment=f"auto_accept: {verdict.reason}", who=ACTOR)
    except Refused:
        return None  # e.g. the store changed in between and conflicts: a person decides
