"""Retention of versions and decided proposals, and the file contents only they held.

`gc --keep N` keeps the newest N versions. It never deletes the current
version, nor the base version of a pending proposal (accepting it needs
that base for the three-way merge). Decided proposals (accepted, rejected,
superseded) whose base version is older than the oldest kept version are
deleted too, unless `keep_proposals` is set; pending ones never are. An
object (a file's blob or a tree node) is deleted only when no remaining
version and no remaining proposal needs it: directly, through its tree, or
as the base of a delta that one of those needs. A damaged proposal makes gc
refuse: the blobs it needs are unknown.

Crash safety: a proposal leaves `.dream/proposals/` in one atomic rename
into `.dream/gc-trash/` (so no command sees it any more), the trash is
emptied, and only then are blobs deleted. An interrupted gc therefore never
leaves a proposal manifest pointing at deleted blobs; the next gc empties
what trash is left. It runs under the store's lock, so no run or accept adds
blobs or proposals meanwhile.
"""

from __future__ import annotations

import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

from dream.errors import BadInput
from dream.store.layout import Layout
from dream.versions.journal import LockedStore
from dream.versions.manifests import Version, Versions
from dream.versions.proposals import PENDING, Proposal, Proposals


@dataclass
class GcResult:
    deleted_versions: list[int]
    kept_versions: list[int]
    deleted_blobs: int
    freed_bytes: int
    proposals_deleted: list[str]

    def to_json(self) -> dict:
        return asdict(self)


def versions_to_keep(numbers: list[int], keep: int, pinned: set[int]) -> list[int]:
    """The newest `keep` versions plus every pinned one (the current version is the newest)."""
    newest = numbers[-keep:] if keep else []
    return sorted(set(newest) | (pinned & set(numbers)) | set(numbers[-1:]))


def proposals_to_delete(proposals: list[Proposal], kept: list[int]) -> list[Proposal]:
    """Decided proposals based on a version older than the oldest kept one; never a pending one."""
    if not kept:
        return []
    oldest = min(kept)
    return [p for p in proposals if p.status != PENDING and p.base_version < oldest]


def gc(store: str | Path, keep: int, keep_proposals: bool = False) -> GcResult:
    if keep < 1:
        raise BadInput(f"--keep must be at least 1 (the current version is always kept), got {keep}")
    layout = Layout.open(store)
    with LockedStore(layout, "gc"):
        _empty_trash(layout)  # what an interrupted gc left behind
        versions, proposals = Versions(layout), Proposals(layout)
        every = proposals.all(skip_damaged=False)  # blobs of a damaged proposal are unknown: refuse
        pinned = {p.base_version for p in every if p.status == PENDING}
        numbers = versions.numbers()
        kept = versions_to_keep(numbers, keep, pinned)
        doomed = [n for n in numbers if n not in kept]
        dropped = [] if keep_proposals else proposals_to_delete(every, kept)
        dropped_ids = {p.id for p in dropped}
        blobs = versions.blobs
        referenced: set[str] = set()
        records: list[Version | Proposal] = [*(versions.get(n) for n in kept),
                                             *(p for p in every if p.id not in dropped_ids)]
        for record in records:
            referenced.update(record.files.values())
            if record.tree:
                referenced.update(blobs.listing(record.tree).nodes.values())
        referenced = blobs.with_bases(referenced)  # a delta is unreadable without its base
        for p in dropped:
            _delete_proposal(layout, p.id)
        for n in doomed:
            versions.delete(n)
        count, freed = _delete_unreferenced_blobs(layout, referenced)
    return GcResult(doomed, kept, count, freed, [p.id for p in dropped])


def _trash(layout: Layout) -> Path:
    """Where deleted proposals wait to be removed; refuses a trash that is a file or a symlink."""
    trash = layout.dream / "gc-trash"
    if trash.is_symlink() or (trash.exists() and not trash.is_dir()):
        raise BadInput(f"{trash}: should be gc's own folder but is a file or a symlink; move it away")
    return trash


def _delete_proposal(layout: Layout, proposal_id: str) -> None:
    """Take the folder out of `proposals/` in one rename (manifest and all), then delete it.

    The rename is the moment the proposal stops existing for every command;
    its blobs are deleted only later, after the trash is empty.
    """
    trash = _trash(layout)
    trash.mkdir(parents=True, exist_ok=True)
    target = trash / proposal_id
    if target.exists():  # left by an earlier interrupted gc; _empty_trash normally removes it
        shutil.rmtree(target)
    (layout.proposals / proposal_id).rename(target)
    _remove_folder(target)


def _remove_folder(folder: Path) -> None:
    """Manifest first, so even a half-deleted folder holds no manifest."""
    (folder / "proposal.json").unlink(missing_ok=True)
    shutil.rmtree(folder)


def _empty_trash(layout: Layout) -> None:
    trash = _trash(layout)
    if not trash.is_dir():
        return
    for folder in trash.iterdir():
        if folder.is_dir() and not folder.is_symlink():
            _remove_folder(folder)
        else:
            folder.unlink()


def _delete_unreferenced_blobs(layout: Layout, referenced: set[str]) -> tuple[int, int]:
    count = freed = 0
    if not layout.objects.is_dir():
        return 0, 0
    for shard in layout.objects.iterdir():
        if not shard.is_dir():
            continue
        for blob in shard.iterdir():
            digest = shard.name + blob.name
            crashed = blob.name.startswith(".") and blob.name.endswith(".tmp")  # every writer holds gc's lock
            if not crashed and (len(digest) != 64 or digest in referenced):
                continue  # not an object, or still needed
            freed += blob.stat().st_size
            blob.unlink()
            count += not crashed
    return count, freed
