"""Deciding on a proposal: accept it into the store, or reject it.

Accepting writes the proposal's files into the live store through the
journal in `dream.recovery`, so a crash leaves the store at the base or,
after the next command, at the new version. If the store changed since the
proposal's base version was taken, the agent's edits are merged in
(`dream.merge`); when they collide, accept refuses and writes nothing.
A reviewer may take only some files (`only` / `except_`); the result is
still checked against the index limits before anything is written.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from dream import history
from dream.crashpoints import crashpoint
from dream.errors import BadInput, DiskFull, MergeConflict, Refused, is_disk_full
from dream.review import requests
from dream.review.choices import index_targets, needs, why
from dream.store.layout import Layout
from dream.store.model import Store, parse_index_line, resolve_link
from dream.store.tree import INDEX_NAME, Tree, changed_paths, read_tree, scan_memory_paths, sha256, unsafe_target
from dream.store.validate import errors as validation_errors
from dream.store.validate import validate_tree
from dream.versions.journal import (
    Journal,
    LockedStore,
    apply_journal,
    before_the_journal,
    write_journal,
)
from dream.versions.diffing import tree_diff
from dream.versions.gc import collect_if_due
from dream.versions.manifests import Versions
from dream.store.merge import MergeResult, merge_trees
from dream.versions.proposals import REJECTED, Proposal, Proposals, new_proposal_id


@dataclass
class Decision:
    status: str  # accepted | rejected | rolled_back | rebased
    proposal_id: str | None
    version: int | None
    taken: list[str] = field(default_factory=list)  # accept: proposal files written
    skipped: list[str] = field(default_factory=list)  # accept: proposal files left out
    combined: list[str] = field(default_factory=list)  # accept: files merged with the store's own edits
    pre_accept_version: int | None = None  # accept: the store as found, kept as this version
    new_proposal_id: str | None = None  # rebase: the fresh proposal
    cleaned: list[str] = field(default_factory=list)  # files left by killed dream processes, removed first
    indexed: list[str] = field(default_factory=list)  # accept: new files whose index lines were taken with them

    def to_json(self) -> dict:
        return {"status": self.status, "proposal_id": self.proposal_id, "version": self.version,
                "taken": self.taken, "skipped": self.skipped, "merged": self.combined,
                "pre_accept_version": self.pre_accept_version, "new_proposal_id": self.new_proposal_id,
                "cleaned": self.cleaned, "index_lines_taken_for": self.indexed}




def refuse_special_files(layout: Layout, paths: Iterable[str], action: str) -> None:
    """Refuse a write that would reach a FIFO, socket or device sitting at a memory path it writes or removes.

    `read_tree` leaves such a file out (reading a FIFO hangs), so a plan
    made from it would take the path for absent: it would merge against
    nothing, drop the path from the version, or write over it. Refused
    before anything (a version of the store as found included) is written.
    """
    special = scan_memory_paths(layout.root).special
    hit = sorted(rel for rel in set(paths) if rel in special)
    if hit:
        more = f" (and {len(hit) - 1} more)" if len(hit) > 1 else ""
        raise Refused(f"{layout.root / hit[0]}: is {special[hit[0]]}, not a regular file{more}; dream neither "
                      f"writes over nor removes it; the {action} was not applied, nothing written; move it away "
                      f"and run the {action} again")


def write_tree(layout: Layout, live: Tree, files: dict[str, str], action: str, version_source: str,
               note: str, **extra) -> int:
    """Journal and apply a new tree onto the store; returns the new version number.

    `live` is the store as read under the lock. Every path to write or delete
    must be a plain file or absent (no symlink, no folder, no symlinked
    folder on the way) before anything is written. The journal keeps each
    path's pre-image so the write (or its replay after a crash) refuses
    rather than overwrite an edit made after this plan. `extra` carries the
    audit event's fields (actor, comment, detail, proposal_id).
    """
    versions = Versions(layout)
    new_tree = versions.blobs.get_tree(files)
    changed = changed_paths(live, new_tree)
    for rel in changed:
        problem = unsafe_target(layout.root, rel)
        if problem:
            raise Refused(f"{layout.root / rel}: {problem}; dream does not write through or over it, "
                          f"nothing written")
    with before_the_journal(layout, action):
        kept = versions.blobs.put_tree({rel: live[rel] for rel in changed if rel in live})  # pre-images, one commit
        before = {rel: kept.get(rel) for rel in changed}
        journal = Journal(
            action=action, new_version=(versions.current() or 0) + 1, files=files,
            writes=[p for p in changed if p in new_tree], deletes=[p for p in changed if p not in new_tree],
            version_source=version_source, note=note, extra=extra, before=before,
        )
        crashpoint(f"{action}-before-journal")
        write_journal(layout, journal)
    crashpoint(f"{action}-after-journal")
    apply_journal(layout, journal)
    return journal.new_version


@dataclass
class AcceptPlan:
    """What an accept would write, worked out before anything is written."""

    proposal: Proposal
    live: Tree
    result: Tree  # the store's memory files after the accept
    taken: list[str]  # proposal files taken
    skipped: list[str]  # proposal files left out (--only / --except / review)
    indexed: list[str]  # new files taken without the new index: their index lines were taken too
    merge: MergeResult
    report: dict  # read before the write: a damaged one must stop the accept, not follow it


def select_files(proposal: Proposal, only: list[str] | None, except_: list[str] | None) -> list[str]:
    """The proposal's changed files to take; a name it did not change is bad input."""
    changed = list(proposal.changed)
    for name in [*(only or []), *(except_ or [])]:
        if name not in changed:
            raise BadInput(f"proposal {proposal.id}: {name!r} is not among its changed files "
                           f"({', '.join(changed[:5])}{', …' if len(changed) > 5 else ''})")
    taken = [p for p in changed if (not only or p in only) and p not in (except_ or [])]
    return taken


