"""Run one eval case through the normal pipeline in a scratch folder.

The case's store and logs are written to a temporary folder, then each
step calls the library exactly as the command line does (`run`, `accept`,
`reject`). Time is the case's: run k happens at noon of the case's day
plus k hours, and the logs of a step are dated just before the run that
follows them, so "new since the last dream" means what it does for a user.
"""

from __future__ import annotations

import os
import tempfile
import time as _time
from datetime import datetime, time
from pathlib import Path
from typing import Any

from dream.errors import DreamError
from dream.eval.cases import Case, Log
from dream.eval.checks import Outcome, expected_changed, run_checks
from dream.eval.said import user_entries
from dream.eval.scorecard import CaseResult
from dream.pipeline.report import proposal_markdown
from dream.eval.project import add_commit, build_project
from dream.pipeline.run import run
from dream.review import decide
from dream.review.restore import restore
from dream.store import codex
from dream.store.layout import Layout
from dream.store.layouts import LayoutKind, layout_of
from dream.store.tree import read_tree
from dream.versions.proposals import Proposals

STEP_SECONDS = 3600
# What the cases assume whatever the user's config says; the model, instructions and budgets
# stay the user's, so `--engine claude` compares models and prompts on the same cases.
PINNED = {"enabled": True, "auto_accept": False, "similarity_threshold": 90.0, "transcripts": None}


def run_case(case: Case, engine: str) -> CaseResult:
    started = _time.monotonic()
    with tempfile.TemporaryDirectory(prefix="dream-eval-") as scratch:
        store = Path(scratch) / "store"
        outcome = _play(case, engine, store)
    failures = run_checks(outcome, case.expect)
    return CaseResult.of(case.category, case.id, case.why, failures, round(_time.monotonic() - started, 3),
                         outcome.changed(), case.known_miss_for(engine), quoted=outcome.quoted(),
                         chatter=case.chatter, named=not outcome.said and outcome.names(expected_changed(case.expect)),
                         errors=outcome.errors, actions=outcome.actions())


def _play(case: Case, engine: str, store: Path) -> Outcome:
    _write_store(store, case.store)
    settings = {**case.settings, "layout": case.layout.value}
    if case.project:  # a lint case: the git project its memories describe, beside the store
        build_project(store.parent / "project", case.project)
        settings["project"] = str(store.parent / "project")
    settings.update(_write_instructions(store.parent, case.instructions))
    day = case.today or max((log.date for log in case.logs), default=None)
    base = datetime.combine(day, time(12)).timestamp() if day else _time.time()
    summaries = _write_logs(store, case, case.logs, base - 60, first=0)
    outcome = Outcome(before={**case.store, **summaries}, after={}, said=_said(case, case.logs))
    runs = written = 0
    for step in case.steps:
        name, arg = (step, None) if isinstance(step, str) else next(iter(step.items()))
        try:
            if name in ("run", "run_all"):
                runs += 1
                result = run(store, engine=engine, force=True, now=base + runs * STEP_SECONDS,
                             overrides={**PINNED, **settings}, every_log=name == "run_all")
                _record_run(store, result, outcome)
            elif name == "logs":
                written += 1
                logs = [Log(log["date"], log["text"], log.get("session", "")) for log in arg or []]
                outcome.before.update(_write_logs(store, case, logs, base + runs * STEP_SECONDS + 60, first=100 * written))
                outcome.said += _said(case, logs)
            elif name == "commit":
                add_commit(store.parent / "project", dict(arg or {}), f"after run {runs}")
            else:
                _decide(store, name, arg, outcome)
        except DreamError as exc:
            outcome.errors.append(f"step {name}: {exc}")
        except Exception as exc:  # an engine's bug fails its case, not the whole scorecard
            outcome.errors.append(f"step {name}: internal error: {type(exc).__name__}: {exc}")
    evidence = _evidence(store)
    outcome.evidence = set(evidence) | set(summaries)
    outcome.after = {p: d.decode("utf-8", "replace") for p, d in {**read_tree(store), **evidence}.items()}
    return outcome


