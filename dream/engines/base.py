"""The contract between the pipeline and an engine.

The pipeline hands an engine a private *staging* copy of the base
version's memory files (`dream.store.staging.Staging`), plus the redacted activity of the sessions that
changed since the last dream. The engine edits the staging copy
only, and returns what it changed and why. The pipeline then validates the
staged tree and turns it into a proposal; the live store is never touched.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # start-up: polars takes ~1 s to import; `dream diff` reaches this module, not the tables
    import polars as pl

from dream.config import Settings
from dream.store.staging import Staging
from dream.outcomes import Usage


HOUSEKEEPING = "housekeeping"  # deterministic upkeep that reads no intent: duplicates, pointers, dates, lines
REQUEST = "request"  # derived from what someone said: remember, forget, correction, rule, update
# A housekeeping action that still waits for a person (dream.review.policy): a dated note on a claim
# the project refutes (lint_notes). It reads no intent, but says a memory may be wrong.
NOTED = "noted"
# A change whose new text no user line says: it comes from a tool's output, an assistant line or the model
# itself (dream.engines.claude.provenance). It waits for a person whatever the settings say.
UNSAID = "unsaid"


@dataclass(frozen=True)
class Evidence:
    """Where a request-derived change came from: the session, its date, the line and the sentence."""

    session: str
    date: str  # YYYY-MM-DD
    line: int  # the line's number in the session's activity log (its `seq`)
    sentence: str


@dataclass
class Change:
    """One edit, for the report: what happened to which file, and why.

    `kind` is HOUSEKEEPING or REQUEST (UNSAID too for the Claude engine; "" when
    an engine does not say); every REQUEST change carries its `evidence`, and an
    UNSAID one the line its text came from when a session has it.
    """

    action: str  # merged | updated | created | deleted | dated | repaired | archived | indexed | shortened | forgotten
    #              | retitled | noted | verified
    path: str
    reason: str
    detail: str = ""
    source: str = ""  # session id or file the change came from
    kind: str = ""
    evidence: Evidence | None = None


@dataclass
class EngineInput:
    store_root: Path  # the live store: read-only context (e.g. transcripts), never written
    staging: Staging  # the engine's writable copy of the base version
    sessions: pl.DataFrame  # redacted rows: session, date, seq, role, text (see dream.pipeline.gather)
    catalog: list  # list[dream.store.sessions.SessionFile] for the sessions in `sessions`
    settings: Settings
    today: date
    run_id: str = ""
    lint: list[str] = field(default_factory=list)  # claims the memories make that the project refutes (dream.lint)
    findings: list[dict] = field(default_factory=list)  # the same, as lint's JSON (dream.lint.checks.Finding)
    # which memories agents read (dream.transcripts.usage: path -> {"reads", "last_read"}) and which are pinned:
    # the index keeps these first when it must shrink
    memory_reads: dict[str, dict] = field(default_factory=dict)
    pinned: set[str] = field(default_factory=set)
    # after a run that failed at a budget or the model's window with nothing proposed, the next dreams at most this
    # many sessions, oldest first (dream.store.state.part_sessions): a run is never the same doomed run again
    most_sessions: int | None = None


@dataclass
class EngineResult:
    changes: list[Change] = field(default_factory=list)
    summary: str = ""
    usage: Usage = field(default_factory=Usage)
    finish: list[Change] = field(default_factory=list)  # made by code after the model (claude engine), not by it
    needs_person: list[str] = field(default_factory=list)  # what the engine would not decide alone
    deferred: list[str] = field(default_factory=list)  # session ids left for a later run (a dream in parts)
    partial: str = ""  # why the run stopped before the model finished (a budget), when it did


class Engine(Protocol):
    name: str

    def consolidate(self, inp: EngineInput) -> EngineResult: ...

    def correct(self, inp: EngineInput, problems: list[str]) -> EngineResult:
        """One corrective pass after validation failed (may return no changes)."""
        ...
