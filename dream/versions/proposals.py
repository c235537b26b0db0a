"""Proposals: a candidate tree, its diff against the base version, and a report.

Each proposal lives in ``.dream/proposals/<id>/``:
``proposal.json`` (metadata, status and the full tree as path -> sha256, the
bytes being in the shared blob store), ``diff.patch``, ``report.json`` and
``report.md``. Only ``status`` ever changes after creation.
"""

from __future__ import annotations

import json
import secrets
import sys
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from dream.errors import UnknownProposal
from dream.records import DamagedRecord, load_json_record, read_json_object
from dream.store.layout import Layout
from dream.store.tree import Tree, atomic_write
from dream.versions.manifests import Blobs

PENDING = "pending"
ACCEPTED = "accepted"
REJECTED = "rejected"
SUPERSEDED = "superseded"


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


_warned: set[str] = set()


def _warn_once(message: str) -> None:
    """One stderr line per damaged proposal per process (stdout stays clean for --json)."""
    if message not in _warned:
        _warned.add(message)
        sys.stderr.write(f"dream: warning: {' '.join(message.split())} (skipped)\n")


def new_proposal_id(now: float | None = None) -> str:
    stamp = datetime.fromtimestamp(now or time.time(), tz=timezone.utc).strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{secrets.token_hex(2)}"


class Proposals:
    def __init__(self, layout: Layout):
        self.layout = layout
        self.blobs = Blobs(layout)

    def dir(self, proposal_id: str) -> Path:
        return self.layout.proposals / proposal_id

    def create(self, proposal: Proposal, diff: str, report: dict, report_md: str) -> Proposal:
        """Write every file of the proposal, then its manifest last, so a crash leaves no half proposal."""
        folder = self.dir(proposal.id)
        folder.mkdir(parents=True, exist_ok=False)
        atomic_write(folder / "diff.patch", diff.encode())
        atomic_write(folder / "report.json", (json.dumps(report, indent=2, default=str) + "\n").encode())
        atomic_write(folder / "report.md", report_md.encode())
        self._save(proposal)
        return proposal

    def _save(self, proposal: Proposal) -> None:
        atomic_write(self.dir(proposal.id) / "proposal.json", json.dumps(asdict(proposal), indent=1).encode())

    def ids(self) -> list[str]:
        if not self.layout.proposals.is_dir():
            return []
        return sorted(p.name for p in self.layout.proposals.iterdir() if (p / "proposal.json").is_file())

    def get(self, proposal_id: str) -> Proposal:
        path = self.dir(proposal_id) / "proposal.json"
        if "/" in proposal_id or proposal_id in {"", ".", ".."} or not path.is_file():
            raise UnknownProposal(f"{self.layout.root}: no proposal {proposal_id!r}")
        try:
            return load_json_record(path, Proposal, "proposal manifest")
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

    def latest_pending(self) -> Proposal | None:
        pending = self.pending()
        return pending[-1] if pending else None

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
        return self._text(proposal, "diff.patch")

    def report(self, proposal: Proposal) -> dict:
        path = self.dir(proposal.id) / "report.json"
        try:
            return read_json_object(path, "proposal report")
        except FileNotFoundError:
            raise DamagedRecord(f"{path}: proposal report is missing") from None

    def report_md(self, proposal: Proposal) -> str:
        return self._text(proposal, "report.md")

    def _text(self, proposal: Proposal, name: str) -> str:
        path = self.dir(proposal.id) / name
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise DamagedRecord(f"{path}: cannot read the proposal's {name}: {exc}") from None

    def set_status(self, proposal: Proposal, status: str, accepted_version: int | None = None) -> Proposal:
        proposal.status = status
        proposal.decided_at = time.time()
        if accepted_version is not None:
            proposal.accepted_version = accepted_version
        self._save(proposal)
        return proposal
