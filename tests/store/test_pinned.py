"""Pinned memories: no engine may change or remove them; the finish puts them back if one did.

Both engines through `dream run`: the offline engine with a request to
forget the pinned memory, the Claude engine against the fake Messages API
with a scripted model that edits one pinned file and deletes another.
"""

from __future__ import annotations

from pathlib import Path

from dream.store.layout import Layout
from dream.versions.proposals import Proposals
from helpers.claude_store import DEPLOY, INDEX, PYTEST_NOTES, TEAM, TESTING, four_phase_script
from helpers.fake_anthropic import FakeAnthropic, fake_api  # noqa: F401
from helpers.git_project import write

SLACK = ("---\nname: Slack alerts integration\ndescription: deploy notices posted to #ops via webhook\n"
         "type: project\n{pin}---\nDeploy notices are posted to #ops through the incoming webhook.\n")
DATABASE = "---\nname: Database\ndescription: Postgres 15\ntype: project\n---\nProduction runs Postgres 15.\n"
FORGET = "> forget the slack alerts integration, we retired it last week\n< Understood.\n"


def _proposed(cli, store: Path, engine: str, env: dict | None = None) -> tuple[dict, dict]:
    res = cli("run", "--store", str(store), "--engine", engine, "--force", "--json", env=env)
    assert res.code == 0 and res.json["status"] == "proposed", (res.stdout, res.stderr)
    proposals = Proposals(Layout.open(store))
    proposal = proposals.get(res.json["proposal_id"])
    return proposals.report(proposal), {k: v.decode() for k, v in proposals.tree(proposal).items()}


def _slack_store(root: Path, pin: str) -> Path:
    write(root, {
        "MEMORY.md": "- [Slack alerts integration](project_slack_alerts.md) — deploy notices via webhook\n"
                     "- [Database](project_database.md) — Postgres 15\n",
        "project_slack_alerts.md": SLACK.format(pin=pin), "project_database.md": DATABASE,
        "logs/2026/11/20/s1-slack.md": FORGET,
    })
    return root


def test_the_offline_engine_forgets_an_unpinned_memory(cli, tmp_path):
    _, tree = _proposed(cli, _slack_store(tmp_path / "store", pin=""), "offline")
    assert "project_slack_alerts.md" not in tree  # the request is honoured when nothing protects the memory


def test_a_pinned_memory_survives_a_request_to_forget_it(cli, tmp_path):
    store = _slack_store(tmp_path / "store", pin="pinned: true\n")
    before = (store / "project_slack_alerts.md").read_text()
    report, tree = _proposed(cli, store, "offline")
    assert tree["project_slack_alerts.md"] == before
    assert "(project_slack_alerts.md)" in tree["MEMORY.md"]
    assert not any(c["path"] == "project_slack_alerts.md" for c in report["changes"])
    assert any(c["action"] == "restored" and c["path"] == "project_slack_alerts.md" for c in report["finish"])
    assert (store / "project_slack_alerts.md").read_text() == before


def test_pinned_files_are_untouched_by_a_model_that_edits_them(cli, tmp_path, fake_api: FakeAnthropic):
    store = tmp_path / "store"
    write(store, {
        "MEMORY.md": INDEX, "testing.md": TESTING, "deploy.md": DEPLOY, "team/style.md": TEAM,
        "pytest-notes.md": PYTEST_NOTES.replace("type: project\n", "type: project\npinned: true\n"),
        "logs/2025/03/02/s1-tests.md": "> how do we run tests?\n< pytest -q, and -n auto for speed\n",
        ".dream/config.toml": 'pinned = ["testing.md"]\n',
    })
    before = {rel: (store / rel).read_text() for rel in ("testing.md", "pytest-notes.md", "MEMORY.md")}
    fake_api.play(*four_phase_script())  # edits testing.md, deletes pytest-notes.md, rewrites the index
    report, tree = _proposed(cli, store, "claude")
    assert len(fake_api.requests) >= 5  # the scripted model really ran its edits
    assert tree["testing.md"] == before["testing.md"]  # pinned in the config
    assert tree["pytest-notes.md"] == before["pytest-notes.md"]  # pinned in its frontmatter
    assert "(pytest-notes.md)" in tree["MEMORY.md"] and "(testing.md)" in tree["MEMORY.md"]
    restored = {c["path"] for c in report["finish"] if c["action"] == "restored"}
    assert {"testing.md", "pytest-notes.md"} <= restored


def test_every_spelling_of_a_pin_is_found_without_loading_files_that_cannot_hold_one():
    from dream.store import pinned

    head = "---\nname: Deploy\ndescription: how we deploy\n{pin}---\nWe deploy on Fridays.\n"
    spellings = {"pinned: true\n": True, "pinned: yes\n": True, "metadata:\n  pinned: true\n": True,
                 '"pinned": true\n': True, '"\\x70inned": true\n': True, '"\\u0070inned": "on"\n': True,
                 "pinned: false\n": False, "": False, "# pinned: true\n": False, "pin: true\n": False}
    tree = {f"m{n}.md": head.format(pin=pin).encode() for n, pin in enumerate(spellings)}
    assert pinned.pinned_paths(tree) == {f"m{n}.md" for n, pin in enumerate(spellings) if spellings[pin]}