def _write_store(store: Path, files: dict[str, str]) -> None:
    store.mkdir(parents=True)
    for rel, text in files.items():
        path = store / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _write_instructions(scratch: Path, files: dict[str, str]) -> dict[str, str]:
    """The case's instruction files: `~/…` into a scratch home, the rest into the project beside the store.
    The home is always the scratch one, so the user's own global CLAUDE.md never changes a case's result."""
    home, project = scratch / "home", scratch / "project"
    home.mkdir(exist_ok=True)
    for name, text in files.items():
        path = home / name[2:] if name.startswith("~/") else project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    wrote_project = any(not name.startswith("~/") for name in files)
    return {"instructions_home": str(home), **({"project": str(project)} if wrote_project else {})}


def _said(case: Case, logs: list[Log]) -> list[str]:
    """What the user said in `logs`: their ``> `` lines, or in a Codex case what its rollout summaries quote."""
    if case.layout == LayoutKind.CODEX:
        return [e for log in logs for e in user_entries(codex.render_log(log.text))]
    return [e for log in logs for e in user_entries(log.text)]


def _evidence(store: Path) -> dict[str, bytes]:
    """The agent's own evidence files (Codex's rollout summaries …): never memory, but a case checks them."""
    layout = layout_of(store)
    if layout.kind != LayoutKind.CODEX:  # Claude Code's logs are not the store's: its cases never check them
        return {}
    return {p.relative_to(store).as_posix(): p.read_bytes() for p in sorted(store.rglob("*"))
            if p.is_file() and layout.is_evidence(p.relative_to(store).parts[0])}


def _write_logs(store: Path, case: Case, logs: list[Log], mtime: float, first: int) -> dict[str, str]:
    """Write the logs; returns the evidence files written in the store (a Codex case's rollout summaries)."""
    evidence = {}
    for number, log in enumerate(logs, first + 1):
        name = log.session or f"s{number:03d}"
        if case.layout == LayoutKind.CODEX:  # Codex's phase 1 output: a rollout summary for each session
            path = store / codex.SUMMARIES / f"{log.date}T12-00-00-{name}.md"
            text = f"thread_id: eval-{name}\nupdated_at: {log.date}T12:00:00+00:00\ncwd: /home/user/project\n\n{log.text}"
            evidence[path.relative_to(store).as_posix()] = text
        else:
            path = store / "logs" / f"{log.date:%Y}" / f"{log.date:%m}" / f"{log.date:%d}" / f"{name}-eval.md"
            text = log.text
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        os.utime(path, (mtime, mtime))
    return evidence


def _record_run(store: Path, result: Any, outcome: Outcome) -> None:
    outcome.statuses.append(str(result.status))
    outcome.needs += result.needs_person
    if result.error:
        outcome.errors.append(f"run {len(outcome.statuses)} {result.status}: {result.error}")
    if not result.proposal_id:
        return
    proposals = Proposals(Layout.open(store))
    proposal = proposals.get(result.proposal_id)
    outcome.reports.append(proposals.report(proposal))
    outcome.artefacts += proposal_markdown(proposals, proposal) + proposals.diff(proposal)


def _decide(store: Path, name: str, arg: Any, outcome: Outcome) -> None:
    if name == "restore":
        restore(store, str(arg))
        return
    if name == "rollback":
        if outcome.reports:
            decide.rollback(store, outcome.reports[-1]["base_version"])
        return
    if Proposals(Layout.open(store)).latest_pending() is None:
        return  # nothing waits for a decision: the case's checks say whether that was right
    # What waits may be the last run's proposal, or the rest a partial accept left pending (a
    # run with nothing new leaves that one standing): a person decides on what waits.
    if name == "accept":
        decide.accept(store)
    elif name == "accept_only":
        decide.accept(store, only=list(arg))
    elif name == "accept_except":
        decide.accept(store, except_=list(arg))
    elif name == "reject":
        decide.reject(store)
    elif name == "reject_forget":
        decide.reject(store, forget_requests=True)
