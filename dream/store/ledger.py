"""Which session logs a store has accounted for, known by their content.

A run records each log it read: its path, size, mtime and the SHA-256 of
the bytes it read. The entry says who holds that content now:

- a pending proposal (``proposal`` is its id): the log's requests wait for
  a person; a later run reads the log again and carries them into its own
  proposal, which supersedes the waiting one;
- nobody (``proposal`` is None): consumed. A person accepted the changes
  made from it, or said no with ``--forget-requests``, or a run read it and
  found nothing to propose.

A log counts as unread when it has no entry, or its content differs from
the entry: another size, or another mtime and another hash (the hash is
taken only then, so an unchanged log costs one stat). A log copied with
``cp -p`` or ``rsync -a`` is a new path, so it is read whatever its mtime.
Rejecting a proposal or rolling one back drops its entries, so the next run
offers those requests again.

Kept in ``.dream/sessions.json.gz``, apart from ``state.json``: the gate reads
it only when it reaches the sessions check. Compressed: each entry's hash and
path are most of a year's 70 KB, and gzip keeps a third of it. A store from
before keeps a plain ``sessions.json``, read until the next save replaces it. A store dreamed before this
file existed had only a time mark: logs older than its last dream (and not
on its old replay list) count as consumed, except those a pending proposal
read, which it holds.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from dream.store.layout import Layout
from dream.store.records import load_json_record
from dream.store.sessions import SessionFile
from dream.store.state import StoreState
from dream.store.tree import atomic_write


@dataclass
class Read:
    """One log as a run read it."""

    size: int
    sha256: str  # "" for an entry made from an old store's time mark (then size and mtime must match)
    mtime: float
    proposal: str | None = None  # the pending proposal that holds it; None: consumed

    def to_json(self) -> dict:
        return asdict(self)


Ledger = dict[str, Read]  # log path relative to the store -> what was read of it


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_of(f: SessionFile, data: bytes) -> Read:
    """The entry for log `f` whose bytes, as read, are `data`."""
    return Read(size=len(data), sha256=digest(data), mtime=f.mtime)


def load_ledger(layout: Layout, state: StoreState, held: dict[str, list[str]] | None = None,
                logs: Iterable[SessionFile] = ()) -> Ledger:
    """The store's ledger; for a store dreamed before it existed, one made from its time mark.

    `held` (pending proposal id -> the logs it read) and `logs` (the store's
    logs) are used only for such an old store.
    """
    try:
        return load_json_record(_path(layout), LedgerFile, "session ledger", gzipped=True).logs
    except FileNotFoundError:
        pass
    try:
        return load_json_record(_plain_path(layout), LedgerFile, "session ledger").logs
    except FileNotFoundError:
        return _from_time_mark(state, held or {}, logs)


@dataclass
class LedgerFile:
    logs: dict[str, Read]


def _path(layout: Layout) -> Path:
    return layout.dream / "sessions.json.gz"


def _plain_path(layout: Layout) -> Path:
    """The ledger as dream wrote it before it was compressed."""
    return layout.dream / "sessions.json"


def has_ledger(layout: Layout) -> bool:
    return _path(layout).exists() or _plain_path(layout).exists()


def _from_time_mark(state: StoreState, held: dict[str, list[str]], logs: Iterable[SessionFile]) -> Ledger:
    if state.last_consolidated_at is None:
        return {}
    holder = {rel: proposal_id for proposal_id, rels in held.items() for rel in rels}
    offered_again = set(state.replay)
    return {f.rel: Read(f.size, "", f.mtime, holder.get(f.rel)) for f in logs
            if f.mtime <= state.last_consolidated_at and f.rel not in offered_again}


def save_ledger(layout: Layout, ledger: Ledger) -> None:
    layout.dream.mkdir(parents=True, exist_ok=True)
    body = {"logs": {rel: ledger[rel].to_json() for rel in sorted(ledger)}}
    atomic_write(_path(layout), gzip.compress(json.dumps(body, separators=(",", ":")).encode(), mtime=0))
    # The compressed file holds everything now; a crash before this leaves both, and the new one is read.
    _plain_path(layout).unlink(missing_ok=True)


def same_content(f: SessionFile, entry: Read | None) -> bool:
    """Whether log `f` still holds what `entry` recorded (hashed only when the mtime moved)."""
    if entry is None or entry.size != f.size:
        return False
    if entry.mtime == f.mtime:
        return True
    if not entry.sha256:
        return False
    try:
        with open(f.location, "rb") as fh:
            return digest(fh.read()) == entry.sha256
    except OSError:
        return False  # unreadable now: the run that reads it reports why


def unread(logs: Iterable[SessionFile], ledger: Ledger) -> list[SessionFile]:
    """The logs whose content nobody consumed: new, changed, or held by a pending proposal."""
    return [f for f in logs if not (same_content(f, ledger.get(f.rel)) and ledger[f.rel].proposal is None)]


def held(logs: Iterable[SessionFile], ledger: Ledger) -> list[SessionFile]:
    """Of `logs`, those a pending proposal holds as they are now."""
    return [f for f in logs if ledger.get(f.rel) is not None and ledger[f.rel].proposal is not None
            and same_content(f, ledger[f.rel])]


def ledger_for(layout: Layout, state: StoreState, logs: Iterable[SessionFile],
               pending_logs: Callable[[], dict[str, list[str]]]) -> Ledger:
    """The store's ledger; for an old store without one, made from its time mark.

    `pending_logs()` (pending proposal id -> the logs its run read) is asked
    only then: those logs stay held by their proposal.
    """
    if has_ledger(layout) or state.last_consolidated_at is None:
        return load_ledger(layout, state)
    return load_ledger(layout, state, held=pending_logs(), logs=logs)
