"""`dream report`: SQL over the history files of one store or a whole fleet, read by DuckDB directly.

Every store's ``.dream/history.jsonl`` (see `dream.history`) becomes one view,
``dream_history``: DuckDB's ``read_json`` over all the files at once, with the
columns typed (`HISTORY_TYPES`) and a ``store`` column (the folder holding
``.dream/``). Python does not parse a line: DuckDB reads them, which is what it
is good at. A line DuckDB cannot read (cut short by a crash) is skipped by
``ignore_errors``; `dream history` is the command that names such lines.

`REPORT_SQL` turns the view into one row per store: runs and how they ended,
tokens and cost, proposals accepted and rejected (the acceptance rate), lines
the proposals removed, and the proposal waiting for review, with how long it
has waited. Only a store's newest proposal can wait: a new one supersedes it.
What a partial accept or reject left pending is a proposal too (its
`left-pending` event), and waits until it is decided on.

`view_sql` is the view's own definition, which `dream report --sql` prints so
that anyone can run their own SQL in the `duckdb` shell (docs/report.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from dream.history import EVENT_TYPES, LEFT_PENDING, RUN_TYPES
from dream.store.layout import Layout

HISTORY_TYPES = {"kind": "VARCHAR", **RUN_TYPES, **EVENT_TYPES}
VIEW = "dream_history"
# A line longer than this is refused by DuckDB even with ignore_errors; history lines are far shorter.
MAX_LINE_BYTES = 1 << 24

# The actions that close a proposal: it no longer waits once one of these names it.
CLOSING_ACTIONS = ("accept", "reject", "rebase", "take-note")  # take-note: a taken note replaced it (dream.review.answer_note)

# The files are read once (MATERIALIZED): each mention of the view would read them all again.
REPORT_SQL = f"""
WITH lines AS MATERIALIZED (
    SELECT * FROM {VIEW}
), runs AS (
    SELECT * FROM lines WHERE kind = 'run' AND ($since IS NULL OR started_at >= $since)
), decisions AS (
    SELECT * FROM lines WHERE kind = 'event' AND action IN ('accept', 'reject')
                          AND ($since IS NULL OR "at" >= $since)
), proposed AS (
    SELECT store, proposal_id, started_at AS made_at, finished_at AS proposed_at
    FROM lines WHERE kind = 'run' AND status = 'proposed' AND proposal_id IS NOT NULL
    UNION ALL  -- what a partial accept or reject left pending waits as a proposal of its own
    SELECT store, proposal_id, "at", "at" FROM lines
    WHERE kind = 'event' AND action = '{LEFT_PENDING}' AND proposal_id IS NOT NULL
), newest_proposal AS (
    SELECT store, arg_max(proposal_id, made_at) AS proposal_id, max(proposed_at) AS proposed_at
    FROM proposed GROUP BY store
), closed AS (
    SELECT DISTINCT store, proposal_id FROM lines WHERE kind = 'event' AND action IN {CLOSING_ACTIONS}
), waiting AS (
    SELECT n.* FROM newest_proposal n ANTI JOIN closed c USING (store, proposal_id)
), per_run AS (
    SELECT store, count(*) AS runs,
           count(*) FILTER (status = 'proposed') AS proposed, count(*) FILTER (status = 'noop') AS noop,
           count(*) FILTER (status = 'skipped') AS skipped, count(*) FILTER (status = 'failed') AS failed,
           sum(coalesce(input_tokens, 0) + coalesce(output_tokens, 0) + coalesce(cache_read_tokens, 0)
               + coalesce(cache_creation_tokens, 0)) AS tokens,
           sum(coalesce(cost_usd, 0)) AS cost_usd, sum(coalesce(lines_removed, 0)) AS lines_removed,
           max(started_at) AS last_run
    FROM runs GROUP BY store
), per_decision AS (
    SELECT store, count(*) FILTER (action = 'accept') AS accepted, count(*) FILTER (action = 'reject') AS rejected
    FROM decisions GROUP BY store
), stores AS (
    SELECT DISTINCT store FROM lines WHERE store IS NOT NULL
)
SELECT s.store,
       coalesce(r.runs, 0) AS runs, coalesce(r.proposed, 0) AS proposed, coalesce(r.noop, 0) AS noop,
       coalesce(r.skipped, 0) AS skipped, coalesce(r.failed, 0) AS failed,
       coalesce(r.tokens, 0) AS tokens, round(coalesce(r.cost_usd, 0), 4) AS cost_usd,
       coalesce(d.accepted, 0) AS accepted, coalesce(d.rejected, 0) AS rejected,
       round(d.accepted / nullif(d.accepted + d.rejected, 0), 3) AS acceptance_rate,
       coalesce(r.lines_removed, 0) AS lines_removed,
       w.proposal_id AS waiting_proposal,
       round(epoch(now() - w.proposed_at) / 3600, 1) AS waiting_hours,
       r.last_run
