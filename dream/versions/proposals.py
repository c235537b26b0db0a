"""Proposals: a candidate tree, its diff against the base version, and a report.

Each proposal lives in ``.dream/proposals/<id>/``: ``proposal.json``
(metadata, status and the root of its tree object, the files and tree nodes
being in the shared blob store, stored as deltas against the base version)
and ``review.json.gz`` (the diff, the report and its markdown). Only
``status`` ever changes after creation. Proposals written before tree
objects existed list every file in ``proposal.json`` and keep ``diff.patch``,
``report.json`` and ``report.md``; both forms are read.

A proposal is written as one durable commit: its objects and files without
fsync, its folder under ``.dream/tmp/``, one sync for all of them, then one
rename into ``proposals/``. No command ever sees half a proposal.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from dream.crashpoints import crashpoint
from dream.errors import BadInput, ProposalClosed, UnknownProposal
from dream.store.records import DamagedRecord, load_json_record, read_json_object, read_record_bytes
from dream.store.layout import Layout
from dream.store.tree import DurableBatch, Tree, atomic_write, fsync_dir
from dream.versions.manifests import Blobs, Version, Versions, load_record, record_json

PENDING = "pending"
ACCEPTED = "accepted"
REJECTED = "rejected"
SUPERSEDED = "superseded"
ROLLED_BACK = "rolled_back"  # accepted, then undone by a rollback to a version before it
REVIEW = "review.json.gz"  # diff and report (older ones: report_md too; older still: diff.patch, report.json, report.md)


@dataclass
class Proposal:
    id: str
    created_at: float
    base_version: int
    engine: str
    run_id: str
    files: dict[str, str]  # the whole proposed tree: path -> sha256
    changed: list[str]  # paths that differ from the base version
    status: str = PENDING
    decided_at: float | None = None
    accepted_version: int | None = None
    meta: dict = field(default_factory=dict)
    tree: str | None = None  # root tree object; None for a manifest that lists its files


@dataclass
class ProposalReview:
    """``review.json.gz``: the diff and report, shown by `dream diff` and the review page."""

    diff: str
    report: dict
    report_md: str | None = None  # kept by dreams before 0.1; rendered from the report since


_warned: set[str] = set()


def _warn_once(message: str) -> None:
    """One stderr line per damaged proposal per process (stdout stays clean for --json)."""
    if message not in _warned:
        _warned.add(message)
        sys.stderr.write(f"dream: warning: {' '.join(message.split())} (skipped)\n")


def _artefacts(proposal: Proposal, diff: str, report: dict) -> list[tuple[str, bytes]]:
    # The diff and report are written once and read through `dream diff`, so they share one
    # compressed file (a third of their size; `zcat review.json.gz` still shows them). The
    # markdown is rendered from the report when shown (`dream.pipeline.report.proposal_markdown`).
    review = {"diff": diff, "report": report}
    packed = gzip.compress(json.dumps(review, separators=(",", ":"), default=str).encode(), mtime=0)
    return [(REVIEW, packed), ("proposal.json", record_json(proposal))]


def new_proposal_id(now: float | None = None) -> str:
    stamp = datetime.fromtimestamp(now or time.time(), tz=timezone.utc).strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{os.urandom(2).hex()}"


class Proposals:
    def __init__(self, layout: Layout):
        self.layout = layout
        self.blobs = Blobs(layout)

    def dir(self, proposal_id: str) -> Path:
        return self.layout.proposals / proposal_id

    def create(self, proposal: Proposal, diff: str, report: dict, tree: Tree | None = None) -> Proposal:
        """Write the proposal as one durable commit; with `tree`, its files are stored too (`proposal.files`).

        Call with the store's lock held (it clears what an interrupted create left).
        """
        final = self.dir(proposal.id)
        if final.exists():
            raise FileExistsError(f"{final}: proposal exists already")
        incoming = self._incoming(proposal.id)
        base = self._base(proposal.base_version)
        with DurableBatch() as batch:
            if tree is not None:
                proposal.files = self.blobs.add_tree(batch, tree, base.files if base else None)
            proposal.tree = self.blobs.add_listing(batch, proposal.files, base.tree if base else None)
            for name, data in _artefacts(proposal, diff, report):
                batch.write(incoming / name, data)
            batch.commit()
        crashpoint("propose-before-commit")
        self.layout.proposals.mkdir(parents=True, exist_ok=True)
        incoming.rename(final)  # the commit point
        fsync_dir(self.layout.proposals)
        return proposal

    def _incoming(self, proposal_id: str) -> Path:
        """A fresh folder to build a proposal in, outside `proposals/`; leftovers of crashed creates go."""
        tmp = self.layout.dream / "tmp"
        for stale in tmp.glob("proposal-*") if tmp.is_dir() else []:
            shutil.rmtree(stale, ignore_errors=True)
        return tmp / f"proposal-{proposal_id}"

    def _base(self, number: int) -> Version | None:
        """The base version, for deltas; None when it cannot be read (the proposal is then stored whole)."""
        try:
            return Versions(self.layout, self.blobs).get(number)
        except BadInput:
            return None

    def _save(self, proposal: Proposal) -> None:
        if proposal.tree is None:  # a manifest that lists every file: rewritten with a tree
            with DurableBatch() as batch:
                proposal.tree = self.blobs.add_listing(batch, proposal.files)
                batch.commit()
        atomic_write(self.dir(proposal.id) / "proposal.json", record_json(proposal))

    def ids(self) -> list[str]:
        if not self.layout.proposals.is_dir():
            return []
        return sorted(p.name for p in self.layout.proposals.iterdir() if (p / "proposal.json").is_file())

    def get(self, proposal_id: str) -> Proposal:
        path = self.dir(proposal_id) / "proposal.json"
        if "/" in proposal_id or proposal_id in {"", ".", ".."} or not path.is_file():
            raise UnknownProposal(f"{self.layout.root}: no proposal {proposal_id!r}")
        try:
            return load_record(path, Proposal, self.blobs, "proposal manifest")
        except FileNotFoundError:  # removed between the check and the read
            raise UnknownProposal(f"{self.layout.root}: no proposal {proposal_id!r}") from None

    def all(self, skip_damaged: bool = True) -> list[Proposal]:
        """Every readable proposal; a damaged one is skipped with a warning, not fatal for the store.

        One bad manifest must not stop runs, status and accepts of the
        others. `damaged()` lists the skipped ones for `status` and `proposals`.
        `skip_damaged=False` raises instead, for callers that must see every
        proposal to be safe (gc must not delete blobs a damaged one may need).
        """
        found = []
        for proposal_id in self.ids():
            try:
                found.append(self.get(proposal_id))
            except DamagedRecord as exc:
                if not skip_damaged:
                    raise
                _warn_once(str(exc))
        return found

    def damaged(self) -> dict[str, str]:
        """Proposal id -> why its manifest cannot be read."""
        broken = {}
        for proposal_id in self.ids():
            try:
                self.get(proposal_id)
            except DamagedRecord as exc:
                broken[proposal_id] = str(exc)
        return broken

    def pending(self) -> list[Proposal]:
        return [p for p in self.all() if p.status == PENDING]

    def pending_logs(self) -> dict[str, list[str]]:
        """Pending proposal id -> the session logs its run read (a damaged report: none)."""
        found: dict[str, list[str]] = {}
        for proposal in self.pending():
            try:
                found[proposal.id] = list((self.report(proposal).get("session_logs") or {}).values())
            except DamagedRecord:
                continue  # its logs are read again, which loses nothing
        return found

    def latest_pending(self) -> Proposal | None:
        pending = self.pending()
        return pending[-1] if pending else None

    def awaiting_decision(self, proposal_id: str | None) -> Proposal:
        """`resolve`, for a decision: one already accepted, rejected or replaced is `ProposalClosed`."""
        proposal = self.resolve(proposal_id)
        if proposal.status != PENDING:
            raise ProposalClosed(f"{self.layout.root}: proposal {proposal.id} is {proposal.status}, not pending")
        return proposal

    def resolve(self, proposal_id: str | None) -> Proposal:
        """`None` or "latest" means the newest pending proposal."""
        if proposal_id in (None, "latest"):
            latest = self.latest_pending()
            if latest is None:
                raise UnknownProposal(f"{self.layout.root}: no pending proposal")
            return latest
        return self.get(proposal_id)

    def tree(self, proposal: Proposal) -> Tree:
        return self.blobs.get_tree(proposal.files)

    def diff(self, proposal: Proposal) -> str:
        review = self._review(proposal)
        return review.diff if review is not None else self._old_text(proposal, "diff.patch")

    def report(self, proposal: Proposal) -> dict:
        """The proposal's report; its id and changed files are the proposal's own, whatever the report says.

        One source for every view: the rest of a partly accepted proposal kept
        its parent's id and file list in reports written before issue 39.
        """
        return {**self._stored_report(proposal), "proposal_id": proposal.id, "files_changed": list(proposal.changed)}

    def _stored_report(self, proposal: Proposal) -> dict:
        review = self._review(proposal)
        if review is not None:
            return review.report
        path = self.dir(proposal.id) / "report.json"
        try:
            return read_json_object(path, "proposal report")
        except FileNotFoundError:
            raise DamagedRecord(f"{path}: proposal report is missing") from None

    def stored_report_md(self, proposal: Proposal) -> str | None:
        """The markdown report as a dream before 0.1 stored it; None for one written since (it is rendered)."""
        review = self._review(proposal)
        if review is None:
            return self._old_text(proposal, "report.md")
        return review.report_md

    def _old_text(self, proposal: Proposal, old_name: str) -> str:
        """One of the three files of the oldest layout (diff.patch, report.md)."""
        path = self.dir(proposal.id) / old_name
        try:
            return read_record_bytes(path, f"proposal's {old_name}").decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise DamagedRecord(f"{path}: cannot read the proposal's {old_name}: {exc}") from None

    def _review(self, proposal: Proposal) -> ProposalReview | None:
        """The diff and reports of a proposal; None for one written before they shared a file."""
        try:
            return load_json_record(self.dir(proposal.id) / REVIEW, ProposalReview, "proposal review",
                                    gzipped=True)
        except FileNotFoundError:
            return None

    def set_status(self, proposal: Proposal, status: str, accepted_version: int | None = None) -> Proposal:
        proposal.status = status
        proposal.decided_at = time.time()
        if accepted_version is not None:
            proposal.accepted_version = accepted_version
        self._save(proposal)
        return proposal
