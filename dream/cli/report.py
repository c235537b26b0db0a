"""`dream report`: runs, outcomes, spend and review of one store or a fleet, in SQL over their histories."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from dream.cli.app import AllOpt, JsonOpt, RootOpt, StoreOpt, app
from dream.cli.console import common_root, emit_json, out, project_names, say, table
from dream.errors import BadInput

COLUMNS = {"runs": "runs", "proposed": "proposed", "noop": "noop", "skipped": "skipped", "failed": "failed",
           "tokens": "tokens", "cost_usd": "cost $", "accepted": "accepted", "rejected": "rejected",
           "acceptance_rate": "accept rate", "lines_removed": "lines removed",
           "waiting_proposal": "waiting", "waiting_hours": "waiting h", "needs_person": "needs a person"}


@app.command()
def report(
    store: StoreOpt = Path("."),
    all_stores: AllOpt = False,
    roots: RootOpt = None,
    since: Annotated[Optional[str], typer.Option(
        help="Only runs and review actions from this date on (YYYY-MM-DD, or an ISO time).")] = None,
    sql: Annotated[bool, typer.Option("--sql", help="Print the SQL view over the histories, for duckdb.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Runs, outcomes, tokens, cost, acceptance and what waits for review, per store and in total (DuckDB)."""
    from dream import history_report  # start-up: see dream/cli/__init__.py
    from dream.pipeline.fleet import fleet_stores  # start-up: see dream/cli/__init__.py
    from dream.store.layout import Layout  # start-up: see dream/cli/__init__.py

    stores = fleet_stores(roots or []) if all_stores or roots else [Layout.open(store).root]
    if sql:
        for line in history_report.view_sql(history_report.history_files(stores)).rstrip().splitlines():
            say(line)  # say() writes one line, escaping control characters: the view is many
        return
    found = history_report.report(stores, parse_since(since))
    count_notes(found)
    if as_json:
        emit_json(found)
        return
    _print_report(found)


def count_notes(found: dict[str, Any]) -> None:
    """Each store's open notes for a person, beside its history: the notes ledger says what still waits."""
    for row in found["stores"]:
        row["needs_person"] = _open_notes(Path(row["store"]))
    found["total"]["needs_person"] = sum(row["needs_person"] or 0 for row in found["stores"])


def _open_notes(store: Path) -> int | None:
    """How many notes wait for a person; None when the ledger is damaged (`dream notes` names it), so that
    one store's damage does not end the report of the others."""
    from dream import notes  # start-up: see dream/cli/__init__.py
    from dream.store.layout import Layout  # start-up: see dream/cli/__init__.py
    from dream.store.records import DamagedRecord  # start-up: see dream/cli/__init__.py

    try:
        return len(notes.ranked(notes.load(Layout(store))))
    except DamagedRecord:
        return None


def parse_since(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise BadInput(f"--since {text!r}: not a date (YYYY-MM-DD) or an ISO time") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _print_report(found: dict[str, Any]) -> None:
    rows = found["stores"]
    if not rows:
        out.print("no runs yet")
        return
    stores = [row["store"] for row in rows]
    under = f" (stores under {root})" if (root := common_root(stores)) else ""
    body = [[name, *(row[key] for key in COLUMNS)] for name, row in zip(project_names(stores), rows)]
    total = found["total"]
    body.append([f"total: {total['stores']} store(s)", *(total.get(key) for key in COLUMNS)])
    body[-1][list(COLUMNS).index("waiting_proposal") + 1] = total["waiting"]
    body[-1][list(COLUMNS).index("waiting_hours") + 1] = total["longest_wait_hours"]
    out.print(table(f"dream report{under}", ["store", *COLUMNS.values()], body))
