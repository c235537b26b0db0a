"""A dream run, stage by stage:

    (recover) → (import) → gate → lock → snapshot → gather → consolidate → validate → propose → record → policy

`run` is the one place this sequence is written. The command line calls it
as it is; the Prefect flow passes hooks (`call` runs each stage as a task,
`hold` takes its concurrency slot beside the file lock); rebase passes
options (`force`, `every_log`). First an accept or rollback that a crash
interrupted is finished, whatever the gate says; the optional import derives
activity logs from the agent's own session transcripts when the store's
config names a source (`transcripts = ...`).

Nothing here writes to the store's memory files: the engine works on a
staging copy under ``.dream/staging/`` and the result is a proposal that
waits for review (or for the `auto_accept` policy).
"""

from __future__ import annotations

import time
import uuid
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

from dream import history, lint, notes
from dream.config import Settings, load_settings
from dream.engines import (
    Change,
    Engine,
    EngineInput,
    EngineResult,
    require_configured,
    resolve_engine_name,
    select_engine,
)
from dream.engines.base import HOUSEKEEPING
from dream.errors import BadInput, LockBusy, RunFailed, ValidationFailed
from dream.outcomes import NoopReason, RunOutcome, SkipReason, Status
from dream.pipeline.gate import GateDecision, check_gate, store_ledger
from dream.pipeline.gather import Gathered, read_sessions
from dream.store.ledger import Ledger, Read, held, save_ledger, unread
from dream.pipeline.report import build_report
from dream.store.sessions import SessionFile, scan_sessions
from dream.store.state import (
    StoreState,
    backoff_seconds,
    load_state,
    save_state,
    shrinks_next_part,
)
from dream.review import answer_note, budget, retention
from dream.store import pinned
from dream.store.model import unparseable
from dream.store import codex
from dream.store.layout import Layout
from dream.store.layouts import LayoutKind, layout_of, named, over_budget
from dream.store.lock import store_lock
from dream.store.staging import Staging
from dream.store.tree import (
    INDEX_NAME,
    MAX_MEMORY_FILE_BYTES,
    Tree,
    changed_paths,
    has_own_size_rule,
    mark_format,
    read_tree,
    scan_memory_paths,
    sha256,
)
from dream.store.validate import errors as validation_errors
from dream.store.validate import validate_tree
from dream.transcripts import usage
from dream.versions.diffing import tree_diff
from dream.versions.journal import finish_interrupted_write, recover_and_clean
from dream.versions.manifests import Versions
from dream.versions.proposals import SUPERSEDED, Proposal, Proposals, new_proposal_id

if TYPE_CHECKING:
    from dream.transcripts.importer import ImportResult

Progress = Callable[[int, int], None]


@dataclass
class RunContext:
    layout: Layout
    settings: Settings
    engine: str  # resolved: offline | claude
    force: bool
    run_id: str
    started_at: float
    today: date
    state: StoreState
    warnings: list[str] = field(default_factory=list)
    left_alone: list[str] = field(default_factory=list)  # memory files the run could not read: path, why
    every_log: bool = False  # read every log, even those already accounted for (the eval's `run_all`)
    again: bool = False  # read what pending proposals hold even when nothing new came (rebase)
    store_changed: bool = True  # the memory files differ from the latest version (set by `snapshot`)
    reads: Ledger = field(default_factory=dict)  # the logs this run read, as it read them
    session_logs: dict[str, str] = field(default_factory=dict)  # session id -> log read, for the report
    deferred: list[str] = field(default_factory=list)  # sessions the engine left for the next part: not accounted
    tried: int | None = None  # sessions a failed run took (its part), when the engine says


@dataclass
class Snapshot:
    version: int
    tree: Tree
    changed: bool  # the memory files differed from the latest version (or there was none)
    unread: tuple[str, ...] = ()  # memory paths that are no regular file (a FIFO …): left as they are


@dataclass
class Staged:
    tree: Tree
    result: EngineResult
    changed: list[str]
    engine: Engine  # kept so a corrective turn continues the same conversation and budget
    lint: dict | None = None  # the base version's claims checked against the project (dream.lint), as JSON
    memory_reads: dict = field(default_factory=dict)  # memory -> {"reads", "last_read"} from the transcripts


# ---------------------------------------------------------------- stages