def partial_tree(base: Tree, proposed: Tree, taken: list[str]) -> Tree:
    """The base version with only the taken files of the proposal applied.

    A store the agent reads whole either way: a deletion left out while the
    new index is taken keeps its file and its index line, and a new file
    taken while the new index is left out brings its own index line
    (`indexed_along`); otherwise the agent would never read that file.
    """
    tree = dict(base)
    for path in taken:
        if path in proposed:
            tree[path] = proposed[path]
        else:
            tree.pop(path, None)
    kept = {p for p in base if p not in proposed and p not in taken}  # deletions left out
    if INDEX_NAME in taken and INDEX_NAME in base and INDEX_NAME in proposed and kept:
        tree[INDEX_NAME] = keep_pointers(base[INDEX_NAME], proposed[INDEX_NAME], kept)
    if added := indexed_along(base, proposed, taken):
        tree[INDEX_NAME] = keep_pointers(proposed[INDEX_NAME], base.get(INDEX_NAME, b""), set(added))
    return tree


def indexed_along(base: Tree, proposed: Tree, taken: list[str]) -> list[str]:
    """The new files taken without the new index, whose index lines the accept takes with them."""
    if INDEX_NAME in taken or INDEX_NAME not in proposed:
        return []
    pointed, pointed_before = index_targets(proposed), index_targets(base)
    return [p for p in taken if p in proposed and p not in base and p in pointed and p not in pointed_before]


def keep_pointers(old_index: bytes, new_index: bytes, kept: set[str]) -> bytes:
    """`new_index` with the lines of `old_index` that point to a file of `kept` put back where they stood.

    Each goes after the nearest line above it that the new index still has
    (at the top when there is none).
    """
    old = old_index.decode("utf-8", errors="replace").splitlines(keepends=True)
    new = new_index.decode("utf-8", errors="replace").splitlines(keepends=True)
    if new and not new[-1].endswith("\n"):
        new[-1] += "\n"
    for number, line in enumerate(old):
        targets = {resolve_link(INDEX_NAME, link) for link in parse_index_line(line.rstrip("\n")).links}
        if not targets & kept or line in new:
            continue
        above = next((new.index(prior) + 1 for prior in reversed(old[:number]) if prior in new), 0)
        new.insert(above, line if line.endswith("\n") else line + "\n")
    return "".join(new).encode("utf-8")


