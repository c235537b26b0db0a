"""Retention of versions: forget old versions and the file contents only they held.

`gc --keep N` keeps the newest N versions. It never deletes the current
version, nor the base version of a pending proposal (accepting it needs
that base for the three-way merge). A blob is deleted only when no
remaining version and no proposal (of any status) refers to it. It runs
under the store's lock, so no run or accept adds blobs meanwhile.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from .accept import _Locked
from .errors import BadInput
from .layout import Layout
from .proposals import Proposals
from .versions import Versions


@dataclass
class GcResult:
    deleted_versions: list[int]
    kept_versions: list[int]
    deleted_blobs: int
    freed_bytes: int

    def to_json(self) -> dict:
        return asdict(self)


def versions_to_keep(numbers: list[int], keep: int, pinned: set[int]) -> list[int]:
    """The newest `keep` versions plus every pinned one (the current version is the newest)."""
    newest = numbers[-keep:] if keep else []
    return sorted(set(newest) | (pinned & set(numbers)) | set(numbers[-1:]))


def gc(store: str | Path, keep: int) -> GcResult:
    if keep < 1:
        raise BadInput(f"--keep must be at least 1 (the current version is always kept), got {keep}")
    layout = Layout.open(store)
    with _Locked(layout, "gc"):
        versions, proposals = Versions(layout), Proposals(layout)
        every = proposals.all(skip_damaged=False)  # blobs of a damaged proposal are unknown: refuse
        pinned = {p.base_version for p in every if p.status == "pending"}
        numbers = versions.numbers()
        kept = versions_to_keep(numbers, keep, pinned)
        doomed = [n for n in numbers if n not in kept]
        referenced: set[str] = set()
        for n in kept:
            referenced.update(versions.get(n).files.values())
        for p in every:
            referenced.update(p.files.values())
        for n in doomed:
            versions.delete(n)
        count, freed = _delete_unreferenced_blobs(layout, referenced)
    return GcResult(doomed, kept, count, freed)


def _delete_unreferenced_blobs(layout: Layout, referenced: set[str]) -> tuple[int, int]:
    count = freed = 0
    if not layout.objects.is_dir():
        return 0, 0
    for shard in layout.objects.iterdir():
        if not shard.is_dir():
            continue
        for blob in shard.iterdir():
            digest = shard.name + blob.name
            if len(digest) != 64 or digest in referenced:
                continue  # not a blob (e.g. a temp file of a write in progress) or still needed
            freed += blob.stat().st_size
            blob.unlink()
            count += 1
    return count, freed
