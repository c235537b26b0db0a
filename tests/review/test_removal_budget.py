"""The removal budget: a proposal that takes out more than its share is flagged and auto-accept refuses it.

The store: two memories that are the same checklist saved twice, and one
more. The offline engine merges the pair (nothing dropped: the lines move
into the survivor), which removes one file of three: within the default
budget of 20% of the lines, over a files budget of 20%.
"""

from __future__ import annotations

from pathlib import Path

from dream.pipeline.report import render_markdown
from dream.store.layout import Layout
from dream.versions.proposals import Proposals
from helpers.git_project import write

CHECKLIST = ("---\nname: Deploy checklist\ndescription: steps before each deploy\ntype: project\n---\n"
             "1. Tag the release.\n2. Run migrations.\n")


def _store(root: Path, config: str) -> Path:
    write(root, {
        "MEMORY.md": "- [Deploy checklist](project_deploy_checklist.md) — steps before each deploy\n"
                     "- [Deploy checklist](project_deploy_checklist_v2.md) — steps before each deploy\n"
                     "- [Database](project_database.md) — Postgres 15\n",
        "project_deploy_checklist.md": CHECKLIST,
        "project_deploy_checklist_v2.md": CHECKLIST.replace("migrations.\n", "migrations.\n3. Smoke tests.\n"),
        "project_database.md": "---\nname: Database\ndescription: Postgres 15\ntype: project\n---\nPostgres 15.\n",
        "logs/2026/11/20/s1-deploy.md": "> the deploy went fine\n< good\n",
        ".dream/config.toml": "auto_accept = true\n" + config,
    })
    return root


def _run(cli, store: Path) -> dict:
    res = cli("run", "--store", str(store), "--engine", "offline", "--force", "--json")
    assert res.code == 0 and res.json["status"] == "proposed", (res.stdout, res.stderr)
    return res.json


def test_auto_accept_takes_a_merge_within_the_budget(cli, tmp_path):
    outcome = _run(cli, _store(tmp_path / "store", "removal_budget_files = 0.5\n"))
    assert outcome["accepted_version"] is not None


def test_the_removal_budget_stops_an_auto_accept(cli, tmp_path):
    store = _store(tmp_path / "store", "removal_budget_files = 0.2\n")
    outcome = _run(cli, store)
    assert outcome["accepted_version"] is None
    proposals = Proposals(Layout.open(store))
    proposal = proposals.get(outcome["proposal_id"])
    assert proposal.status == "pending"
    report = proposals.report(proposal)
    assert report["removal_budget"]["over"] and report["removal_budget"]["files_removed"] == 1
    top = render_markdown(report).split("## ", 1)[0]
    assert "**Over the removal budget**: removes 1 of 3 memory files (33%, budget 20%)" in top
    assert (store / "project_deploy_checklist_v2.md").exists()  # the live store is as it was
