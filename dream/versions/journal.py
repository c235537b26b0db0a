"""Crash safety for writes into the live store.

Writing a proposal's files into the store touches several files, and no
file system can replace several files in one step. So a write first records
its whole plan in a journal (``.dream/accept.journal.json``, written
atomically: the commit point), then applies it. Every later dream command
that takes the store's lock first rolls an unfinished journal forward. The
plan only names blobs already in the version store, so replaying it is
idempotent. A crash before the journal exists leaves the old store; a crash
after it leads, at the next command, to exactly the new one.

The agent does not take dream's lock: it may edit a memory file between the
plan and the write, or between a crash and the replay. So the journal also
holds each path's pre-image (its sha256 when planned, or absent), and every
file is written by compare-and-swap against it (`dream.store.cas`): an edit
made meanwhile is merged three-way into the new bytes, which the version then
records (the journal is rewritten to expect them, and keeps the bytes planned
before the merge: undoing the write, now or in a replay, takes out only those). If an edit collides with the write, or a path stops being a plain
file, nothing more is written: the files this journal already wrote get their
pre-images back (by the same compare-and-swap, so an edit made to them since
is kept), the store as found is kept as a version, the journal is dropped,
and the user is told to run the command again (accept re-merges against the
edited store).

A full disk cannot split a write either. Every new file is written to a
temporary file beside its path before the first swap (`stage`); swapping a
staged file in needs no new space. So ENOSPC before the journal, or while
staging, leaves the old store and no journal ("nothing of it written");
ENOSPC after the first swap (a merge's new bytes, the version record, the
audit event) leaves the journal, which the next command completes. The
error (`DiskFull`, exit 2) says which of the two happened.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

from dream import history
from dream.crashpoints import crashpoint
from dream.errors import BadInput, DiskFull, LockBusy, Refused, is_disk_full
from dream.store.codex import held_by_codex
from dream.store.records import CutShortRecord, DamagedRecord, parse_record, read_record_bytes
from dream.store import litter
from dream.store.cas import compare_and_swap, observe, put_back, stage, written_then_added_to
from dream.store.regular import NotRegular
from dream.store.layout import Layout
from dream.store.lock import describe_holder, store_lock
from dream.store.tree import (
    Tree,
    atomic_write,
    fsync_dir,
    is_memory_path,
    read_tree,
    sha256,
    unsafe_target,
)
from dream.versions.manifests import Blobs, Versions
from dream.versions.proposals import ACCEPTED, Proposals


class JournalBlocked(BadInput):
    """An interrupted write cannot be finished (its journal is damaged); the journal stays until someone acts.

    Damaged input like any other damaged record: exit 2, one line naming the file.
    """


class StoreChangedDuringWrite(Refused):
    """A path changed between the plan and the write; the write was given up, nothing lost."""


@dataclass
class Journal:
    action: str  # accept | rollback
    new_version: int
    files: dict[str, str]  # the complete new tree: path -> sha256
    writes: list[str]  # paths to (re)write from `files`
    deletes: list[str]  # paths to remove
    version_source: str
    note: str = ""
    extra: dict = field(default_factory=dict)  # proposal_id, actor, comment, detail (for the audit event)
    before: dict[str, str | None] = field(default_factory=dict)  # path -> sha256 when planned; None: absent
    # path -> sha256 of the bytes planned there before an agent's edit was merged in (`files` then holds the
    # merged bytes, which the version records): undoing the write takes out these, never the agent's lines
    planned: dict[str, str | None] = field(default_factory=dict)  # None: it planned to remove the path

    @property
    def paths(self) -> list[str]:
        return [*self.writes, *self.deletes]


def write_journal(layout: Layout, journal: Journal) -> None:
    atomic_write(layout.journal, json.dumps(asdict(journal)).encode())


def load_journal(layout: Layout) -> Journal | None:
    """The unfinished journal, None when there is none; `JournalBlocked` when it makes no sense."""
    try:
        data = read_record_bytes(layout.journal, "journal")
    except FileNotFoundError:
        return None
    except DamagedRecord as exc:  # a FIFO, a folder, unreadable: nobody can tell what it planned
        raise _blocked(layout, f"cannot be read ({exc})") from None
    try:
        journal = parse_record(data, Journal, "journal")
    except CutShortRecord:
        # The journal is written atomically, so one that is cut short was never committed.
        layout.journal.unlink(missing_ok=True)
        return None
    except DamagedRecord as exc:  # whole, but not one dream wrote (wrong keys, nested past any journal)
        raise _blocked(layout, f"is not a journal dream wrote ({exc})") from None
    problem = _journal_problem(journal)
    if problem:
        raise _blocked(layout, problem)
    return journal


def _journal_problem(j: Journal) -> str | None:
    """What makes a well-typed journal unusable (paths outside the memory files, no pre-image)."""
    for rel in [*j.files, *j.paths]:
        if not isinstance(rel, str) or not is_memory_path(rel) or rel.startswith("/") or "" in rel.split("/"):
            return f"names {rel!r}, which is not a memory file path"
    digests = [*j.files.values(), *(d for d in j.planned.values() if d is not None)]
    if any(not isinstance(d, str) or len(d) != 64 for d in digests):
        return "has a file digest that is not a sha256"
    if any(rel not in j.paths for rel in j.planned):
        return "names planned bytes for a file it does not write"
    # a path it removes is kept only when an agent wrote it again meanwhile (merged: `planned` says so)
    if any(rel not in j.files for rel in j.writes) or any(rel in j.files and rel not in j.planned
                                                           for rel in j.deletes):
        return "writes a file it does not list, or deletes one it keeps"
    missing = [rel for rel in j.paths if rel not in j.before]
    if missing:
        return f"has no pre-image for {missing[0]!r}"
    return None


def _blocked(layout: Layout, problem: str) -> JournalBlocked:
    return JournalBlocked(f"{layout.journal}: an interrupted accept or rollback {problem}; the store's files "
                          f"are left as they are; move that file aside to give the write up")


def apply_journal(layout: Layout, journal: Journal, replay: bool = False) -> None:
    """Make the store's memory files exactly `journal.files`, record the version, drop the journal.

    Call with the store's lock held. Each file is written by compare-and-swap
    (`dream.store.cas`): an edit the agent makes meanwhile is merged in, and
    the version records the merged bytes. A `replay` (after a crash) takes a
    path already holding the journal's bytes, with lines added since, as
    written. Raises `StoreChangedDuringWrite`
    (after giving the write up safely) when a path is no longer a plain file
    or an edit collides with the write.
    """
    new_tree = _load_blobs(layout, journal)
    if not _version_recorded(layout, journal):  # else every file was written before a crash
        unsafe = _unsafe_paths(layout, journal)
        if unsafe:
            _give_up(layout, journal, unsafe, replay=replay)
        staged = _stage_files(layout, journal, new_tree, replay)
        try:
            merged = _write_files(layout, journal, new_tree, staged, swapped={}, replay=replay)
        finally:
            for leftover in staged.values():  # a write given up: its staged files are litter now
                leftover.unlink(missing_ok=True)
        try:
            if merged:  # the version must hold what the store holds, and a replay must expect it
                Blobs(layout).put_tree({rel: new_tree[rel] for rel in merged})  # a replay loads them
                write_journal(layout, journal)
            crashpoint(f"{journal.action}-after-apply")
            Versions(layout).record(
                new_tree, journal.version_source, note=journal.note, number=journal.new_version,
                proposal_id=journal.extra.get("proposal_id"), actor=journal.extra.get("actor"),
            )
        except OSError as exc:
            if is_disk_full(exc):
                raise _unfinished(layout, journal, f"recording version {journal.new_version} failed") from None
            raise
    crashpoint(f"{journal.action}-after-version")
    try:
        _after_apply(layout, journal)
    except OSError as exc:
        if is_disk_full(exc):
            raise _unfinished(layout, journal, "recording it in the history failed") from None
        raise
    _drop_journal(layout, journal)


def _drop_journal(layout: Layout, journal: Journal) -> None:
    """The write is finished or given up: what killed processes left beside its paths goes, then the journal.

    The journal names every temporary file such a write makes before the
    first exists (each is ``.<name>.~dream-….tmp`` beside a path it plans),
    so whichever command finishes the write removes them."""
    litter.planned_temps(layout, journal.paths)
    layout.journal.unlink(missing_ok=True)
    fsync_dir(layout.dream)


@contextmanager
def before_the_journal(layout: Layout, action: str) -> Iterator[None]:
    """Preparing a write (blobs, versions, the journal itself): a full disk here leaves the store as it was."""
    try:
        yield
    except OSError as exc:
        if not is_disk_full(exc):
            raise
        layout.journal.unlink(missing_ok=True)  # a journal the disk could not hold whole was never committed
        raise DiskFull(f"{layout.dream}: disk full ({exc.strerror}) while preparing the {action}; it was not "
                       f"applied and the store's files are as they were; free some space and run it again") from None


def _stage_files(layout: Layout, journal: Journal, new_tree: Tree, replay: bool) -> dict[str, Path]:
    """Every new file written beside its path before any swap; a full disk here gives the write up whole."""
    staged: dict[str, Path] = {}
    try:
        for rel in journal.writes:
            staged[rel] = stage(layout.root / rel, new_tree[rel])
    except OSError as exc:
        for tmp in staged.values():
            tmp.unlink(missing_ok=True)
        if not is_disk_full(exc):
            _give_up(layout, journal, [(rel, exc.strerror or str(exc))], replay=replay)
        _abandon_for_space(layout, journal, rel, exc)
    return staged


def _abandon_for_space(layout: Layout, journal: Journal, rel: str, exc: OSError) -> NoReturn:
    """Nothing visible was written: drop the journal, say so in the history if it still fits, refuse."""
    layout.journal.unlink(missing_ok=True)
    fsync_dir(layout.dream)
    detail = f"{rel}: disk full ({exc.strerror}) before any file was swapped in; nothing of it written"
    try:
        _record_event(layout, journal, f"{journal.action}-abandoned", None, detail, strict=True)
        noted = ""
    except OSError:
        noted = " (the history could not record it either)"
    raise DiskFull(f"{layout.root / rel}: disk full ({exc.strerror}); the {journal.action} was not applied and "
                   f"nothing of it was written{noted}; free some space and {_retry_hint(journal)}")


def _unfinished(layout: Layout, journal: Journal, what: str) -> DiskFull:
    """The files are (partly) swapped in: the journal stays, and the next command completes the write."""
    return DiskFull(f"{layout.journal}: disk full during the {journal.action}: {what}; the journal keeps the "
                    f"plan and the next dream command finishes the {journal.action} (free some space first); "
                    f"nothing was lost")


def _load_blobs(layout: Layout, journal: Journal) -> Tree:
    try:
        return Blobs(layout).get_tree(journal.files)
    except BadInput as missing:
        raise _blocked(layout, f"cannot be finished: {missing}") from None


def _version_recorded(layout: Layout, journal: Journal) -> bool:
    versions = Versions(layout)
    if journal.new_version not in versions.numbers():
        return False
    return versions.get(journal.new_version).files == journal.files


def _unsafe_paths(layout: Layout, journal: Journal) -> list[tuple[str, str]]:
    """Paths that are no longer a plain file or absent (a folder, a symlink …), with what is wrong."""
    return [(rel, problem) for rel in journal.paths if (problem := unsafe_target(layout.root, rel))]


def _pre_image(blobs: Blobs, journal: Journal, rel: str) -> bytes | None:
    digest = journal.before[rel]
    return None if digest is None else blobs.get(digest)


def _planned_digest(journal: Journal, rel: str) -> str | None:
    """The sha256 this write planned at `rel` before any merge (None: it removes the path)."""
    return journal.planned[rel] if rel in journal.planned else journal.files.get(rel)


def _planned_bytes(blobs: Blobs, journal: Journal, rel: str) -> bytes | None:
    """What this write planned at `rel` before any merge: what undoing it takes out (None: it removes it)."""
    digest = _planned_digest(journal, rel)
    return None if digest is None else blobs.get(digest)


def _write_files(layout: Layout, journal: Journal, new_tree: Tree, staged: dict[str, Path],
                 swapped: dict[str, bytes | None], replay: bool = False) -> list[str]:
    """Compare-and-swap every planned path; returns the paths merged with an edit made meanwhile.

    `journal` and `new_tree` take the merged bytes. An edit that collides
    with the write stays in place and the write is given up, taking back
    every path in `swapped` (path -> the bytes this write planned there,
    before any merge, also in a replay; filled as it goes). `staged` holds the new files already written beside their paths;
    each is used up.
    """
    blobs, merged = Blobs(layout), []
    for i, rel in enumerate([*journal.writes, *journal.deletes]):
        planned = new_tree.get(rel)
        try:
            before = _pre_image(blobs, journal, rel)
            if replay and _written_before(layout, rel, planned, before):
                before = planned  # the killed process wrote it, the agent added to it since: merge, not collide
            result = compare_and_swap(layout.root / rel, before, planned, staged.pop(rel, None))
        except NotRegular:
            _give_up(layout, journal, [(rel, "is no longer a plain file")], swapped, replay)
        except OSError as exc:
            if is_disk_full(exc):  # undoing would need space too: the journal finishes it later
                raise _unfinished(layout, journal, f"{rel} needed new space ({i} of {len(journal.paths)} "
                                                   f"files swapped in)") from None
            _give_up(layout, journal, [(rel, exc.strerror or str(exc))], swapped, replay)
        if result.conflict:
            _give_up(layout, journal, [(rel, "was edited during the write, on the lines the write changes")],
                     swapped, replay)
        # taking it back takes out these bytes, and keeps what was merged in (a replay's `planned` is merged)
        swapped[rel] = _planned_bytes(blobs, journal, rel) if rel in journal.planned else planned
        if result.merged and result.data is not None:
            journal.planned.setdefault(rel, journal.files.get(rel))
            new_tree[rel] = result.data
            journal.files[rel] = sha256(result.data)
            merged.append(rel)
        if i == 0:
            crashpoint(f"{journal.action}-after-first-write")
    return merged


def _give_up(layout: Layout, journal: Journal, changed: list[tuple[str, str]],
             swapped: dict[str, bytes | None] | None = None, replay: bool = False) -> NoReturn:
    """Undo this journal's own writes, keep the store as found as a version, drop the journal, refuse."""
    stuck = _restore_pre_images(layout, journal, swapped or {}, replay)
    _drop_journal(layout, journal)  # first: a replay must not mistake the version below for ours
    kept = _keep_store_as_found(layout, journal)
    rel, problem = changed[0]
    more = f" (and {len(changed) - 1} more)" if len(changed) > 1 else ""
    where = f" (the store as found is version {kept})" if kept else ""
    if stuck:  # the agent's lines are in the live files either way; these files keep the new text too
        where += (f"; {', '.join(stuck)} could not be put back and hold{'s' if len(stuck) == 1 else ''} "
                  f"the {journal.action}'s text with every edit made since, the text before it is in "
                  f"version {journal.new_version - 1}")
    _record_event(layout, journal, f"{journal.action}-abandoned", kept,
                  f"{rel}: {problem}{more}; nothing of it written{where}")
    raise StoreChangedDuringWrite(
        f"{layout.root / rel}: {problem}{more}; the {journal.action} was not applied and nothing was lost"
        f"{where}; {_retry_hint(journal)}")


