"""`dream eval`: score an engine on the labelled consolidation cases (see dream.eval)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from dream.cli.app import JsonOpt, app
from dream.cli.console import emit_json, out, table


@app.command("eval")
def eval_cmd(
    engine: Annotated[str, typer.Option("--engine", "-e", help="offline, claude or auto.")] = "offline",
    cases: Annotated[Optional[Path], typer.Option("--cases", help="Folder of case files (default: data/eval).")] = None,
    only: Annotated[Optional[str], typer.Option("--only", help="Only cases whose category or id has this.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Run the labelled consolidation cases and print a scorecard per category.

    Exits 1 on any wrong change, and on any miss its case file does not name as known (`known_miss:`).
    """
    from dream.eval import evaluate  # start-up: see dream/cli/__init__.py

    card = evaluate(cases, engine, only)
    if as_json:
        emit_json(card.to_json())
    else:
        out.print(table(f"dream eval — {card.engine} engine", card.HEADERS, card.rows()))
        for result in card.failed():
            mark = "WRONG" if result.wrong else f"MISS (known: {result.known_miss})" if result.excused else "MISS"
            out.print(f"{mark} {result.category}/{result.id}: {'; '.join(result.failures)}", markup=False,
                      soft_wrap=True)
    if card.regressions():  # CI gates on it
        raise typer.Exit(1)
