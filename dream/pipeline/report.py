"""The report that comes with every proposal, as JSON and as markdown."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from dream.review.retention import of_proposal as retention_of
from dream.review.budget import headline as budget_headline
from dream.review.retention import render_markdown as retention_markdown
from dream.review.summary import Counts, change_detail

if TYPE_CHECKING:  # types only: `dream diff` renders reports without loading the engines (polars)
    from dream.engines.base import Change, EngineResult
    from dream.versions.proposals import Proposal, Proposals


def build_report(*, proposal_id: str, run_id: str, engine: str, base_version: int,
                 result: EngineResult, changed: list[str], findings: list, sessions_read: int,
                 redactions: int, duration_s: float, warnings: list[str]) -> dict[str, Any]:
    counts = Counter(c.action for c in result.changes)
    return {
        "proposal_id": proposal_id,
        "run_id": run_id,
        "engine": engine,
        "base_version": base_version,
        "files_changed": changed,
        "counts": dict(sorted(counts.items())),
        "changes": [asdict(c) for c in result.changes],
        "finish": [asdict(c) for c in result.finish],
        "summary": result.summary,
        "needs_person": list(result.needs_person),
        "findings": [asdict(f) for f in findings],
        "sessions_read": sessions_read,
        "redactions": redactions,
        "usage": asdict(result.usage),
        "duration_s": round(duration_s, 3),
        "warnings": warnings,
    }


def _change_line(c: dict, retention: dict | None) -> str:
    detail = change_detail(c, retention) if retention else c.get("detail")
    extra = f" — {detail}" if detail else ""
    src = f" (from {c['source']})" if c.get("source") else ""
    return f"- **{c.get('action', '?')}** `{c.get('path', '')}`: {c.get('reason', '')}{extra}{src}"


def proposal_markdown(proposals: Proposals, proposal: Proposal, retention: dict | None = None) -> str:
    """A proposal's report as people read it, from its JSON report and its retention summary.

    Proposals of a dream before 0.1 stored their markdown: it is shown as stored.
    """
    stored = proposals.stored_report_md(proposal)
    if stored:
        return stored
    report = proposals.report(proposal)
    retention = retention or retention_of(proposals, proposal, report)
    return render_markdown({**report, "retention": retention})


def render_markdown(report: dict[str, Any]) -> str:
    """The report as markdown. Tolerant of a report missing keys (written by an older or a damaged dream)."""
    u = {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0, "cache_creation_tokens": 0,
         "turns": 0, "cost_usd": 0.0, **(report.get("usage") or {})}
    over = budget_headline(report.get("removal_budget") or {})
    lines = [
        f"# Dream proposal {report.get('proposal_id', '')}".rstrip(),
        "",
        *([over, ""] if over else []),
        f"- engine: {report.get('engine', '?')}, base version: {report.get('base_version', '?')}",
        f"- sessions read: {report.get('sessions_read', 0)}, secrets redacted: {report.get('redactions', 0)}",
        f"- files changed: {len(report.get('files_changed') or [])}",
        f"- tokens: {u['input_tokens']} in, {u['output_tokens']} out, "
        f"{u['cache_read_tokens']} cache read, {u['cache_creation_tokens']} cache write; "
        f"turns: {u['turns']}; est. cost ${u['cost_usd']:.4f}",
        f"- duration: {report.get('duration_s', 0)} s",
    ]
    retention = report.get("retention")
    if retention:  # the counts every other view shows too
        counts = Counts.of(report, retention)
        lines += [f"- lines: {counts.lines_sentence()}", f"- {counts.changes_sentence()}"]
    lines += [""]
    if retention:  # dropped items first, with a count
        lines += retention_markdown(retention) + [""]
    lines += [
        "## Changes",
        "",
    ]
    lines += [_change_line(c, retention) for c in report.get("changes") or []] or ["(none)"]
    if report.get("finish"):
        lines += ["", "## Finish (made by dream after the model, not by it)", ""]
        lines += [_change_line(c, retention) for c in report["finish"]]
    if report.get("needs_person"):
        lines += ["", "## Needs a person", ""] + [f"- {item}" for item in report["needs_person"]]
    earlier = [n for n in report.get("notes") or [] if n.get("run_id") != report.get("run_id")]
    if earlier:  # still open from earlier nights: `dream notes take N` / `dream notes dismiss N` answers one
        lines += ["", f"## Still open from earlier nights ({len(earlier)})", ""]
        lines += [f"- #{n.get('id')} ({n.get('kind')}) {n.get('text')}" for n in earlier]
    if report.get("summary"):
        lines += ["", "## Engine summary", "", report["summary"].strip()]
    if report.get("findings"):
        lines += ["", "## Findings", ""]
        lines += [f"- {f['severity']}: `{f['path']}` {f['rule']}: {f['message']}" for f in report["findings"]]
    if report.get("warnings"):
        lines += ["", "## Warnings", ""] + [f"- {w}" for w in report["warnings"]]
    return "\n".join(lines) + "\n"


def describe_changes(changes: list[Change]) -> str:
    counts = Counter(c.action for c in changes)
    return ", ".join(f"{n} {a}" for a, n in sorted(counts.items())) or "no changes"