def _restore_pre_images(layout: Layout, journal: Journal, swapped: dict[str, bytes | None],
                        replay: bool) -> list[str]:
    """Every path this journal wrote or deleted gets its pre-image back, with any edit made since.

    Ours are the paths this process swapped (`swapped`: the bytes it planned
    there, which taking back takes out, keeping what another writer added)
    and, in a `replay` of a write a crash interrupted, those holding the
    journal's planned bytes (with only lines another writer added since, or
    merged in before the crash: the bytes planned before any merge are what is
    taken out, so a line merged in is kept). A path still at its pre-image, or edited by someone
    else, is not ours: it is left as it is. Returns the paths that could not
    be put back (they changed shape, or the pre-image cannot be read).
    """
    blobs, stuck = Blobs(layout), []
    for rel in journal.paths:
        if journal.before[rel] == _planned_digest(journal, rel) or (rel not in swapped and not replay):
            continue
        try:
            if rel in swapped:
                written = swapped[rel]
            else:
                written = _planned_bytes(blobs, journal, rel)
                if not _written_before(layout, rel, written, _pre_image(blobs, journal, rel)):
                    continue
            if not put_back(layout.root / rel, written, _pre_image(blobs, journal, rel)):
                stuck.append(rel)
        except BadInput:
            stuck.append(rel)
    return stuck