FROM stores s
LEFT JOIN per_run r USING (store) LEFT JOIN per_decision d USING (store) LEFT JOIN waiting w USING (store)
ORDER BY s.store
"""

TOTAL_SQL = """
SELECT count(*) AS stores, sum(runs) AS runs, sum(proposed) AS proposed, sum(noop) AS noop,
       sum(skipped) AS skipped, sum(failed) AS failed, sum(tokens) AS tokens, round(sum(cost_usd), 4) AS cost_usd,
       sum(accepted) AS accepted, sum(rejected) AS rejected,
       round(sum(accepted) / nullif(sum(accepted) + sum(rejected), 0), 3) AS acceptance_rate,
       sum(lines_removed) AS lines_removed, count(waiting_proposal) AS waiting,
       max(waiting_hours) AS longest_wait_hours
FROM report
"""


def history_files(stores: Iterable[Path]) -> list[str]:
    """The history file of each store that has one (a store never dreamed has none)."""
    return [str(path) for path in (Layout(Path(store)).history for store in stores) if path.is_file()]


def view_sql(files: list[str]) -> str:
    """``CREATE VIEW dream_history AS …`` over `files`: the view `dream report` queries, as SQL anyone can run."""
    columns = ", ".join(f"'{name}': '{sql_type}'" for name, sql_type in HISTORY_TYPES.items())
    paths = ", ".join(_quoted(path) for path in files)
    return (
        f"CREATE OR REPLACE VIEW {VIEW} AS\n"
        f"SELECT *, regexp_replace(filename, '/\\.dream/history\\.jsonl$', '') AS store\n"
        f"FROM read_json([{paths}], format = 'newline_delimited', columns = {{{columns}}},\n"
        f"               filename = true, ignore_errors = true, maximum_object_size = {MAX_LINE_BYTES});\n"
    )


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def report(stores: Iterable[Path], since: datetime | None = None) -> dict[str, Any]:
    """``{"stores": [one row per store with a history], "total": {…}}`` (`REPORT_SQL`, `TOTAL_SQL`)."""
    files = history_files(stores)
    if not files:
        return {"stores": [], "total": _empty_total()}
    import duckdb  # start-up: ~0.1 s, and only this command needs it

    with duckdb.connect() as con:
        con.execute(view_sql(files))
        con.execute(f"CREATE TEMP TABLE report AS {REPORT_SQL}", {"since": since})
        rows = _dicts(con.execute("SELECT * FROM report ORDER BY store"))
        [total] = _dicts(con.execute(TOTAL_SQL))
    return {"stores": rows, "total": total}


def _dicts(cursor: Any) -> list[dict[str, Any]]:
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def _empty_total() -> dict[str, Any]:
    keys = ("stores", "runs", "proposed", "noop", "skipped", "failed", "tokens", "cost_usd", "accepted",
            "rejected", "lines_removed", "waiting")
    return {**dict.fromkeys(keys, 0), "acceptance_rate": None, "longest_wait_hours": None}