def begin(store: str | Path, *, engine: str | None = None, force: bool = False, every_log: bool = False,
          again: bool = False, overrides: dict | None = None, now: float | None = None) -> RunContext:
    layout = Layout.open(store)
    settings = with_layout(layout.root, load_settings(layout.root, {**(overrides or {}), "engine": engine}))
    started = time.time() if now is None else now
    engine_name = resolve_engine_name(settings.engine)
    require_configured(engine_name)  # exit 2, nothing recorded: a configuration error is not a failed run
    return RunContext(
        layout=layout, settings=settings, engine=engine_name, force=force,
        run_id=uuid.uuid4().hex[:12], started_at=started,
        today=datetime.fromtimestamp(started).date(), state=load_state(layout), every_log=every_log,
        again=again,
    )


def with_layout(root: Path, settings: Settings) -> Settings:
    """The settings with the store's layout resolved; a Codex folder's evidence is read as logs kept in .dream/."""
    kind = layout_of(root, settings.layout).kind
    if kind == LayoutKind.CODEX:
        return settings.replace(layout=kind.value, logs_path=codex.EVIDENCE_LOGS)
    return settings.replace(layout=kind.value)


def recover_interrupted_write(ctx: RunContext) -> None:
    """Finish an accept or rollback that a crash interrupted, even if the gate then stays closed.

    A write that cannot be finished is reported as a warning here; the lock
    stage tries again and refuses the run if it still cannot.
    """
    problem, cleaned = finish_interrupted_write(ctx.layout)
    if problem:
        ctx.warnings.append(problem)
    report_cleaned(ctx, cleaned)


def report_cleaned(ctx: RunContext, cleaned: list[str]) -> None:
    if cleaned:
        ctx.warnings.append(f"removed {len(cleaned)} file(s) left by an interrupted dream process: "
                            + ", ".join(cleaned[:10]) + (" …" if len(cleaned) > 10 else ""))


def import_logs(ctx: RunContext) -> ImportResult | None:
    """Bring the activity logs up to date from the configured transcripts, if any."""
    if ctx.settings.layout == LayoutKind.CODEX:
        codex.write_evidence_logs(ctx.layout.root)
    if ctx.settings.transcripts is None:
        return None
    from dream.transcripts.importer import import_configured  # start-up: every agent's readers, for importing stores only

    result = import_configured(ctx.layout.root, ctx.settings)
    if result is not None:
        ctx.warnings += result.warnings
        report_cleaned(ctx, result.cleaned)
    return result


def mirror_remote(ctx: RunContext) -> None:
    """A store configured as an Anthropic memory store takes the service's edits first (dream.remote.configured)."""
    from dream.remote.configured import mirror_before_run  # start-up: only mirrored stores need the SDK

    ctx.warnings += mirror_before_run(ctx.layout, ctx.settings)


def gate(ctx: RunContext) -> GateDecision:
    decision = check_gate(ctx.layout, ctx.settings, force=ctx.force, now=ctx.started_at, state=ctx.state,
                          engine=ctx.engine)
    ctx.warnings += decision.warnings
    return decision


@contextmanager
def lock(ctx: RunContext) -> Iterator[None]:
    """Hold the store's lock; raises `LockBusy` at once if another run has it."""
    with store_lock(ctx.layout, ctx.run_id):
        if ctx.settings.layout == LayoutKind.CODEX and (held := codex.consolidation_lease(ctx.layout.root, time.time())):
            raise LockBusy(message=held)  # Codex's own consolidation writes the folder: skipped like a held lock
        # a write interrupted after `finish_interrupted_write` looked, or it found locked; then the litter
        report_cleaned(ctx, recover_and_clean(ctx.layout))
        ctx.state = load_state(ctx.layout)  # re-read: a run may have ended while we gated
        yield


def snapshot(ctx: RunContext) -> Snapshot:
    """The live memory files become the base version (recorded if they changed)."""
    ctx.layout.ensure()
    mark_format(ctx.layout)
    versions = Versions(ctx.layout)
    refuse_oversized_memory(ctx.layout.root)
    tree = read_tree(ctx.layout.root)
    scan = scan_memory_paths(ctx.layout.root)
    ctx.warnings += [f"{path}: symlink, not followed" for path in scan.symlinks]
    ctx.left_alone = [*(f"{path}: left as it is, not dreamed: {kind}, not a regular file"
                        for path, kind in scan.special.items()),
                      *(f"{path}: left as it is, not dreamed: {why}" for path, why in unparseable(tree).items())]
    ctx.warnings += ctx.left_alone
    current = versions.current()
    if current is not None and versions.get(current).files == {rel: sha256(data) for rel, data in tree.items()}:
        ctx.store_changed = False
        return Snapshot(current, tree, changed=False, unread=tuple(scan.special))  # by digest: no blob is read
    version = versions.record(tree, "snapshot", note=f"store as found by run {ctx.run_id}")
    ctx.store_changed = True
    return Snapshot(version.number, tree, changed=True, unread=tuple(scan.special))




