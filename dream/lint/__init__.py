"""Memory lint: what the memories claim about their project, checked against the project.

`lint_store` is the one entry point: the command (`dream lint`), the run's
report and the Claude engine's first message all take its result, and
`needs_person` turns it into the sentences a person reads. Lint only reads
the project and the store; it never changes a memory.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from dream.config import Settings
from dream.lint.checks import Checker, Finding
from dream.lint.claims import Claim, memory_claims
from dream.lint.project import find_project, open_project
from dream.store.tree import Tree

INDEX = "MEMORY.md"


@dataclass
class LintReport:
    project: str  # the project folder, "" when unknown
    found_by: str  # config | claude-code transcripts | codex transcripts | ""
    head: str  # short commit at HEAD, "" without git
    memories: int = 0
    claims: int = 0
    held: int = 0
    unchecked: int = 0
    findings: list[Finding] = field(default_factory=list)
    verified: list[str] = field(default_factory=list)  # memories with claims, every one of which held
    seconds: float = 0.0

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["findings"] = [asdict(f) for f in self.findings]
        return data


def lint_store(store_root: Path, tree: Tree, settings: Settings) -> LintReport | None:
    """Check every memory in `tree` against the store's project; None when the project is unknown."""
    started = time.monotonic()
    found = find_project(store_root, settings)
    if found is None:
        return None
    root, found_by = found
    deadline = started + settings.lint_seconds
    project = open_project(root, found_by, settings.lint_seconds)
    report = LintReport(project=str(root), found_by=found_by, head=project.head)
    claims = [claim for rel in sorted(tree) for claim in memory_claims(rel, tree[rel])]
    outcome = Checker(project, deadline).check(claims)
    report.memories = len(tree)
    report.claims = len(claims)
    report.held, report.unchecked = len(outcome.held), len(outcome.unchecked)
    report.findings = sorted(outcome.findings, key=lambda f: (f.memory, f.line, f.claim))
    report.verified = _verified(claims, outcome.held)
    report.seconds = round(time.monotonic() - started, 3)
    return report


def _verified(claims: list[Claim], held: list[Claim]) -> list[str]:
    held_set = set(held)
    by_memory: dict[str, list[Claim]] = {}
    for claim in claims:
        by_memory.setdefault(claim.memory, []).append(claim)
    return sorted(m for m, mine in by_memory.items() if m != INDEX and all(cl in held_set for cl in mine))


def needs_person(report: LintReport | dict | None) -> list[str]:
    """The findings as the sentences a person reads: for the report, the review page and the Claude engine.

    Takes the report itself or its JSON (as a proposal's report stores it).
    """
    if report is None:
        return []
    findings = report.findings if isinstance(report, LintReport) else [
        Finding(**f) for f in (report.get("findings") or [])]
    return [f"stale claim: {f.sentence()}" for f in findings]
