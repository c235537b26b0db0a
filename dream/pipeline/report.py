"""The report that comes with every proposal, as JSON and as markdown."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict
from typing import Any

from dream.engines.base import Change, EngineResult
from dream.review.retention import render_markdown as retention_markdown


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


def _change_line(c: dict) -> str:
    extra = f" — {c['detail']}" if c.get("detail") else ""
    src = f" (from {c['source']})" if c.get("source") else ""
    return f"- **{c['action']}** `{c['path']}`: {c['reason']}{extra}{src}"


def render_markdown(report: dict[str, Any]) -> str:
    u = report["usage"]
    lines = [
        f"# Dream proposal {report['proposal_id']}",
        "",
        f"- engine: {report['engine']}, base version: {report['base_version']}",
        f"- sessions read: {report['sessions_read']}, secrets redacted: {report['redactions']}",
        f"- files changed: {len(report['files_changed'])}",
        f"- tokens: {u['input_tokens']} in, {u['output_tokens']} out, "
        f"{u['cache_read_tokens']} cache read, {u['cache_creation_tokens']} cache write; "
        f"turns: {u['turns']}; est. cost ${u['cost_usd']:.4f}",
        f"- duration: {report['duration_s']} s",
        "",
    ]
    if report.get("retention"):  # dropped items first, with a count
        lines += retention_markdown(report["retention"]) + [""]
    lines += [
        "## Changes",
        "",
    ]
    lines += [_change_line(c) for c in report["changes"]] or ["(none)"]
    if report.get("finish"):
        lines += ["", "## Finish (made by dream after the model, not by it)", ""]
        lines += [_change_line(c) for c in report["finish"]]
    if report.get("needs_person"):
        lines += ["", "## Needs a person", ""] + [f"- {item}" for item in report["needs_person"]]
    if report.get("summary"):
        lines += ["", "## Engine summary", "", report["summary"].strip()]
    if report["findings"]:
        lines += ["", "## Findings", ""]
        lines += [f"- {f['severity']}: `{f['path']}` {f['rule']}: {f['message']}" for f in report["findings"]]
    if report["warnings"]:
        lines += ["", "## Warnings", ""] + [f"- {w}" for w in report["warnings"]]
    return "\n".join(lines) + "\n"


def describe_changes(changes: list[Change]) -> str:
    counts = Counter(c.action for c in changes)
    return ", ".join(f"{n} {a}" for a, n in sorted(counts.items())) or "no changes"