def refuse_oversized_memory(root: Path) -> None:
    """Fail fast on a memory file far beyond any sane size, before reading it.

    A 50 MB topic file is not a memory. Skipping it silently would hide it
    from review, so the run stops and names it instead. The index and the
    archives have their own rule: the index is shrunk to its budget and an
    archive rolls over into dated files, so a large store is dreamed, not
    refused (both still stop at `MAX_READ_BYTES`, like any file).
    """
    for rel in scan_memory_paths(root).files:
        if has_own_size_rule(rel):
            continue
        size = (root / rel).stat().st_size
        if size > MAX_MEMORY_FILE_BYTES:
            raise BadInput(f"{root / rel}: memory file is {size:,} bytes, over dream's limit of "
                           f"{MAX_MEMORY_FILE_BYTES:,}; split or trim it, then run again")


def gather(ctx: RunContext, on_progress: Progress | None = None) -> Gathered:
    """Every log whose requests no person has decided on: new, changed, or waiting in a pending proposal.

    A log is known by its content (`dream.store.ledger`), not its mtime:
    one copied with its old mtime is still read, and the logs of a proposal
    nobody reviewed are read again, so the proposal that supersedes it
    carries their requests. When nothing new came and the store is as the
    pending proposal found it, that proposal stands: nothing is read.
    """
    logs = scan_sessions(ctx.layout.root, logs_path=ctx.settings.imported_logs_path)
    files: list[SessionFile] = logs
    if not ctx.every_log:
        ledger = store_ledger(ctx.layout, ctx.state, logs)
        files = unread(logs, ledger)
        if not (ctx.again or ctx.store_changed) and len(held(files, ledger)) == len(files):
            files = []
    gathered = read_sessions(files, on_progress=on_progress, max_entry_chars=ctx.settings.max_entry_chars)
    ctx.reads = gathered.reads
    ctx.session_logs = {f.session_id: f.rel for f in gathered.files}
    return gathered


def _engine_input(ctx: RunContext, gathered: Gathered, staging: Staging, lint: list[str] | None = None,
                  snap: Snapshot | None = None) -> EngineInput:
    inp = EngineInput(
        store_root=ctx.layout.root, staging=staging, sessions=gathered.sessions,
        catalog=gathered.files, settings=ctx.settings, today=ctx.today, run_id=ctx.run_id, lint=lint or [],
        most_sessions=ctx.state.part_sessions,
    )
    if snap is not None:  # what ranks the index when it must shrink: pins, and reads in the transcripts
        inp.pinned = pinned.pinned_paths(snap.tree, ctx.settings.pinned)
        found = usage.store_usage(ctx.layout.root, ctx.settings, snap.tree, inp.pinned)
        inp.memory_reads = found["memories"] if found else {}
    return inp


@contextmanager
def staging_copy(ctx: RunContext, snap: Snapshot) -> Iterator[Staging]:
    """A private copy of the base version for the engine (written only where it changes), removed afterwards."""
    staging = Staging(ctx.layout.staging / ctx.run_id, snap.tree)
    try:
        yield staging
    finally:
        staging.discard()


def consolidate(ctx: RunContext, snap: Snapshot, gathered: Gathered, staging: Staging) -> Staged:
    engine = select_engine(ctx.engine)
    checked = lint.lint_store(ctx.layout.root, snap.tree, ctx.settings)  # the engine sees what the project refutes
    stale = lint.needs_person(checked)
    inp = _engine_input(ctx, gathered, staging, stale, snap)
    inp.findings = checked.as_json()["findings"] if checked else []
    result = engine.consolidate(inp)
    defer(ctx, result)
    result.needs_person += [line for line in stale if line not in result.needs_person]
    protect_pinned(ctx, snap, staging, result)
    if checked is not None and ctx.settings.lint_verified_at:
        record_verified(ctx, snap, staging, result, checked)
    tree = staging.tree()
    if over := over_budget(named(ctx.settings.layout), tree):  # cut by a person, never by dream
        result.needs_person.append(over)
    return Staged(tree, result, changed_paths(snap.tree, tree), engine, checked.as_json() if checked else None,
                  inp.memory_reads)


