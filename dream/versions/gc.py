"""Retention of versions and decided proposals, and the file contents only they held.

Every version of the last `keep_days` days (at least `KEEP_DAYS_FLOOR`,
90, whatever the settings) stays, with the one in force when that window
began; `--keep N` keeps the newest N versions besides. gc never deletes the
current version, nor the base version of a pending proposal (accepting it
needs that base for the three-way merge). Decided proposals (accepted,
rejected, superseded) whose base version and accepted version are older
than the oldest kept version are deleted too, unless `keep_proposals` is
set; pending ones never are. Before a version goes, the removals it shows
go into the removal ledger with the removed memories' objects
(`dream.versions.removed`), so `dream removed` still lists them and `dream
restore` still brings them back. An object (a file's blob or a tree node)
is deleted only when no remaining version, no remaining proposal and no
ledger entry needs it: directly, through its tree, or as the base of a
delta that one of those needs. A damaged proposal makes gc refuse: the
blobs it needs are unknown.

The objects still needed are then packed (`dream.versions.packfiles`):
loose ones into a pack of this month, and a pack holding objects no longer
needed is written again without them.

After an accept, `collect_if_due` does all this unasked (`auto_gc`,
default on) when a version has aged out of the window, `LOOSE_MAX`
objects are loose or `SMALL_PACKS_MAX` small packs wait to be merged; its failure never fails the accept.

Crash safety: the ledger is written before anything is deleted. A proposal
leaves `.dream/proposals/` in one atomic rename into `.dream/gc-trash/` (so
no command sees it any more), the trash is emptied, and only then are
blobs deleted. An interrupted gc therefore never leaves a proposal manifest
pointing at deleted blobs; the next gc empties what trash is left. A new
pack is durable before the loose files and old packs it replaces are
deleted. It runs under the store's lock, so no run or accept adds blobs or
proposals meanwhile.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from dream import history
from dream.errors import BadInput, DreamError
from dream.store.layout import Layout
from dream.versions import packfiles
from dream.versions.journal import LockedStore
from dream.versions.manifests import Blobs, Version, Versions
from dream.versions.proposals import PENDING, Proposal, Proposals
from dream.versions.removed import load_ledger, record_collected

KEEP_DAYS_FLOOR = 90.0  # every version this young stays restorable, whatever the settings
DAY_SECONDS = 86_400.0
LOOSE_MAX = 64  # loose objects an accept leaves before it packs them (each takes a 4 KB block on disk)
MERGE_LIMIT = 8 << 20  # a pack this large is not rewritten to add a day's objects, only to drop dead ones
DEAD_SHARE = 8  # ... and only once 1/DEAD_SHARE of its bytes are dead
SMALL_PACKS_MAX = 8  # small packs (runs that added many objects write one each) an accept leaves before it merges them


@dataclass
class GcResult:
    deleted_versions: list[int]
    kept_versions: list[int]
    deleted_blobs: int
    freed_bytes: int
    proposals_deleted: list[str]
    packed_objects: int = 0  # objects moved from loose files into a pack
    pack_files: int = 0  # pack files after gc

    def to_json(self) -> dict:
        return asdict(self)

    def summary(self) -> str:
        """One line: what went, the bytes freed, what stays (the command's output and its history event)."""
        return (f"deleted {len(self.deleted_versions)} version(s) {_ranges(self.deleted_versions)}".rstrip()
                + f", {len(self.proposals_deleted)} decided proposal(s) and {self.deleted_blobs} blob(s) "
                f"({self.freed_bytes} bytes freed); kept versions {_ranges(self.kept_versions) or 'none'}; "
                f"{self.packed_objects} object(s) packed, {self.pack_files} pack file(s)")


def _ranges(numbers: list[int]) -> str:
    """1, 4-9, 12: a list of a few hundred versions stays one line."""
    spans: list[list[int]] = []
    for n in sorted(numbers):
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)


