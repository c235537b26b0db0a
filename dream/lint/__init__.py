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
from typing import TYPE_CHECKING, Any

from dream.config import Settings
from dream.lint.project import find_project, open_project
from dream.store.tree import Tree

if TYPE_CHECKING:
    from dream.lint.checks import Finding, Outcome
    from dream.lint.claims import Claim

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
    cached: int = 0  # memories answered from the cache (dream.lint.cache): not checked again

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["findings"] = [asdict(f) for f in self.findings]
        return data


def lint_store(store_root: Path, tree: Tree, settings: Settings) -> LintReport | None:
    """Check every memory in `tree` against the store's project; None when the project is unknown.

    Memories whose answer is kept for this project's state (dream.lint.cache)
    are not checked again; when all are, the project's files are not even listed.
    """
    started = time.monotonic()
    found = find_project(store_root, settings)
    if found is None:
        return None
    from dream.lint import cache  # start-up: the checks, only for a store whose project is known (most have none)
    from dream.lint.checks import Checker  # start-up: see above
    from dream.lint.claims import memory_claims  # start-up: see above

    root, found_by = found
    deadline = started + settings.lint_seconds
    state = cache.project_state(root, settings.lint_seconds)
    hashes = {rel: cache.memory_hash(data) for rel, data in tree.items()}
    kept = cache.load(store_root, state[0]) if state else {}
    answers = {rel: kept[rel] for rel in tree if kept.get(rel, {}).get("sha") == hashes[rel]}
    todo = sorted(rel for rel in tree if rel not in answers)
    head = state[1] if state else ""
    if todo or not state:
        project = open_project(root, found_by, settings.lint_seconds)
        head = project.head
        claims = [claim for rel in todo for claim in memory_claims(rel, tree[rel])]
        fresh = _answers(todo, claims, Checker(project, deadline).check(claims), hashes)
        if state and time.monotonic() < deadline:  # past it, a step may have been cut short: keep nothing
            cache.save(store_root, state[0], {**answers, **{r: a for r, a in fresh.items() if not a["unchecked"]}})
        answers.update(fresh)
    report = LintReport(project=str(root), found_by=found_by, head=head, memories=len(tree),
                        cached=len(tree) - len(todo))
    _total(report, answers)
    report.seconds = round(time.monotonic() - started, 3)
    return report


def _answers(todo: list[str], claims: list[Claim], outcome: Outcome,
             hashes: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Each memory's answer, the cache's unit: how many claims, held and unchecked, and its findings."""
    answers: dict[str, dict[str, Any]] = {
        rel: {"sha": hashes[rel], "claims": 0, "held": 0, "unchecked": 0, "findings": []} for rel in todo}
    for claim in claims:
        answers[claim.memory]["claims"] += 1
    for claim in outcome.held:
        answers[claim.memory]["held"] += 1
    for claim in outcome.unchecked:
        answers[claim.memory]["unchecked"] += 1
    for finding in outcome.findings:
        answers[finding.memory]["findings"].append(asdict(finding))
    return answers


def _total(report: LintReport, answers: dict[str, dict[str, Any]]) -> None:
    from dream.lint.checks import Finding  # start-up: see lint_store

    for rel in sorted(answers):
        answer = answers[rel]
        report.claims += answer["claims"]
        report.held += answer["held"]
        report.unchecked += answer["unchecked"]
        report.findings += [Finding(**f) for f in answer["findings"]]
        if rel != INDEX and answer["claims"] and answer["held"] == answer["claims"]:
            report.verified.append(rel)  # it has claims, every one of which held
    report.findings.sort(key=lambda f: (f.memory, f.line, f.claim))


def needs_person(report: LintReport | dict | None) -> list[str]:
    """The findings as the sentences a person reads: for the report, the review page and the Claude engine.

    Takes the report itself or its JSON (as a proposal's report stores it).
    """
    if report is None:
        return []
    from dream.lint.checks import Finding  # start-up: see lint_store

    findings = report.findings if isinstance(report, LintReport) else [
        Finding(**f) for f in (report.get("findings") or [])]
    return [f"stale claim: {f.sentence()}" for f in findings]
