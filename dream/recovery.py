"""Crash safety for writes into the live store.

Writing a proposal's files into the store touches several files, and no
file system can replace several files in one step. So a write first records
its whole plan in a journal (``.dream/accept.journal.json``, written
atomically: the commit point), then applies it. Every later dream command
that takes the store's lock first rolls an unfinished journal forward. The
plan only names blobs already in the version store, so replaying it is
idempotent. A crash before the journal exists leaves the old store; a crash
after it leads, at the next command, to exactly the new one.
"""

from __future__ import annotations

import json
import os
import signal
from dataclasses import asdict, dataclass, field

from .layout import Layout
from .tree import atomic_write, fsync_dir
from .versions import Blobs, Versions


@dataclass
class Journal:
    action: str  # accept | rollback
    new_version: int
    files: dict[str, str]  # the complete new tree: path -> sha256
    writes: list[str]  # paths to (re)write from `files`
    deletes: list[str]  # paths to remove
    version_source: str
    note: str = ""
    extra: dict = field(default_factory=dict)  # e.g. proposal_id, actor, comment


def crashpoint(name: str) -> None:
    """Test hook: die here, as abruptly as a power cut, when DREAM_CRASHPOINT names this point."""
    if os.environ.get("DREAM_CRASHPOINT") == name:
        os.kill(os.getpid(), signal.SIGKILL)


def write_journal(layout: Layout, journal: Journal) -> None:
    atomic_write(layout.journal, json.dumps(asdict(journal)).encode())


def apply_journal(layout: Layout, journal: Journal) -> None:
    """Make the store's memory files exactly `journal.files`, record the version, drop the journal."""
    blobs = Blobs(layout)
    for i, rel in enumerate(journal.writes):
        target = layout.root / rel
        data = blobs.get(journal.files[rel])
        if not (target.is_file() and not target.is_symlink() and target.read_bytes() == data):
            atomic_write(target, data)
        if i == 0:
            crashpoint("accept-after-first-write")
    for rel in journal.deletes:
        target = layout.root / rel
        if target.is_file() or target.is_symlink():
            target.unlink()
            fsync_dir(target.parent)
    crashpoint("accept-after-apply")
    Versions(layout).record(
        blobs.get_tree(journal.files), journal.version_source, note=journal.note,
        number=journal.new_version, proposal_id=journal.extra.get("proposal_id"),
        actor=journal.extra.get("actor"),
    )
    crashpoint("accept-after-version")
    _after_apply(layout, journal)
    layout.journal.unlink(missing_ok=True)


def _after_apply(layout: Layout, journal: Journal) -> None:
    """Mark the proposal accepted (idempotent), so a replay finishes the bookkeeping too."""
    proposal_id = journal.extra.get("proposal_id")
    if journal.action != "accept" or not proposal_id:
        return
    from .proposals import ACCEPTED, Proposals

    proposals = Proposals(layout)
    proposal = proposals.get(proposal_id)
    if proposal.status != ACCEPTED:
        proposals.set_status(proposal, ACCEPTED, accepted_version=journal.new_version)


def recover(layout: Layout) -> bool:
    """Roll an interrupted write forward. Call with the store's lock held."""
    try:
        raw = json.loads(layout.journal.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return False
    except ValueError:
        # The journal is written atomically, so a damaged one was never committed.
        layout.journal.unlink(missing_ok=True)
        return False
    apply_journal(layout, Journal(**raw))
    return True
