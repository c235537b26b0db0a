"""`dream eval`: labelled consolidation cases, scored per category for any engine.

A case is a small store plus activity logs, the steps a person takes
(run, accept, accept some files, reject, run again), and the outcome
written down as checks. Cases are YAML files under ``data/eval/`` so a
person can read and add them; `evaluate` runs every case through the
normal pipeline (the same `run` and `accept` the command line calls) in a
scratch folder and returns a `Scorecard`.
"""

from __future__ import annotations

from pathlib import Path

from dream.engines import require_configured, resolve_engine_name
from dream.errors import BadInput
from dream.eval.cases import Case, default_blind_dir, default_cases_dir, load_cases
from dream.eval.runner import run_case
from dream.eval.scorecard import CaseResult, Scorecard


def evaluate(cases_dir=None, engine: str = "offline", only: str | None = None, hidden: bool = False) -> Scorecard:
    """Run every case (or those whose category or id contains `only`) with `engine`.

    `hidden`: the cases are not to be read by whoever runs them; a case file that does not load is
    reported without its text (its author runs it with `--cases` to see why).
    """
    engine = resolve_engine_name(engine)
    require_configured(engine)
    folder = cases_dir or default_cases_dir()
    try:
        cases = load_cases(folder)
    except BadInput as exc:
        if hidden and any(Path(folder).glob("*.yaml")):
            raise BadInput(f"{folder}: the blind cases do not load (details hidden; their author runs "
                           f"`dream eval --cases {folder}` to see them)") from None
        raise exc
    if only:
        cases = [c for c in cases if only in c.category or only in c.id]
        if not cases:
            raise BadInput(f"{folder}: no case's category or id contains {only} (--only)")
    return Scorecard(engine, [run_case(case, engine) for case in cases])


__all__ = ["Case", "CaseResult", "Scorecard", "default_blind_dir", "default_cases_dir", "evaluate", "load_cases",
           "run_case"]
