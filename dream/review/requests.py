"""No request is lost: every session's requests reach the store or a person's explicit "no".

A run records in its report which logs it read (path, size, hash) and which
session each change came from, and the ledger (`dream.store.ledger`)
names the pending proposal that holds each log. A person's decision
settles those logs:

- accepting the whole proposal consumes its logs;
- accepting some files leaves the others pending, as a proposal rebased
  onto the new version (`dream.review.decide.carry_over`), which holds the
  logs behind them; the logs behind taken files alone are consumed;
- rejecting releases the logs: the next run reads them again and offers
  their requests again, unless `--forget-requests` consumes them (the
  person's "no"); rejecting some files leaves the others pending likewise;
- rolling back releases the logs of every proposal it undoes, and marks it `rolled_back`.

When the engine named no session for any change (it works from whole
logs), every log the proposal read goes with every part of it.
"""

from __future__ import annotations

from collections.abc import Iterable

from dream.store.layout import Layout
from dream.store.ledger import Ledger, Read, ledger_for, save_ledger
from dream.store.records import DamagedRecord, record_from_dict
from dream.config import load_settings
from dream.store.sessions import scan_sessions
from dream.store.state import load_state
from dream.versions.manifests import Versions
from dream.versions.proposals import ACCEPTED, ROLLED_BACK, Proposal, Proposals


def logs_read(report: dict) -> set[str]:
    """Every log the proposal's run read."""
    return set((report.get("session_logs") or {}).values()) | set(report.get("logs_read") or {})


def logs_behind(report: dict, files: Iterable[str] | None) -> set[str]:
    """The logs behind the proposal's changes to `files` (None: every log it read)."""
    every = logs_read(report)
    if files is None:
        return every
    wanted = set(files)
    logs: dict[str, str] = report.get("session_logs") or {}
    changes = report.get("changes") or []
    if not any(c.get("source") in logs for c in changes):
        return every if wanted else set()
    return {logs[c["source"]] for c in changes if c.get("path") in wanted and c.get("source") in logs}


def narrowed(report: dict, files: list[str], logs: set[str]) -> dict:
    """The report of what is left pending: the changes to `files`, the logs behind them."""
    left = dict(report)
    left["changes"] = [c for c in report.get("changes") or [] if c.get("path") in files]
    left["session_logs"] = {sid: rel for sid, rel in (report.get("session_logs") or {}).items() if rel in logs}
    left["logs_read"] = {rel: read for rel, read in (report.get("logs_read") or {}).items() if rel in logs}
    return left


def settle(layout: Layout, report: dict, *, consumed: Iterable[str] = (), released: Iterable[str] = (),
           held: Iterable[str] = (), holder: str | None = None) -> None:
    """Write a decision into the ledger (called with the store's lock held).

    `consumed` logs are recorded as read by the proposal (its report says
    what it read: a log that grew since is read again for the rest);
    `released` ones are dropped, so the next run reads them again; `held`
    ones pass to the pending proposal `holder`.
    """
    logs = scan_sessions(layout.root, logs_path=load_settings(layout.root).imported_logs_path)
    ledger = ledger_for(layout, load_state(layout), logs, Proposals(layout).pending_logs)
    for rel in consumed:
        entry = _as_read(report, rel, ledger)
        if entry is not None:
            ledger[rel] = Read(entry.size, entry.sha256, entry.mtime, None)
    for rel in released:
        ledger.pop(rel, None)
    for rel in held:
        entry = _as_read(report, rel, ledger)
        if entry is not None:
            ledger[rel] = Read(entry.size, entry.sha256, entry.mtime, holder)
    save_ledger(layout, ledger)


def _as_read(report: dict, rel: str, ledger: Ledger) -> Read | None:
    """What the proposal read of `rel`: from its report, or (a proposal older than that) the ledger."""
    raw = (report.get("logs_read") or {}).get(rel)
    if isinstance(raw, dict):
        try:
            return record_from_dict(raw, Read, f"proposal report: logs_read: {rel}")
        except DamagedRecord:
            pass
    return ledger.get(rel)


def undone_by_rollback(layout: Layout, target: int) -> list[Proposal]:
    """The proposals a rollback to version `target` undoes: those accepted into a later version."""
    versions, proposals = Versions(layout), Proposals(layout)
    undone = []
    for number in versions.numbers():
        version = versions.get(number)
        if number > target and version.source == "accept" and version.proposal_id:
            try:
                undone.append(proposals.get(version.proposal_id))
            except Exception:  # a proposal removed by gc: nothing left of it to undo
                continue
    return undone


def release_rolled_back(layout: Layout, undone: list[Proposal]) -> list[str]:
    """The logs of the proposals a rollback undid are read again; an accepted one now says `rolled_back`."""
    proposals = Proposals(layout)
    logs: set[str] = set()
    for proposal in undone:
        logs |= logs_read(proposals.report(proposal))
        if proposal.status == ACCEPTED:
            proposals.set_status(proposal, ROLLED_BACK)
    settle(layout, {}, released=logs)
    return sorted(logs)