def defer(ctx: RunContext, result: EngineResult) -> None:
    """Sessions the engine left for a later run (a dream in parts, or a run stopped at its budget) stay unread:
    the proposal does not hold their logs, and the next part reads them. A person sees which and why."""
    ctx.deferred = [sid for sid in result.deferred if sid in ctx.session_logs]
    if ctx.deferred:
        listed = ", ".join(ctx.deferred[:20]) + (" …" if len(ctx.deferred) > 20 else "")
        result.needs_person.append(f"dreamed in parts: {len(ctx.deferred)} session(s) wait for the next part, which "
                                   f"runs once this proposal is decided: {listed}")


def protect_pinned(ctx: RunContext, snap: Snapshot, staging: Staging, result: EngineResult) -> None:
    """After any engine: pinned memories as they were, the engine's changes to them struck from its account."""
    restored = pinned.keep_pinned(snap.tree, staging, ctx.settings.pinned)
    unread = pinned.keep_unread(snap.tree, staging, snap.unread)
    files = {path for path, _ in [*restored, *unread]}
    result.changes = [c for c in result.changes if c.path not in files - {INDEX_NAME}]
    result.finish += [Change("restored", path, "pinned: no engine may change or remove it; put back as it was",
                             detail=what, source="finish") for path, what in restored]
    result.finish += [Change("restored", path, "not a regular file: dream leaves it and its index line as they are",
                             detail=what, source="finish") for path, what in unread]


def record_verified(ctx: RunContext, snap: Snapshot, staging: Staging, result: EngineResult,
                    checked: lint.LintReport) -> None:
    """`verified_at: <commit>` where every claim held and the memory does not already say so (lint_verified_at)."""
    from dream.lint import verified  # start-up: lint's checks, only for a store whose project is known

    staged = staging.tree()
    found = verified.stamps(Path(checked.project), checked.head, checked.verified, snap.tree, staged, ctx.settings,
                            pinned.pinned_paths(snap.tree, ctx.settings.pinned))
    for rel, (data, why) in found.items():
        staging.write(rel, data)
        result.changes.append(Change("verified", rel, why, f"verified_at: {checked.head}", "lint", kind=HOUSEKEEPING))


def validate(ctx: RunContext, snap: Snapshot, gathered: Gathered, staging: Staging, staged: Staged) -> list:
    """Check the staged tree; give the engine one corrective pass before failing."""
    findings = validate_tree(staged.tree, set(staged.changed), base=snap.tree)
    errors = validation_errors(findings)
    if not errors:
        return findings
    problems = [f"{f.path}: {f.rule}: {f.message}" for f in errors]
    fix = staged.engine.correct(_engine_input(ctx, gathered, staging, snap=snap), problems)
    protect_pinned(ctx, snap, staging, fix)
    staged.result.changes += fix.changes
    staged.result.finish += fix.finish
    staged.result.usage.add(fix.usage)
    staged.tree = staging.tree()
    staged.changed = changed_paths(snap.tree, staged.tree)
    findings = validate_tree(staged.tree, set(staged.changed), base=snap.tree)
    errors = validation_errors(findings)
    if errors:
        first = errors[0]
        raise ValidationFailed(
            f"staged tree breaks {len(errors)} rule(s), first: {first.path}: {first.rule}: {first.message}",
            findings,
        ).spent(staged.result.usage)
    return findings