def _written_before(layout: Layout, rel: str, planned: bytes | None, before: bytes | None) -> bool:
    """Whether the path holds `planned` (None: is absent) as an earlier, killed process left it, or with
    only lines another writer added since."""
    if planned == before or unsafe_target(layout.root, rel):
        return False
    try:
        return written_then_added_to(observe(layout.root / rel).data, planned, before)
    except NotRegular:
        return False


def _keep_store_as_found(layout: Layout, journal: Journal) -> int | None:
    """Record the live memory files as a version unless the current one already holds them."""
    live = read_tree(layout.root)
    versions = Versions(layout)
    current = versions.current()
    if current is not None and versions.tree(current) == live:
        return None
    note = f"store as found when a {journal.action} was given up: it changed during the write"
    return versions.record(live, "snapshot", note=note).number


def _retry_hint(journal: Journal) -> str:
    if journal.action == "accept" and journal.extra.get("proposal_id"):
        return f"run `dream accept {journal.extra['proposal_id']}` again to merge the edits"
    if journal.action == "rollback" and journal.extra.get("target") is not None:
        return f"run `dream rollback {journal.extra['target']}` again"
    return f"run the {journal.action} again"


def _after_apply(layout: Layout, journal: Journal) -> None:
    """Mark the proposal accepted and record the audit event (both idempotent), so a replay does them too."""
    proposal_id = journal.extra.get("proposal_id")
    if journal.action == "accept" and proposal_id:
        proposals = Proposals(layout)
        proposal = proposals.get(proposal_id)
        if proposal.status != ACCEPTED:
            proposals.set_status(proposal, ACCEPTED, accepted_version=journal.new_version)
    if not history.event_recorded(layout, journal.action, journal.new_version):
        # strict: while the event is not written the journal stays, and the next command writes it
        _record_event(layout, journal, journal.action, journal.new_version, journal.extra.get("detail"), strict=True)