def plan_accept(layout: Layout, proposal: Proposal, only: list[str] | None = None,
                except_: list[str] | None = None) -> AcceptPlan:
    """Merge the (possibly partial) proposal onto the live store and check the result.

    Raises `MergeConflict` when the store's later edits collide with it, and
    `Refused` when the result would break the index limits or leave a
    pointer to a file this accept removes.
    """
    proposals = Proposals(layout)
    report = proposals.report(proposal)
    base = Versions(layout, proposals.blobs).tree(proposal.base_version)  # one cache: most files are shared
    proposed = proposals.tree(proposal)
    taken = select_files(proposal, only, except_)
    refuse_special_files(layout, taken, "accept")
    live = read_tree(layout.root)
    merged = merge_trees(base, live, partial_tree(base, proposed, taken))
    written = changed_paths(live, merged.tree)
    _check_result(layout, proposal, merged.tree, live, written)
    skipped = [p for p in proposal.changed if p not in taken]
    return AcceptPlan(proposal, live, merged.tree, taken, skipped, indexed_along(base, proposed, taken), merged,
                      report)


def _check_result(layout: Layout, proposal: Proposal, result: Tree, live: Tree, written: list[str]) -> None:
    """The result must stay within the limits and point only at files that exist.

    Problems the live store already had are not this accept's doing and do
    not block it; new ones do.
    """
    before = {(f.path, f.rule, f.message) for f in validation_errors(validate_tree(live, set(written)))}
    problems = [f"{f.path}: {f.message}" for f in validation_errors(validate_tree(result, set(written), base=live))
                if (f.path, f.rule, f.message) not in before]
    removed = [p for p in written if p not in result]
    index = Store.from_tree({INDEX_NAME: result[INDEX_NAME]}) if INDEX_NAME in result else None
    for line in (index.index_lines if index else []):
        for target in parse_index_line(line).links:
            if resolve_link(INDEX_NAME, target) in removed:
                problems.append(f"{INDEX_NAME} would still point to {target}, which this accept removes "
                                f"(take {INDEX_NAME} too)")
    if problems:
        raise Refused(f"{layout.root}: accepting proposal {proposal.id} this way breaks "
                      f"{len(problems)} rule(s), first: {problems[0]}; nothing written")


def accept(store: str | Path, proposal_id: str | None = None, comment: str | None = None, *,
           only: list[str] | None = None, except_: list[str] | None = None, who: str | None = None) -> Decision:
    """Write a pending proposal (or some of its files) into the store as the next version.

    Edits the agent made since the proposal's base are merged in; on a
    conflict nothing is written. The store as found is first recorded as a
    version (`pre-accept`) when it differs from the current one.
    """
    layout = Layout.open(store)
    actor = who or history.actor()
    with LockedStore(layout, "accept") as locked:
        proposals = Proposals(layout)
        proposal = proposals.awaiting_decision(proposal_id)
        try:
            plan = plan_accept(layout, proposal, only, except_)
        except MergeConflict as conflict:
            raise MergeConflict(f"{layout.root}: proposal {proposal.id} not accepted, nothing written: {conflict}; "
                                f"resolve by `dream rebase {proposal.id}`", conflict.conflicts) from None
        with before_the_journal(layout, "accept"):
            pre = _record_pre_accept(layout, plan.live, proposal.id)
            files = Versions(layout).blobs.put_tree(plan.result, base=proposal.files)  # merged files: deltas
        version = write_tree(
            layout, plan.live, files, "accept", "accept", note=f"accepted proposal {proposal.id}",
            proposal_id=proposal.id, actor=actor, comment=comment, detail=_detail(plan, pre),
        )
        with _written_already(layout, "accept", version):
            left = leave_pending(layout, proposal, plan.report, plan.skipped, version, consumed_by_decision=True)
        collect_if_due(layout)  # old versions and loose objects; never fails the accept
    return Decision("accepted", proposal.id, version, taken=plan.taken, skipped=plan.skipped,
                    combined=plan.merge.combined, pre_accept_version=pre, cleaned=locked.cleaned,
                    new_proposal_id=left, indexed=plan.indexed)