def propose(ctx: RunContext, snap: Snapshot, gathered: Gathered, staged: Staged, findings: list) -> RunOutcome:
    outcome = _outcome(ctx, gathered, staged.result)
    outcome.base_version = snap.version
    if not staged.changed:
        notes.record(ctx.layout, staged.result.needs_person, ctx.run_id, ctx.started_at)  # kept on a noop night too
        outcome.status, outcome.reason = Status.NOOP, str(NoopReason.NO_CHANGES)
        return outcome
    carried = carry_taken_notes(ctx, snap, staged)
    proposals = Proposals(ctx.layout)
    proposal = Proposal(
        id=new_proposal_id(), created_at=time.time(), base_version=snap.version, engine=ctx.engine,
        run_id=ctx.run_id, files={}, changed=staged.changed,  # files: stored by `create`, in its one commit
    )
    report = build_report(
        proposal_id=proposal.id, run_id=ctx.run_id, engine=ctx.engine, base_version=snap.version,
        result=staged.result, changed=staged.changed, findings=findings,
        sessions_read=len(gathered.files), redactions=gathered.redactions,
        duration_s=time.time() - ctx.started_at, warnings=ctx.warnings + gathered.warnings,
    )
    report["session_logs"] = ctx.session_logs  # which requests a partial accept leaves out (review.requests)
    report["logs_read"] = {rel: read.to_json() for rel, read in _accounted(ctx).items()}  # what it accounts for
    report["deferred_sessions"] = ctx.deferred  # left for the next part: read again by the next run
    report["partial"] = staged.result.partial  # why the run stopped before the model finished ("" when it did not)
    report["retention"] = retention.summarize(snap.tree, staged.tree)  # what the proposal removes, and where it went
    report["lint"] = staged.lint
    report["memory_reads"] = staged.memory_reads
    report["removal_budget"] = budget.removal_budget(snap.tree, staged.tree, ctx.settings)
    over = budget.over_budget(report["removal_budget"])
    if over:
        report["needs_person"].insert(0, f"over the removal budget: {over}")
        outcome.needs_person.insert(0, f"over the removal budget: {over}")
    for older in proposals.pending():
        proposals.set_status(older, SUPERSEDED)
    # after superseding: a note taken into a proposal superseded now opens again, and this one lists it
    report["notes"] = [n.to_json() for n in notes.record(
        ctx.layout, staged.result.needs_person, ctx.run_id, ctx.started_at,
        carried=dict.fromkeys(carried, proposal.id))]  # every open note, earlier nights' too
    diff = tree_diff(snap.tree, staged.tree)
    proposals.create(proposal, diff, report, tree=staged.tree)
    outcome.status, outcome.proposal_id = Status.PROPOSED, proposal.id
    outcome.lines_added, outcome.lines_removed = diff_line_counts(diff)
    outcome.changes = len(staged.result.changes) or len(staged.changed)
    return outcome


def carry_taken_notes(ctx: RunContext, snap: Snapshot, staged: Staged) -> list[int]:
    """This proposal replaces the pending one, so it holds the changes people took from notes into that one."""
    tree, changes, carried = answer_note.carry_taken(ctx.layout, staged.tree, ctx.today)
    if carried:
        staged.tree, staged.changed = tree, changed_paths(snap.tree, tree)
        staged.result.changes += changes
    return carried


def diff_line_counts(diff: str) -> tuple[int, int]:
    """Lines added and removed by a unified diff (its ``+++`` / ``---`` file headers left out)."""
    added = removed = 0
    for line in diff.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed


def _outcome(ctx: RunContext, gathered: Gathered | None = None, result: EngineResult | None = None) -> RunOutcome:
    outcome = RunOutcome(status=Status.NOOP, engine=ctx.engine, run_id=ctx.run_id, left_alone=ctx.left_alone)
    if gathered is not None:
        outcome.sessions_read = len(gathered.files)
        outcome.redactions = gathered.redactions
    if result is not None:
        outcome.usage = result.usage
        outcome.needs_person = list(result.needs_person)
    return outcome


def finish(ctx: RunContext, outcome: RunOutcome, holds_lock: bool = True) -> RunOutcome:
    """Record the outcome in the history and, for runs that held the lock, in the ledger and the state."""
    outcome.duration_s = round(time.time() - ctx.started_at, 3)
    if holds_lock:
        _account_for_logs(ctx, outcome)
        _update_state(ctx, outcome)
    history.record_run(ctx.layout, outcome, ctx.started_at)
    return outcome


def _account_for_logs(ctx: RunContext, outcome: RunOutcome) -> None:
    """A proposal holds the logs its run read; a run with nothing to propose consumed them.

    A failed run accounts for nothing: its logs are read again. Written
    before the state, so the first ledger of an old store is made from the
    state's time mark as it stood before this run.
    """
    if outcome.status not in (Status.PROPOSED, Status.NOOP):
        return
    logs = scan_sessions(ctx.layout.root, logs_path=ctx.settings.imported_logs_path)
    ledger = store_ledger(ctx.layout, ctx.state, logs)
    holder = outcome.proposal_id if outcome.status == Status.PROPOSED else None
    for rel, read in _accounted(ctx).items():
        before = ledger.get(rel)
        if holder is None and before is not None and before.proposal is not None and before.sha256 == read.sha256:
            continue  # a pending proposal still holds it: a person has yet to decide on its requests
        ledger[rel] = Read(read.size, read.sha256, read.mtime, holder)
    save_ledger(ctx.layout, ledger)