def versions_to_keep(created: dict[int, float], keep: int, pinned: set[int], cutoff: float) -> list[int]:
    """The versions gc keeps; `created` is version number -> when it was made.

    Every one made at or after `cutoff`, the newest one before it (the store
    as it was when the window began), the newest `keep`, every pinned one,
    and the current one (the newest).
    """
    numbers = sorted(created)
    older = [n for n in numbers if created[n] < cutoff]
    young = {n for n in numbers if created[n] >= cutoff}
    newest = numbers[-keep:] if keep else []
    return sorted(young | set(older[-1:]) | set(newest) | (pinned & set(numbers)) | set(numbers[-1:]))


def proposals_to_delete(proposals: list[Proposal], kept: list[int]) -> list[Proposal]:
    """Decided proposals whose base (and accepted) version is older than the oldest kept one; never a pending one.

    A proposal accepted into a version still kept stays: `dream removed` reads why from it.
    """
    if not kept:
        return []
    oldest = min(kept)
    return [p for p in proposals if p.status != PENDING and p.base_version < oldest
            and (p.accepted_version is None or p.accepted_version < oldest)]


def check_keep_days(keep_days: float) -> None:
    if keep_days < KEEP_DAYS_FLOOR:
        raise BadInput(f"keep_days must be at least {KEEP_DAYS_FLOOR:g} (every version of the last "
                       f"{KEEP_DAYS_FLOOR:g} days stays restorable), got {keep_days:g}")


def gc(store: str | Path, keep: int, keep_proposals: bool = False, keep_days: float = KEEP_DAYS_FLOOR) -> GcResult:
    if keep < 1:
        raise BadInput(f"--keep must be at least 1 (the current version is always kept), got {keep}")
    check_keep_days(keep_days)
    layout = Layout.open(store)
    with LockedStore(layout, "gc"):
        result = collect(layout, keep, keep_proposals, keep_days)
        history.record_event(layout, "gc", detail=result.summary())
        return result


def collect_if_due(layout: Layout) -> GcResult | None:
    """gc after an accept, under its lock, when a version aged out of the window or many objects are loose.

    Never raises: the accept is written already. A gc that cannot run (a
    damaged proposal, a full disk, a bad setting) leaves everything as it
    was and says so on stderr; the next accept tries again.
    """
    from dream.config import load_settings  # start-up: see dream/cli/__init__.py

    try:
        settings = load_settings(layout.root)
        if not settings.auto_gc:
            return None
        keep_days = settings.keep_days
        check_keep_days(keep_days)
        if not (_version_due(Versions(layout), time.time() - keep_days * DAY_SECONDS)
                or loose_count(layout) >= LOOSE_MAX or small_pack_count(layout) >= SMALL_PACKS_MAX):
            return None
        result = collect(layout, 1, False, keep_days)
        history.record_event(layout, "auto-gc", detail=result.summary())
        return result
    except (DreamError, OSError) as exc:
        sys.stderr.write(f"dream: warning: automatic gc skipped, nothing deleted that is needed: "
                         f"{' '.join(str(exc).split())}\n")
        return None


def _version_due(versions: Versions, cutoff: float) -> bool:
    """Whether the oldest version can go: the one after it is older than the window too."""
    numbers = versions.numbers()
    return len(numbers) > 2 and versions.get(numbers[1]).created_at < cutoff


def collect(layout: Layout, keep: int, keep_proposals: bool, keep_days: float, now: float | None = None) -> GcResult:
    """gc itself; call with the store's lock held."""
    now = time.time() if now is None else now
    _empty_trash(layout)  # what an interrupted gc left behind
    proposals = Proposals(layout)
    versions = Versions(layout, proposals.blobs)
    every = proposals.all(skip_damaged=False)  # blobs of a damaged proposal are unknown: refuse
    pinned = {p.base_version for p in every if p.status == PENDING}
    stamps = {n: versions.stamp(n) for n in versions.numbers()}
    kept = versions_to_keep({n: at for n, (at, _) in stamps.items()}, keep, pinned, now - keep_days * DAY_SECONDS)
    doomed = [n for n in stamps if n not in kept]
    dropped = [] if keep_proposals else proposals_to_delete(every, kept)
    dropped_ids = {p.id for p in dropped}
    ledger = record_collected(versions, set(doomed)) if doomed else load_ledger(layout)
    roots = [root for n in kept if (root := stamps[n][1])]
    records: list[Version | Proposal] = [*(versions.get(n) for n in kept if not stamps[n][1]),
                                         *(p for p in every if p.id not in dropped_ids)]
    referenced = versions.blobs.with_bases(_referenced(versions.blobs, roots, records) | ledger.blobs())
    for p in dropped:
        _delete_proposal(layout, p.id)
    for n in doomed:
        versions.delete(n)
    deleted, freed, packed, packs = repack(layout, referenced, now)
    return GcResult(doomed, kept, deleted, freed, [p.id for p in dropped], packed, packs)


