"""Unattended decisions: when a proposal may be accepted without a person.

With the setting ``auto_accept = true`` a nightly run accepts its own
proposal, but only when nothing would be lost and the result stays within
the limits: the retention report shows no dropped line, and the proposed
tree passes validation without errors. Anything else waits for review. An
automatic accept is recorded in the audit trail with the actor
``policy:auto_accept``.

Housekeeping (duplicates, pointers, dates, long lines) reads no intent, so
it may go in unattended. A change derived from what someone said that
rewrites or removes existing text (a correction, a forget) is only as good
as the engine's reading of the sentence: its files are held back for a
person, with the index when a request edited it, unless the setting
``auto_accept_requests = true`` says otherwise. The rest of the proposal is
taken; the held requests are offered again by the next run (their sessions
go on the replay list), which the pipeline makes at once for a person.

A change whose new text no user line says (`UNSAID`: the Claude engine
found it in a tool's output or an assistant line, or nowhere) waits for a
person whatever `auto_accept_requests` says, with the line it came from.

A dated note on a claim the project refutes (`noted`, lint_notes) is
housekeeping, yet it says a memory may be wrong: its file waits for a
person too, whatever `auto_accept_requests` says. `verified_at` (lint's
`verified`) only records that every claim held, and goes in.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dream.config import Settings
from dream.engines.base import NOTED, REQUEST, UNSAID
from dream.errors import Refused
from dream.review.budget import removal_budget
from dream.review.choices import needs
from dream.review.decide import Decision, accept, partial_tree
from dream.review.retention import of_proposal, summarize
from dream.store.layout import Layout
from dream.store.tree import INDEX_NAME, Tree
from dream.store.validate import errors as validation_errors
from dream.store.validate import validate_tree
from dream.versions.manifests import Versions
from dream.versions.proposals import PENDING, Proposals

ACTOR = "policy:auto_accept"


# What a request may do unattended: add text. Every other action rewrites or removes some.
ADDS_ONLY = {"created"}


@dataclass
class Verdict:
    accept: bool
    reason: str
    held: list[str] = field(default_factory=list)  # files that wait for a person; the rest may be taken


def judge(layout: Layout, proposal_id: str, take_requests: bool = False,
          settings: Settings | None = None) -> Verdict:
    """May this proposal (or which part of it) be accepted without review?"""
    proposals = Proposals(layout)
    proposal = proposals.get(proposal_id)
    if proposal.status != PENDING:
        return Verdict(False, f"proposal is {proposal.status}")
    report = proposals.report(proposal)
    base = Versions(layout).tree(proposal.base_version)
    tree = proposals.tree(proposal)
    held = held_for_person(report.get("changes") or [], base, tree, proposal.changed, requests=not take_requests)
    if held and set(held) >= set(proposal.changed):
        return Verdict(False, "every file it changes holds a request that rewrites or removes text, or text no "
                              "user said", held)
    taken = [path for path in proposal.changed if path not in held]
    going_in = partial_tree(base, tree, taken) if held else tree  # what the store would become unattended
    budget = report.get("removal_budget") or {}  # worked out by the run (dream/review/budget.py)
    if held and budget and settings is not None:  # only what goes in unattended counts
        budget = removal_budget(base, going_in, settings)
    if budget.get("over"):
        return Verdict(False, "it is over the removal budget")
    retention = summarize(base, going_in) if held else of_proposal(proposals, proposal, report)
    if retention["dropped"]:
        return Verdict(False, f"it drops {retention['dropped']} line(s)")
    problems = validation_errors(validate_tree(going_in, set(taken), base=base))
    if held:  # the held index may keep a problem the store had already: only new ones block
        known = {(f.path, f.rule, f.message) for f in validation_errors(validate_tree(base, set(taken)))}
        problems = [f for f in problems if (f.path, f.rule, f.message) not in known]
    if problems:
        return Verdict(False, f"it breaks {len(problems)} rule(s), first: {problems[0]}")
    if held:
        return Verdict(True, f"housekeeping drops nothing; {len(held)} file(s) with requests wait for a person",
                       held)
    return Verdict(True, "drops nothing and stays within the limits")


def held_for_person(changes: list[dict], base: Tree, tree: Tree, changed: list[str], requests: bool = True) -> list[str]:
    """The files a request rewrote or removed text in, and every file that taking one of the rest needs.

    A request that rewrites or removes edits the index too (its hook, its
    line), so the index waits with it, and so do the new files only the
    held index points to; a skipped file that another file needs makes
    that one wait as well. `requests` False (``auto_accept_requests``) lets
    requests and lint notes go in; text no user said (UNSAID) waits always.
    """
    held = {c.get("path", "") for c in changes if c.get("kind") == UNSAID}
    if requests:
        held |= {c.get("path", "") for c in changes if c.get("kind") == REQUEST and c.get("action") not in ADDS_ONLY
                 and _loses_text(c.get("path", ""), base, tree)}
    if held:
        held.add(INDEX_NAME)
    if requests:
        held |= {c.get("path", "") for c in changes if c.get("action") == NOTED}  # a person reads a lint note first
    if not held:
        return []
    required = needs(base, tree, changed)
    for path in required.get(INDEX_NAME, set()):  # a new file the held index would point to: orphaned alone
        required.setdefault(path, set()).add(INDEX_NAME)
    grew = True
    while grew:
        more = {path for path in changed if path not in held and required.get(path, set()) & held}
        grew = bool(more)
        held |= more
    return sorted(held & set(changed))


def _loses_text(path: str, base: Tree, tree: Tree) -> bool:
    """Whether a line of `path` in the base is gone from the proposed tree (rewritten or removed, not added to)."""
    if path not in base:
        return False
    kept = set(tree.get(path, b"").splitlines())
    return any(line not in kept for line in base[path].splitlines())


def auto_accept(layout: Layout, settings: Settings, proposal_id: str | None) -> Decision | None:
    """Accept `proposal_id` when the policy allows it; None when it waits for review."""
    if not settings.auto_accept or not proposal_id:
        return None
    verdict = judge(layout, proposal_id, take_requests=settings.auto_accept_requests, settings=settings)
    if not verdict.accept:
        return None
    try:
        return accept(layout.root, proposal_id, comment=f"auto_accept: {verdict.reason}", who=ACTOR,
                      except_=verdict.held or None)
    except Refused:
        return None  # e.g. the store changed in between and conflicts: a person decides
