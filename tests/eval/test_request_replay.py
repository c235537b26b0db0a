"""No request is lost: what a person did not accept stays pending, or comes back in the next run.

These drive a real store through the command line, as a user would: a run
with two requests, a partial accept (what it skipped stays pending, rebased
onto the new version), a reject or a rollback (the next ordinary run offers
the requests again).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

DB = ("---\nname: Database\ndescription: Production database is Postgres 15\ntype: project\n---\n\n"
      "Production runs Postgres 15.\n")
JENKINS = "---\nname: Jenkins\ndescription: old CI\ntype: reference\n---\n\nBuilds ran on jenkins.internal.\n"
INDEX = "- [Database](project_database.md) — Postgres 15\n- [Jenkins](reference_jenkins.md) — old CI\n"
LOG = "> forget about Jenkins\n> actually, we're on Postgres 16 now, not 15\n< Noted.\n"


def make_store(root: Path) -> Path:
    store = root / "store"
    (store / "logs/2026/11/20").mkdir(parents=True)
    (store / "MEMORY.md").write_text(INDEX)
    (store / "project_database.md").write_text(DB)
    (store / "reference_jenkins.md").write_text(JENKINS)
    log = store / "logs/2026/11/20/s1-cleanup.md"
    log.write_text(LOG)
    old = time.time() - 3600  # written before the first run
    os.utime(log, (old, old))
    return store


def run(cli, store: Path) -> dict:
    result = cli("run", "--store", str(store), "--engine", "offline", "--force", "--json")
    assert result.code == 0, result.stderr
    return result.json


def test_partial_accept_then_run_gives_the_unaccepted_requests_back(cli, tmp_path):
    store = make_store(tmp_path)
    first = run(cli, store)
    assert first["status"] == "proposed"
    taken = cli("accept", "--store", str(store), "--except", "project_database.md", "--json")
    assert taken.code == 0, taken.stderr
    assert not (store / "reference_jenkins.md").exists()  # the forget request was accepted
    assert "Postgres 15" in (store / "project_database.md").read_text()  # the correction was not

    rest = taken.json["new_proposal_id"]  # what was not taken stays pending, rebased onto the new version
    again = run(cli, store)  # no new session since: the rest stands as it is
    assert again["status"] == "noop"
    assert cli("accept", rest, "--store", str(store), "--json").code == 0
    text = (store / "project_database.md").read_text()
    assert "Postgres 16" in text and "(was 15 until 2026-11-20)" in text

    after = run(cli, store)  # every session was decided on
    assert after["status"] == "noop" and after["sessions_read"] == 0


def test_reject_offers_the_requests_again_unless_forgotten(cli, tmp_path):
    store = make_store(tmp_path)
    run(cli, store)
    assert cli("reject", "--store", str(store), "--json").code == 0
    assert run(cli, store)["status"] == "proposed"

    assert cli("reject", "--store", str(store), "--forget-requests", "--json").code == 0
    dropped = run(cli, store)
    assert dropped["status"] == "noop" and dropped["sessions_read"] == 0
    assert (store / "reference_jenkins.md").exists()


def test_rollback_offers_the_undone_requests_again(cli, tmp_path):
    store = make_store(tmp_path)
    base = run(cli, store)["base_version"]
    assert cli("accept", "--store", str(store), "--json").code == 0
    assert cli("rollback", str(base), "--store", str(store), "--json").code == 0
    assert (store / "reference_jenkins.md").exists()
    again = run(cli, store)
    assert again["status"] == "proposed" and again["sessions_read"] == 1
