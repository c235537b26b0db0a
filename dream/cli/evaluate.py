"""`dream eval`: score an engine on the labelled consolidation cases (see dream.eval)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from dream.cli.app import JsonOpt, app
from dream.cli.console import emit_json, err, out, table


@app.command("eval")
def eval_cmd(
    engine: Annotated[str, typer.Option("--engine", "-e", help="offline, claude or auto.")] = "offline",
    cases: Annotated[Optional[Path], typer.Option(
        "--cases", help="Folder of case files, or one file (default: data/eval).")] = None,
    only: Annotated[Optional[str], typer.Option("--only", help="Only cases whose category or id has this.")] = None,
    blind: Annotated[bool, typer.Option(
        "--blind", help="Run the blind cases (default: data/eval-blind) and print only counts per category.")] = False,
    scores_only: Annotated[bool, typer.Option(
        "--scores-only", help="Print only counts per category: no case ids, sentences or failures.")] = False,
    coverage: Annotated[bool, typer.Option(
        "--coverage", help="Print which phrase-file keys each language fills (runs no case).")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Run the labelled consolidation cases and print a scorecard per category.

    Each case ends passed, wrong (a wrong change), noted (missed, but listed for a person, quoting the
    user) or silent (missed, nobody told). Exits 1 on any wrong change, and on any miss its case file does
    not name as known (`known_miss:`); with --blind or --scores-only, on wrong changes only.
    """
    from dream.eval import default_blind_dir, evaluate  # start-up: see dream/cli/__init__.py

    if coverage:
        _print_coverage(as_json)
        return
    hidden = blind or scores_only
    card = evaluate(cases or (default_blind_dir() if blind else None), engine, only, hidden=hidden)
    if as_json:
        emit_json(card.scores_json() if hidden else card.to_json())
    else:
        title = f"dream eval — {card.engine} engine" + (" (scores only)" if hidden else "")
        out.print(table(title, card.HEADERS, card.rows()))
        for category, shape, count in card.wrong_shapes():  # the failed check and the dream's action: no words
            out.print(f"wrong in {category}: {shape} ({count} case{'s' if count > 1 else ''})", markup=False)
        for result in [] if hidden else card.failed():
            mark = "WRONG" if result.wrong else f"MISS (known: {result.known_miss})" if result.excused else "MISS"
            out.print(f"{mark} {result.category}/{result.id}: {'; '.join(result.failures)}", markup=False,
                      soft_wrap=True)
    errored = [r for r in card.results if r.errors]
    if errored:  # a broken engine or phrase file must not read as a night of silent misses
        first = errored[0].errors[0]
        # a blind run shows no case's words: an error message may quote them
        shown = f"{first.split(':', 1)[0]} (details hidden: --blind)" if hidden else first
        err.print(f"dream eval: {len(errored)} case(s) could not run; first: {shown}", markup=False, soft_wrap=True)
    if errored or any(r.wrong for r in card.results) or (not hidden and card.regressions()):  # CI gates on it
        raise typer.Exit(1)


def _print_coverage(as_json: bool) -> None:
    """Each key of the phrase files' schema, with the languages that fill it and those that do not."""
    from dream.engines.offline.phrase_schema import coverage  # start-up: see dream/cli/__init__.py
    from dream.engines.offline.phrases import phrases_dir  # start-up: only --coverage reads the phrase files

    texts = {p.stem: p.read_text(encoding="utf-8") for p in sorted(phrases_dir().glob("*.toml"))}
    filled = coverage(texts)
    if as_json:
        emit_json({"languages": sorted(texts), "keys": filled})
        return
    rows = [[key, f"{len(codes)}/{len(texts)}", ", ".join(sorted(set(texts) - set(codes))) or "-"]
            for key, codes in sorted(filled.items())]
    out.print(table("phrase keys by language", ["key", "filled", "missing in"], rows))
