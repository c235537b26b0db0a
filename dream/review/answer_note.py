"""Answering a note: take its suggestion as an ordinary reviewed change, or dismiss it.

Taking never writes the store. The change goes into the pending proposal
when there is one (a new proposal on the same base replaces it, holding its
changes, its logs and this one), else into a new proposal on the current
version. Either way it is reviewed and accepted like any other change, with
the note's sentence, session, date and line as its evidence.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from datetime import date
from pathlib import Path

from dream import history, notes
from dream.engines.base import REQUEST, Change, Evidence
from dream.errors import Refused
from dream.notes.suggestion import Suggestion, apply, sentence_of, suggestion_of
from dream.review import requests
from dream.store.layout import Layout
from dream.store.tree import Tree, changed_paths
from dream.store.validate import errors as validation_errors
from dream.store.validate import validate_tree
from dream.versions.diffing import tree_diff
from dream.versions.journal import LockedStore
from dream.versions.manifests import Versions
from dream.versions.proposals import SUPERSEDED, Proposal, Proposals, new_proposal_id

ENGINE = "a person"  # who made a proposal that holds only taken notes
TAKE_EVENT = "take-note"  # the history's name for it (dream.history_report counts it as closing a proposal)


@dataclass
class Taken:
    note: notes.Note
    proposal_id: str
    replaced: str | None  # the pending proposal the change went into, now superseded
    change: Change

    def to_json(self) -> dict:
        return {"note": self.note.to_json(), "proposal_id": self.proposal_id, "replaced": self.replaced,
                "change": asdict(self.change)}


def take(store: str | Path, number: int, now: float | None = None) -> Taken:
    """Make note `number`'s suggested change into the pending proposal (or a new one); the note is then taken."""
    layout = Layout.open(store)
    moment = time.time() if now is None else now
    with LockedStore(layout, "take"):
        ledger = notes.load(layout)
        note = notes.find(ledger, number, layout)
        notes.require_open(note)
        suggestion = suggestion_of(note.text)
        if suggestion is None:
            raise Refused(f"note {note.id} suggests no change dream can make; edit the memory by hand, then "
                          f"`dream notes dismiss {note.id} --store {layout.root}`")
        proposal_id, replaced, change = _propose(layout, note, suggestion, date.fromtimestamp(moment), moment)
        if replaced:
            notes.carried(ledger, replaced, proposal_id)
        notes.answer(note, notes.NoteStatus.TAKEN, proposal_id, moment)
        notes.save(layout, ledger)
    # `replaced` is closed by this event, as by a rebase: the report no longer counts it as waiting
    history.record_event(layout, TAKE_EVENT, replaced or proposal_id, None, None,
                         detail=f"took note {note.id} into proposal {proposal_id}: {suggestion}")
    return Taken(note, proposal_id, replaced, change)


def dismiss(store: str | Path, number: int, now: float | None = None) -> notes.Note:
    """A person's "no": the note closes and never opens again, whatever later nights write."""
    layout = Layout.open(store)
    with LockedStore(layout, "dismiss"):
        ledger = notes.load(layout)
        note = notes.find(ledger, number, layout)
        notes.answer(note, notes.NoteStatus.DISMISSED, now=now)
        notes.save(layout, ledger)
    history.record_event(layout, "dismiss-note", None, None, None, detail=f"note {note.id}: {note.text[:200]}")
    return note


def _propose(layout: Layout, note: notes.Note, suggestion: Suggestion, today: date,
             moment: float) -> tuple[str, str | None, Change]:
    proposals = Proposals(layout)
    versions = Versions(layout, proposals.blobs)
    pending = proposals.latest_pending()
    base_version = pending.base_version if pending else versions.current()
    if base_version is None:
        raise Refused(f"{layout.root}: no version yet to change; run dream once first")
    base = versions.tree(base_version)
    start = proposals.tree(pending) if pending else base
    tree, path, detail = apply(suggestion, start, today)
    _refuse_broken(layout, note, tree, start)
    change = _change(note, suggestion, path, detail)
    report = proposals.report(pending) if pending else {"engine": ENGINE, "base_version": base_version,
                                                         "sessions_read": 0, "redactions": 0}
    report = _with_change(report, change, base, tree)
    proposal = Proposal(id=new_proposal_id(moment), created_at=moment, base_version=base_version,
                        engine=pending.engine if pending else ENGINE, run_id=pending.run_id if pending else "",
                        files={}, changed=changed_paths(base, tree),
                        meta={"note": note.id, **({"carried_from": pending.id} if pending else {})})
    report["proposal_id"] = proposal.id
    proposals.create(proposal, tree_diff(base, tree), report, tree=tree)
    if pending:
        proposals.set_status(pending, SUPERSEDED)
        requests.settle(layout, report, held=requests.logs_read(report), holder=proposal.id)
    return proposal.id, pending.id if pending else None, change


def carry_taken(layout: Layout, tree: Tree, today: date) -> tuple[Tree, list[Change], list[int]]:
    """The changes of notes taken into a pending proposal, made again on a night's staged `tree`: the night's
    proposal replaces that one, so it must hold them. Returns the tree, those changes and the notes carried;
    a change that no longer fits is left out, and its note opens again (`dream.notes.settle_taken`)."""
    pending = {p.id for p in Proposals(layout).pending()}
    changes: list[Change] = []
    carried: list[int] = []
    for note in notes.load(layout):
        suggestion = suggestion_of(note.text)
        if note.status != notes.NoteStatus.TAKEN or note.proposal_id not in pending or suggestion is None:
            continue
        try:
            after, path, detail = apply(suggestion, tree, today)
            _refuse_broken(layout, note, after, tree)
        except Refused:
            continue
        tree = after
        changes.append(_change(note, suggestion, path, detail))
        carried.append(note.id)
    return tree, changes, carried


def _refuse_broken(layout: Layout, note: notes.Note, tree: Tree, before: Tree) -> None:
    errors = validation_errors(validate_tree(tree, set(changed_paths(before, tree)), base=before))
    if errors:
        first = errors[0]
        raise Refused(f"{layout.root}: taking note {note.id} breaks {first.path}: {first.message}; nothing changed")


def _change(note: notes.Note, suggestion: Suggestion, path: str, detail: str) -> Change:
    evidence = Evidence(note.session or "", note.date or "", note.line or 0, sentence_of(note.text))
    action = {"forget": "forgotten", "replace": "updated", "remember": "created"}[suggestion.action]
    return Change(action, path, f"a person took note {note.id}: {suggestion}", detail, note.session or "",
                  kind=REQUEST, evidence=evidence if note.session else None)


def _with_change(report: dict, change: Change, base: Tree, tree: Tree) -> dict:
    from dream.review import retention  # start-up: rapidfuzz and the similarity tables; only a take needs them

    changes = [*(report.get("changes") or []), asdict(change)]
    counts: dict[str, int] = {}
    for c in changes:
        counts[c["action"]] = counts.get(c["action"], 0) + 1
    return {**report, "changes": changes, "counts": dict(sorted(counts.items())),
            "files_changed": changed_paths(base, tree), "retention": retention.summarize(base, tree)}
