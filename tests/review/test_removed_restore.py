"""`dream removed` lists what left the live store and why; `dream restore PATH` brings one memory back."""

from __future__ import annotations

from pathlib import Path

from dream import history
from dream.store.layout import Layout
from helpers.cli import assert_one_line_error
from helpers.git_project import write

SLACK = ("---\nname: Slack alerts integration\ndescription: deploy notices via webhook\ntype: project\n---\n"
         "Deploy notices are posted to #ops through the incoming webhook.\n")
SLACK_LINE = "- [Slack alerts integration](project_slack_alerts.md) — deploy notices via webhook"


def _forgotten(cli, root: Path) -> Path:
    """A store whose Slack memory a forget request removed, through run and accept."""
    store = root / "store"
    write(store, {
        "MEMORY.md": SLACK_LINE + "\n- [Database](project_database.md) — Postgres 15\n",
        "project_slack_alerts.md": SLACK,
        "project_database.md": "---\nname: Database\ndescription: Postgres 15\ntype: project\n---\nPostgres 15.\n",
        "logs/2026/11/20/s1-slack.md": "> forget the slack alerts integration, we retired it last week\n< ok\n",
    })
    assert cli("run", "--store", str(store), "--engine", "offline", "--force").code == 0
    assert cli("accept", "--store", str(store)).code == 0
    assert not (store / "project_slack_alerts.md").exists()
    return store


def test_removed_lists_the_memory_and_its_index_line_with_proposal_and_why(cli, tmp_path):
    store = _forgotten(cli, tmp_path)
    res = cli("removed", "--store", str(store), "--json")
    assert res.code == 0, res.stderr
    rows = {(r["kind"], r["path"]): r for r in res.json["removed"]}
    assert set(rows) == {("memory", "project_slack_alerts.md"), ("index line", "project_slack_alerts.md")}
    memory = rows[("memory", "project_slack_alerts.md")]
    proposal = cli("proposals", "--store", str(store), "--json").json["proposals"][0]["id"]
    assert memory["proposal_id"] == proposal and memory["source"] == "accept"
    assert "slack alerts" in memory["why"].lower()  # the request's own words
    assert rows[("index line", "project_slack_alerts.md")]["text"] == SLACK_LINE
    human = cli("removed", "--store", str(store))
    assert human.code == 0 and "project_slack_alerts.md" in human.stdout and "dream restore" in human.stdout


def test_restore_brings_the_memory_and_its_index_line_back_as_a_new_version(cli, tmp_path):
    store = _forgotten(cli, tmp_path)
    before = cli("status", "--store", str(store), "--json").json["current_version"]
    res = cli("restore", "project_slack_alerts.md", "--store", str(store), "--json")
    assert res.code == 0, res.stderr
    assert res.json["version"] == before + 1
    assert (store / "project_slack_alerts.md").read_text() == SLACK
    assert SLACK_LINE in (store / "MEMORY.md").read_text().splitlines()
    events = [e for e in history.read(Layout.open(store)).events if e["action"] == "restore"]
    assert len(events) == 1 and "project_slack_alerts.md" in events[0]["detail"]


def test_restore_refuses_a_memory_in_the_store_or_never_held(cli, tmp_path):
    store = _forgotten(cli, tmp_path)
    assert_one_line_error(cli("restore", "project_database.md", "--store", str(store)), 1, "in the store already")
    assert_one_line_error(cli("restore", "nope.md", "--store", str(store)), 2, "nope.md", "dream removed")


def test_status_has_a_survival_line_split_by_why(cli, tmp_path):
    store = _forgotten(cli, tmp_path)
    survival = cli("status", "--store", str(store), "--json").json["survival"]
    assert survival["removed by request"] == 2  # the Slack memory's body line and its index line
    assert survival["kept"] == survival["lines"] - 2 and survival["other"] == 0
    human = cli("status", "--store", str(store)).stdout
    assert f"survival         {survival['share']:.0%} of the {survival['lines']} lines of version 1 still here" \
        in human and "2 removed by request" in human