def _referenced(blobs: Blobs, roots: list[str], records: list[Version | Proposal]) -> set[str]:
    """Every object the trees at `roots` and the records name: files and tree nodes."""
    referenced: set[str] = set()
    for record in records:
        referenced.update(record.files.values())
        if record.tree:
            roots.append(record.tree)
    return referenced | blobs.reachable(roots)


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


def loose_count(layout: Layout) -> int:
    return len(Blobs(layout).loose())


def small_pack_count(layout: Layout) -> int:
    """Packs below `MERGE_LIMIT`: the ones a gc merges into one."""
    count = 0
    for path in packfiles.pack_paths(layout.packs):
        try:
            count += path.stat().st_size < MERGE_LIMIT
        except FileNotFoundError:
            continue  # deleted by a gc since the listing
    return count


def repack(layout: Layout, referenced: set[str], now: float) -> tuple[int, int, int, int]:
    """Delete the objects not `referenced`, pack the loose ones that are; (deleted, freed bytes, packed, packs).

    Loose objects nobody needs go first (on a full disk that frees space).
    The referenced loose objects, with what still lives in this month's
    small packs, go into one new pack; an older pack is written again when
    enough of it is dead. Only once a new pack is durable are the files it
    replaces deleted.
    """
    blobs = Blobs(layout)
    loose = blobs.loose(litter=True)  # every writer holds gc's lock: a temporary file is a killed batch's
    deleted = freed = 0
    for name, path in list(loose.items()):
        if name not in referenced:
            freed += path.stat().st_size
            path.unlink()
            deleted += len(name) == 64
            del loose[name]
    groups: dict[str, list[packfiles.Pack]] = {}
    packed: set[str] = set()
    for pack in blobs.packs():
        groups.setdefault(pack.group, []).append(pack)
        packed.update(pack.index)
    this_month = packfiles.month_of(now)
    incoming = [d for d in loose if d not in packed]
    moved = 0
    for group in sorted(set(groups) | ({this_month} if incoming else set())):
        packs = groups.get(group, [])
        rewrite = _to_rewrite(packs, referenced, adding=group == this_month and bool(incoming))
        adding = incoming if group == this_month else []
        if not rewrite and not adding:
            continue
        elsewhere = {d for p in packs if p not in rewrite for d in p.index}
        objects = [(d, p.get(d)) for p in rewrite for d in p.index if d in referenced and d not in elsewhere]
        objects += [(d, blobs.stored(d)) for d in adding]  # a loose object that is not a plain file is refused
        if objects:
            packfiles.write(layout.packs, group, objects)
        moved += len(adding)
        for pack in rewrite:
            dead = [d for d in pack.index if d not in referenced]
            deleted += len(dead)
            freed += sum(pack.index[d][1] for d in dead)
            pack.path.unlink(missing_ok=True)
    for path in loose.values():  # every one is in a durable pack now
        path.unlink()
    return deleted, freed, moved, len(packfiles.pack_paths(layout.packs))


def _to_rewrite(packs: list[packfiles.Pack], referenced: set[str], adding: bool) -> list[packfiles.Pack]:
    """The packs of one month to write again: small ones when objects join them or they are several; any
    holding dead objects, a large one only once a good share of it is."""
    small = [p for p in packs if p.size < MERGE_LIMIT]
    chosen = small if adding or len(small) > 1 else []
    for pack in packs:
        dead = sum(length for d, (_, length) in pack.index.items() if d not in referenced)
        if pack not in chosen and dead and (pack.size < MERGE_LIMIT or dead * DEAD_SHARE >= pack.size):
            chosen.append(pack)
    return chosen