def leave_pending(layout: Layout, proposal: Proposal, report: dict, files: list[str], onto: int,
                  consumed_by_decision: bool, forget: bool = False) -> str | None:
    """What a person did not decide on stays pending: `files` as a proposal rebased onto version `onto`.

    The logs behind `files` pass to that proposal; the others were decided
    on: consumed (`consumed_by_decision`: an accept, or a reject with
    `forget`), else released, so the next run offers their requests again.
    Returns the new proposal's id (None when nothing is left, or the rest
    no longer fits the store: then its logs are released, never lost).
    `report` is the proposal's, read before the decision was written.
    """
    kept_logs = requests.logs_behind(report, files) if files else set()
    left = carry_over(layout, proposal, files, onto, requests.narrowed(report, files, kept_logs)) if files else None
    decided = requests.logs_read(report) - (kept_logs if left else set())
    if consumed_by_decision or forget:
        requests.settle(layout, report, consumed=decided, held=kept_logs if left else (), holder=left)
    else:
        requests.settle(layout, report, released=decided, held=kept_logs if left else (), holder=left)
    return left


def carry_over(layout: Layout, proposal: Proposal, files: list[str], onto: int, report: dict) -> str | None:
    """A new pending proposal: version `onto` with the proposal's changes to `files` merged in.

    The same merge as an accept's (`dream.store.merge`): the person's
    decision on the other files is already in `onto`. None when that merge
    conflicts or leaves nothing to change.
    """
    proposals = Proposals(layout)
    versions = Versions(layout, proposals.blobs)
    base, onto_tree = versions.tree(proposal.base_version), versions.tree(onto)
    try:
        merged = merge_trees(base, onto_tree, partial_tree(base, proposals.tree(proposal), files))
    except MergeConflict:
        return None
    changed = changed_paths(onto_tree, merged.tree)
    if not changed:
        return None
    from dream.review import retention  # start-up: rapidfuzz and the similarity tables; only a carry-over needs them

    left = Proposal(id=new_proposal_id(), created_at=time.time(), base_version=onto, engine=proposal.engine,
                    run_id=proposal.run_id, files={}, changed=changed, meta={"carried_from": proposal.id})
    report = {**report, "proposal_id": left.id, "files_changed": changed, "carried_from": proposal.id,
              "base_version": onto, "retention": retention.summarize(onto_tree, merged.tree)}
    proposals.create(left, tree_diff(onto_tree, merged.tree), report, tree=merged.tree)
    history.record_event(layout, history.LEFT_PENDING, left.id, onto, detail=f"the rest of proposal {proposal.id}")
    return left.id


@contextmanager
def _written_already(layout: Layout, action: str, version: int) -> Iterator[None]:
    """After the write: a full disk costs only the replay list, and the message says the write stands."""
    try:
        yield
    except OSError as exc:
        if not is_disk_full(exc):
            raise
        raise DiskFull(f"{layout.dream}: disk full ({exc.strerror}) after the {action} was written as version "
                       f"{version}: the sessions to read again could not be listed; nothing else was lost") from None


def _record_pre_accept(layout: Layout, live: Tree, proposal_id: str) -> int | None:
    """Keep the store as found (the agent's writes of the day) as a version of its own."""
    versions = Versions(layout)
    current = versions.current()
    if current is not None and versions.get(current).files == {rel: sha256(data) for rel, data in live.items()}:
        return None  # compared by digest: no blob is read
    return versions.record(live, "pre-accept", note=f"store as found before accepting {proposal_id}").number


