"""Deciding on a proposal: accept it into the store, or reject it.

Accepting writes the proposal's files into the live store through the
journal in `dream.recovery`, so a crash leaves the store at the base or,
after the next command, at the new version. If the store changed since the
proposal's base version was taken, accept refuses rather than overwrite
what the agent wrote in the meantime.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from . import history
from .errors import ProposalClosed, Refused, StaleBase
from .layout import Layout
from .lock import LockBusy, store_lock
from .proposals import PENDING, REJECTED, Proposals
from .recovery import Journal, apply_journal, crashpoint, recover, write_journal
from .tree import Tree, changed_paths, escapes_root, read_tree
from .versions import Versions

LOCK_WAIT_SECONDS = 10


@dataclass
class Decision:
    status: str  # accepted | rejected | rolled_back
    proposal_id: str | None
    version: int | None

    def to_json(self) -> dict:
        return {"status": self.status, "proposal_id": self.proposal_id, "version": self.version}


class _Locked:
    """Context manager turning a busy lock into a clear refusal."""

    def __init__(self, layout: Layout, purpose: str):
        self.cm = store_lock(layout, f"{purpose}-{os.getpid()}", purpose=purpose, wait=LOCK_WAIT_SECONDS)
        self.layout = layout

    def __enter__(self):
        try:
            self.cm.__enter__()
        except LockBusy as busy:
            who = f"run {busy.holder.run_id} (pid {busy.holder.pid})" if busy.holder else "another process"
            raise Refused(f"{self.layout.root}: store is locked by {who}; try again when it ends") from None
        recover(self.layout)

    def __exit__(self, *exc):
        return self.cm.__exit__(*exc)


def write_tree(layout: Layout, live: Tree, files: dict[str, str], action: str, version_source: str,
               note: str, **extra) -> int:
    """Journal and apply a new tree onto the store; returns the new version number."""
    versions = Versions(layout)
    new_tree = versions.blobs.get_tree(files)
    changed = changed_paths(live, new_tree)
    outside = [p for p in changed if escapes_root(layout.root, p)]
    if outside:
        raise Refused(f"{layout.root / outside[0]}: path leaves the store through a symlink; not writing")
    journal = Journal(
        action=action, new_version=(versions.current() or 0) + 1, files=files,
        writes=[p for p in changed if p in new_tree], deletes=[p for p in changed if p not in new_tree],
        version_source=version_source, note=note, extra=extra,
    )
    crashpoint(f"{action}-before-journal")
    write_journal(layout, journal)
    crashpoint(f"{action}-after-journal")
    apply_journal(layout, journal)
    return journal.new_version


def accept(store: str | Path, proposal_id: str | None = None, comment: str | None = None) -> Decision:
    layout = Layout.open(store)
    with _Locked(layout, "accept"):
        proposals = Proposals(layout)
        proposal = proposals.resolve(proposal_id)
        if proposal.status != PENDING:
            raise ProposalClosed(f"{layout.root}: proposal {proposal.id} is {proposal.status}, not pending")
        versions = Versions(layout)
        base = versions.tree(proposal.base_version)
        live = read_tree(layout.root)
        drift = changed_paths(base, live)
        if drift:
            raise StaleBase(
                f"{layout.root}: store changed since proposal {proposal.id} was made "
                f"(base version {proposal.base_version}; {len(drift)} file(s) differ, e.g. {drift[0]}); "
                f"run `dream run` again for a fresh proposal"
            )
        version = write_tree(
            layout, live, proposal.files, "accept", "accept", note=f"accepted proposal {proposal.id}",
            proposal_id=proposal.id, actor=history.actor(),
        )
    history.record_event(layout, "accept", proposal.id, version, comment)
    return Decision("accepted", proposal.id, version)


def reject(store: str | Path, proposal_id: str | None = None, comment: str | None = None) -> Decision:
    layout = Layout.open(store)
    with _Locked(layout, "reject"):
        proposals = Proposals(layout)
        proposal = proposals.resolve(proposal_id)
        if proposal.status != PENDING:
            raise ProposalClosed(f"{layout.root}: proposal {proposal.id} is {proposal.status}, not pending")
        proposals.set_status(proposal, REJECTED)
    history.record_event(layout, "reject", proposal.id, None, comment)
    return Decision("rejected", proposal.id, None)


def rollback(store: str | Path, number: int, comment: str | None = None) -> Decision:
    """Restore version `number`'s bytes as a new version; unrecorded edits are kept as a version first."""
    layout = Layout.open(store)
    with _Locked(layout, "rollback"):
        versions = Versions(layout)
        target = versions.get(number)
        live = read_tree(layout.root)
        current = versions.current()
        if current is None or versions.tree(current) != live:
            versions.record(live, "snapshot", note="store as found before rollback")
        version = write_tree(
            layout, live, target.files, "rollback", "rollback", note=f"rollback to version {number}",
            actor=history.actor(),
        )
    history.record_event(layout, "rollback", None, version, comment, detail=f"to version {number}")
    return Decision("rolled_back", None, version)
