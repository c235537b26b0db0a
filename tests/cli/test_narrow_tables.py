"""`dream status --all` and `dream history` at 80 columns: every store told apart, no header or cell cut."""

from __future__ import annotations

import shutil
from pathlib import Path

from helpers.stores import DEMO

PROJECTS = ["-home-dev-work-payments-api", "-home-dev-work-payments-web", "-home-dev-work-payments-worker"]
STATUS_COLUMNS = ["store", "gate", "sessions waiting", "last dream", "pending"]
RUN_COLUMNS = ["started", "status", "engine", "sessions", "changes", "proposal", "tokens in/out", "cache read",
               "cost $", "secs"]


def three_stores(home: Path) -> list[Path]:
    """Three stores whose paths differ only near their end, under one long root."""
    stores = []
    for project in PROJECTS:
        store = home / ".claude" / "projects" / project / "memory"
        shutil.copytree(DEMO, store, ignore=shutil.ignore_patterns(".dream"))
        stores.append(store.resolve())
    return stores


def assert_readable(text: str, labels: list[str], names: list[str]) -> None:
    lines = text.splitlines()
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    assert "…" not in text and "..." not in text
    for label in labels:  # a column header or a stacked row's label, never cut
        assert label in text, label
    for name in names:  # each store once per row, whole, so the rows are told apart
        assert any(name in line for line in lines), name


def test_status_all_and_history_all_at_80_columns(home: Path, cli) -> None:
    stores = three_stores(home)
    ran = cli("run", "--all", "--engine", "offline", "--json")
    assert ran.code == 0 and ran.json["counts"]["proposed"] == 3, ran.stderr
    names = [project.removeprefix("-") for project in PROJECTS]  # as the overview page names them (issue 39)
    narrow = {"COLUMNS": "80"}

    status = cli("status", "--all", env=narrow)
    assert status.code == 0, status.stderr
    root = home.resolve() / ".claude" / "projects"  # longer than a line here: folded, not cut
    assert f"3 store(s) under {root}" in status.stdout.replace("\n", "")
    assert_readable(status.stdout, STATUS_COLUMNS, names)
    for row in ran.json["stores"]:
        assert row["proposal"] in status.stdout

    history = cli("history", "--all", env=narrow)
    assert history.code == 0, history.stderr
    assert_readable(history.stdout, ["store", *RUN_COLUMNS], names)

    one = cli("history", "--store", str(stores[0]), env=narrow)
    assert_readable(one.stdout, RUN_COLUMNS, [ran.json["stores"][0]["proposal"]])

    # --json keeps the full paths
    full = cli("status", "--all", "--json", env=narrow).json
    assert [row["store"] for row in full["stores"]] == [str(s) for s in stores]
    assert {row["store"] for row in cli("history", "--all", "--json", env=narrow).json["runs"]} == set(map(str, stores))


def test_a_table_that_fits_stays_a_table(home: Path, cli) -> None:
    three_stores(home)
    wide = cli("status", "--all", env={"COLUMNS": "160"})
    header = next(line for line in wide.stdout.splitlines() if "sessions waiting" in line)
    assert all(column in header for column in STATUS_COLUMNS)  # one header line: a table