def _detail(plan: AcceptPlan, pre: int | None) -> str:
    parts = [f"took {len(plan.taken)} of {len(plan.proposal.changed)} file(s)"]
    if plan.skipped:
        parts.append("skipped: " + ", ".join(plan.skipped))
    if plan.merge.combined:
        parts.append("merged with store edits: " + ", ".join(plan.merge.combined))
    if pre is not None:
        parts.append(f"store as found kept as version {pre}")
    return "; ".join(parts)


def reject(store: str | Path, proposal_id: str | None = None, comment: str | None = None, *,
           forget_requests: bool = False, only: list[str] | None = None) -> Decision:
    """Say no to a pending proposal, or (`only`) to some of its files; the others stay pending.

    The requests behind what was rejected come back in the next run, unless
    `forget_requests`.
    """
    layout = Layout.open(store)
    with LockedStore(layout, "reject"):
        proposals = Proposals(layout)
        proposal = proposals.awaiting_decision(proposal_id)
        rejected = select_files(proposal, only, None)
        kept = [p for p in proposal.changed if p not in rejected]
        _refuse_broken_rest(proposal, proposals, kept, rejected)
        report = proposals.report(proposal)  # before the decision is written: damage stops it, not follows it
        proposals.set_status(proposal, REJECTED)
        left = leave_pending(layout, proposal, report, kept, proposal.base_version, consumed_by_decision=False,
                             forget=forget_requests)
    detail = f"rejected {', '.join(rejected)}; the rest pending as {left}" if kept else None
    history.record_event(layout, "reject", proposal.id, None, comment, detail=detail)
    return Decision("rejected", proposal.id, None, skipped=rejected, new_proposal_id=left)


def _refuse_broken_rest(proposal: Proposal, proposals: Proposals, kept: list[str], rejected: list[str]) -> None:
    """Rejecting a file the kept ones need (a new file the new index points to) would break the rest."""
    if not kept:
        return
    base = Versions(proposals.layout, proposals.blobs).tree(proposal.base_version)
    for path, required in needs(base, proposals.tree(proposal), list(proposal.changed)).items():
        for other in sorted(required & set(rejected)):
            if path in kept:
                raise Refused(f"proposal {proposal.id}: rejecting {other} but not {path} breaks the rest: "
                              f"{why(path, other)}; reject {path} too, nothing written")


def rollback(store: str | Path, number: int, comment: str | None = None) -> Decision:
    """Restore version `number`'s bytes as a new version; unrecorded edits are kept as a version first."""
    layout = Layout.open(store)
    with LockedStore(layout, "rollback") as locked:
        versions = Versions(layout)
        target = versions.get(number)
        current = versions.current()
        refuse_special_files(layout, [*target.files, *(versions.get(current).files if current else ())], "rollback")
        live = read_tree(layout.root)
        if current is None or versions.tree(current) != live:
            with before_the_journal(layout, "rollback"):
                versions.record(live, "snapshot", note="store as found before rollback")
        undone = requests.undone_by_rollback(layout, number)
        rolled = f"; rolls back proposal(s) {', '.join(p.id for p in undone)}" if undone else ""
        if target.meta.get("purged"):  # dream.versions.purge: the bytes are not the ones first stored
            rolled += f"; version {number} was purged of a secret ({target.meta['purged']}): its redacted bytes"
        version = write_tree(
            layout, live, target.files, "rollback", "rollback", note=f"rollback to version {number}",
            actor=history.actor(), comment=comment, detail=f"to version {number}{rolled}", target=number,
        )
        with _written_already(layout, "rollback", version):
            requests.release_rolled_back(layout, undone)  # they say rolled_back; their requests come back
    return Decision("rolled_back", None, version, cleaned=locked.cleaned)