def _record_event(layout: Layout, journal: Journal, action: str, version: int | None, detail: str | None,
                  strict: bool = False) -> None:
    history.record_event(layout, action, journal.extra.get("proposal_id"), version, journal.extra.get("comment"),
                         detail=detail, who=journal.extra.get("actor"), strict=strict)


def recover(layout: Layout) -> bool:
    """Roll an interrupted write forward. Call with the store's lock held.

    Raises `JournalBlocked` when the journal cannot be used (it stays), and
    `StoreChangedDuringWrite` when the store changed since (the write is given up).
    """
    journal = load_journal(layout)
    if journal is None:
        return False
    apply_journal(layout, journal, replay=True)
    return True


def recover_and_clean(layout: Layout) -> list[str]:
    """What every command that takes the store's lock does first: finish an interrupted write, then remove
    what killed dream processes left (the temporary files the write's journal planned, staging copies)."""
    cleaned = litter.clean(layout, _planned(layout))  # first: under the lock all of it is stale
    recover(layout)
    return cleaned


def finish_interrupted_write(layout: Layout) -> tuple[str | None, list[str]]:
    """Roll forward an interrupted accept or rollback and remove what killed processes left, unless
    someone holds the lock.

    For commands that do not take the lock themselves (status, a run whose
    gate is closed). Returns why the write could not be finished (so the
    caller can report it instead of failing) and what was removed.
    """
    interrupted, cleaned = layout.journal.exists(), []
    if not interrupted and not litter.present(layout):
        return None, []
    try:
        with store_lock(layout, "recover", purpose="recover"):
            cleaned = litter.clean(layout, _planned(layout))
            recover(layout)
    except LockBusy:
        pass  # the holder recovers it itself
    except (Refused, JournalBlocked) as problem:
        return str(problem), cleaned
    except (BadInput, OSError):
        if interrupted:
            raise
        # only litter was left, and this store cannot be written (read-only, another user's): it stays
    return None, cleaned