def _accounted(ctx: RunContext) -> Ledger:
    """The logs this run accounts for: what it read, less the sessions left for the next part."""
    left = {ctx.session_logs[sid] for sid in ctx.deferred}
    return {rel: read for rel, read in ctx.reads.items() if rel not in left}


def _update_state(ctx: RunContext, outcome: RunOutcome) -> None:
    state = load_state(ctx.layout)
    state.last_run_id, state.last_status = ctx.run_id, str(outcome.status)
    if outcome.status in (Status.PROPOSED, Status.NOOP):
        state.last_consolidated_at = ctx.started_at
        state.replay = []  # the ledger holds what it said
        state.failures, state.backoff_until, state.failed_engine = 0, None, None
        state.next_part = bool(ctx.deferred)
        state.part_sessions = state.part_sessions if state.next_part else None  # a part keeps its size to the end
        state.last_error = None
    elif outcome.status == Status.FAILED:
        tried = ctx.tried or outcome.sessions_read
        if shrinks_next_part(outcome.reason) and tried:
            state.part_sessions = max(1, tried // 2)
            outcome.error = f"{outcome.error}; {_next_run(tried, state.part_sessions)}"
        state.last_error = outcome.error
        state.failures = state.failures + 1 if state.failed_engine in (None, ctx.engine) else 1
        state.failed_engine = ctx.engine
        wait = backoff_seconds(state.failures, ctx.settings.backoff_minutes, ctx.settings.backoff_max_hours)
        state.backoff_until = time.time() + wait
    save_state(ctx.layout, state)


def _next_run(tried: int, part: int) -> str:
    """What the run after one that failed at a budget or the model's window, with nothing proposed, does instead."""
    if part < tried:
        return (f"nothing was proposed, so the next run takes at most {part} of these {tried} sessions, oldest first, "
                "and the rest wait for the parts after it")
    return ("nothing was proposed, and the next run cannot take fewer than this one session: raise the budget that "
            "stopped it, or dream it with `--engine offline`, rather than pay for the same run again")


def skipped(ctx: RunContext, reason: SkipReason, message: str) -> RunOutcome:
    outcome = _outcome(ctx)
    outcome.status, outcome.reason, outcome.error = Status.SKIPPED, str(reason), message
    return outcome


def record_skip(store: str | Path, reason: SkipReason, message: str, *, engine: str | None = None,
                overrides: dict | None = None) -> RunOutcome:
    """A run that is skipped before it starts, for a reason outside the store (the fleet's budget): recorded."""
    ctx = begin(store, engine=engine, overrides=overrides)
    return finish(ctx, skipped(ctx, reason, message), holds_lock=False)


def no_signal(ctx: RunContext, snap: Snapshot, gathered: Gathered) -> RunOutcome:
    """Nothing changed since the last dream: a noop, and no engine is called."""
    outcome = _outcome(ctx, gathered)
    outcome.base_version, outcome.reason = snap.version, str(NoopReason.NO_SIGNAL)
    return outcome


def lock_busy(ctx: RunContext, busy: LockBusy) -> RunOutcome:
    return skipped(ctx, SkipReason.LOCK, str(busy))


def apply_policy(ctx: RunContext, outcome: RunOutcome) -> RunOutcome:
    """Unattended runs: let the `auto_accept` policy take a proposal that loses nothing."""
    if outcome.status == Status.PROPOSED and ctx.settings.auto_accept:
        from dream.review import policy  # start-up: accept, its merge and checks (~4 ms); few stores set auto_accept

        decision = policy.auto_accept(ctx.layout, ctx.settings, outcome.proposal_id)
        if decision is not None:
            outcome.accepted_version = decision.version
            outcome.needs_person += _push_mirror(ctx, decision.version)
        if decision is not None and decision.skipped:
            outcome.needs_person += held_requests(ctx, decision.skipped)
    return outcome


def _push_mirror(ctx: RunContext, version: int | None) -> list[str]:
    """What auto_accept took goes to the memory store a mirror was pulled from, as an accept by hand does."""
    from dream.remote.configured import push_accepted  # start-up: only mirrored stores need the SDK

    return push_accepted(ctx.layout, version)


def held_requests(ctx: RunContext, skipped: list[str]) -> list[str]:
    """The policy took the housekeeping only: dream again at once, so the held requests wait for a person.

    Their sessions are on the replay list; this run reads them again and
    proposes their changes alone, and no policy takes that proposal.
    """
    settings = {**ctx.settings.as_dict(), "auto_accept": False}
    again = run(ctx.layout.root, engine=ctx.engine, force=True, overrides=settings,
                now=max(time.time(), ctx.started_at + 1))
    where = f"proposal {again.proposal_id}" if again.proposal_id else f"no proposal ({again.reason or again.status})"
    return [f"auto_accept took housekeeping only; changes to {', '.join(skipped)} (requests, dated lint notes, text no user said) "
            f"wait for a person: {where}"]


def failed(ctx: RunContext, exc: RunFailed, gathered: Gathered | None = None) -> RunOutcome:
    outcome = _outcome(ctx, gathered)
    outcome.status, outcome.reason, outcome.error = Status.FAILED, exc.reason, str(exc)
    ctx.tried = exc.sessions
    if isinstance(exc, RunFailed) and exc.usage is not None:
        outcome.usage = exc.usage  # what the engine spent before failing
    return outcome


# ---------------------------------------------------------------- the whole run

Call = Callable[..., Any]  # call(stage, *args, **kwargs): run one stage, return its result
Hold = Callable[[RunContext], AbstractContextManager]  # held around the store's lock; raises LockBusy when taken


def call_directly(stage: Callable, *args, **kwargs):
    return stage(*args, **kwargs)


def no_extra_hold(ctx: RunContext) -> AbstractContextManager:
    return nullcontext()


def run(store: str | Path, *, engine: str | None = None, force: bool = False,
        every_log: bool = False, again: bool = False, overrides: dict | None = None,
        now: float | None = None, on_progress: Progress | None = None,
        call: Call = call_directly, hold: Hold = no_extra_hold) -> RunOutcome:
    """One dream on one store. Returns the outcome; raises only for bad input or a blocked journal.

    `force` skips the backoff, hours and sessions checks (never `enabled`,
    never the lock); it reads the same logs as any run: every log no decided
    proposal accounted for, but with nothing new on an unchanged store it
    leaves a pending proposal standing (`again` reads its logs anyway).
    `every_log` reads all of them.
    `call(stage, *args, **kwargs)` runs each stage; `hold(ctx)` is entered
    before the store's lock and raises `LockBusy` when the store is taken
    elsewhere.
    """
    ctx = begin(store, engine=engine, force=force, every_log=every_log, again=again, overrides=overrides, now=now)
    call(recover_interrupted_write, ctx)
    call(import_logs, ctx)
    if ctx.settings.store:  # a mirror of an Anthropic memory store: a stage (and a Prefect task) of its own
        call(mirror_remote, ctx)
    decision = call(gate, ctx)
    if not decision.open:
        return call(finish, ctx, skipped(ctx, decision.reason, decision.message), holds_lock=False)
    try:
        with hold(ctx), lock(ctx):
            outcome = call(finish, ctx, locked_run(ctx, on_progress, call))
    except LockBusy as busy:
        return call(finish, ctx, lock_busy(ctx, busy), holds_lock=False)
    return call(apply_policy, ctx, outcome)


def locked_run(ctx: RunContext, on_progress: Progress | None = None, call: Call = call_directly) -> RunOutcome:
    """snapshot → gather → consolidate → validate → propose, with the lock held.

    `call` runs each stage, as in `run`.
    """
    snap = call(snapshot, ctx)
    gathered = call(gather, ctx, on_progress)
    if not gathered.files and not snap.changed:
        return no_signal(ctx, snap, gathered)
    try:
        with staging_copy(ctx, snap) as staging:
            staged = call(consolidate, ctx, snap, gathered, staging)
            findings = call(validate, ctx, snap, gathered, staging, staged)
            return call(propose, ctx, snap, gathered, staged, findings)
    except RunFailed as exc:
        outcome = failed(ctx, exc, gathered)
        outcome.base_version = snap.version
        return outcome

