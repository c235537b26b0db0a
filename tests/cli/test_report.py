"""`dream report`: SQL over the history files of one store or a fleet, read by DuckDB directly."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
from helpers.stores import DEMO

from dream.store.layout import Layout
from dream.versions.proposals import Proposals


def fleet(cli, root: Path) -> dict[str, Path]:
    """Three dreamed demos: one proposal waiting, one rejected, one accepted."""
    stores = {}
    for name in ("waiting", "rejected", "accepted"):
        store = root / f"-work-{name}" / "memory"
        shutil.copytree(DEMO, store, ignore=shutil.ignore_patterns(".dream"))
        assert cli("run", "--store", str(store), "--engine", "offline").code == 0
        stores[name] = store.resolve()
    assert cli("reject", "--store", str(stores["rejected"])).code == 0
    assert cli("accept", "--store", str(stores["accepted"])).code == 0
    return stores


def removed_lines(store: Path) -> int:
    proposals = Proposals(Layout.open(store))
    [proposal] = proposals.all()
    return sum(1 for line in proposals.diff(proposal).splitlines() if line.startswith("-") and not line.startswith("---"))


def test_report_all_shows_runs_outcomes_review_and_what_waits_per_store_and_in_total(home, tmp_path, cli):
    stores = fleet(cli, tmp_path / "root")

    result = cli("report", "--root", str(tmp_path / "root"), "--json")

    assert result.code == 0, result.stderr
    rows = {row["store"]: row for row in result.json["stores"]}
    assert sorted(rows) == sorted(map(str, stores.values()))
    waiting, rejected, accepted = (rows[str(stores[k])] for k in ("waiting", "rejected", "accepted"))
    assert (waiting["runs"], waiting["proposed"]) == (1, 1)
    assert waiting["waiting_proposal"] == Proposals(Layout.open(stores["waiting"])).ids()[0]
    assert waiting["waiting_hours"] is not None and waiting["acceptance_rate"] is None
    assert (rejected["rejected"], rejected["acceptance_rate"], rejected["waiting_proposal"]) == (1, 0, None)
    assert (accepted["accepted"], accepted["acceptance_rate"], accepted["waiting_proposal"]) == (1, 1, None)
    assert waiting["lines_removed"] == removed_lines(stores["waiting"]) > 0
    total = result.json["total"]
    assert (total["stores"], total["runs"], total["proposed"], total["waiting"]) == (3, 3, 3, 1)
    assert (total["accepted"], total["rejected"], total["acceptance_rate"]) == (1, 1, 0.5)
    assert total["lines_removed"] == sum(r["lines_removed"] for r in rows.values())


def test_since_leaves_out_older_runs_and_a_bad_date_is_one_line_error(home, tmp_path, cli):
    stores = fleet(cli, tmp_path / "root")

    later = cli("report", "--store", str(stores["rejected"]), "--since", "2999-01-01", "--json")
    bad = cli("report", "--store", str(stores["rejected"]), "--since", "last tuesday")

    assert later.code == 0 and later.json["total"]["runs"] == 0 and later.json["total"]["rejected"] == 0
    assert bad.code == 2 and "--since 'last tuesday'" in bad.stderr and "Traceback" not in bad.stderr


def test_the_printed_view_runs_in_plain_duckdb_and_answers_the_same(home, tmp_path, cli):
    stores = fleet(cli, tmp_path / "root")
    view = cli("report", "--root", str(tmp_path / "root"), "--sql")
    assert view.code == 0

    with duckdb.connect() as con:
        con.execute(view.stdout)
        runs = con.execute("SELECT store, count(*) FROM dream_history WHERE kind = 'run' GROUP BY store").fetchall()

    assert dict(runs) == {str(store): 1 for store in stores.values()}


def test_a_store_never_dreamed_reports_no_runs(home, tmp_path, cli):
    store = tmp_path / "fresh"
    shutil.copytree(DEMO, store, ignore=shutil.ignore_patterns(".dream"))

    result = cli("report", "--store", str(store))

    assert result.code == 0 and "no runs yet" in result.stdout


def test_the_fleet_overview_page_reads_the_same_query(home, tmp_path, cli):
    stores = fleet(cli, tmp_path / "root")
    report = cli("report", "--root", str(tmp_path / "root"), "--json").json

    page = cli("status", "--root", str(tmp_path / "root"), "--html", str(tmp_path / "overview.html"), "--json")

    assert page.code == 0, page.stderr
    [proposal] = page.json["overview"]["proposals"]  # the one still waiting
    assert proposal["store"] == str(stores["waiting"])
    expected = next(row for row in report["stores"] if row["store"] == str(stores["waiting"]))
    assert proposal["history"]["waiting_proposal"] == expected["waiting_proposal"] == proposal["id"]
    assert proposal["history"]["runs"] == expected["runs"]