def _planned(layout: Layout) -> list[str]:
    """The paths the interrupted write's journal plans; none when it cannot be read (it blocks, and stays)."""
    try:
        journal = load_journal(layout)
    except JournalBlocked:
        return []
    return journal.paths if journal else []


LOCK_WAIT_SECONDS = 10


class LockedStore:
    """Hold the store's lock for a decision, turning a busy lock into a clear refusal.

    Entering also finishes (or safely gives up) a write a crash interrupted, and
removes the temporary files and staging copies killed processes left.
    """

    def __init__(self, layout: Layout, purpose: str):
        self.cm = store_lock(layout, f"{purpose}-{os.getpid()}", purpose=purpose, wait=LOCK_WAIT_SECONDS)
        self.layout, self.purpose = layout, purpose
        self.cleaned: list[str] = []  # litter of killed processes, removed on entering

    def __enter__(self):
        try:
            with before_the_journal(self.layout, self.purpose):
                self.cm.__enter__()
        except LockBusy as busy:
            raise Refused(f"{self.layout.root}: {describe_holder(busy.holder)}; try again when it ends") from None
        if held := held_by_codex(self.layout.root):  # Codex's own consolidation is writing the folder
            self.cm.__exit__(None, None, None)
            raise Refused(f"{self.layout.root}: {held}; nothing written, try again when it ends")
        try:
            self.cleaned = recover_and_clean(self.layout)
        except BaseException as exc:
            self.cm.__exit__(type(exc), exc, exc.__traceback__)
            raise
        return self

    def __exit__(self, *exc):
        return self.cm.__exit__(*exc)
