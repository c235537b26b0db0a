"""Whole runs through the pipeline: dates resolve against the session's day, and the deterministic finish.

The finish runs the offline engine's Prune on what the model left, so a paid
run is not thrown away for one index line, and it drops files the model
made but never accounted for (scratch and progress notes).
"""

from __future__ import annotations

import json
import re
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from helpers.fake_anthropic import FakeAnthropic, Reply, fake_api, memory, text, tool_use  # noqa: F401

from dream.outcomes import Status
from dream.pipeline.run import run
from dream.store.layout import Layout
from dream.store.validate import MAX_INDEX_LINES
from dream.versions.proposals import Proposals

DEPLOY = "---\nname: deploy\ndescription: how releases go out\ntype: project\n---\nTag, then push; CI publishes.\n"


def make_store(root: Path, index: str, topics: dict[str, str], day: date, log: str) -> Path:
    root.mkdir(parents=True)
    (root / "MEMORY.md").write_text(index)
    for name, body in topics.items():
        (root / name).write_text(body)
    folder = root / "logs" / f"{day:%Y}" / f"{day:%m}" / f"{day:%d}"
    folder.mkdir(parents=True)
    (folder / "s1-deploys.md").write_text(log)
    return root


def proposal_tree(store: Path, proposal_id: str) -> dict[str, str]:
    proposals = Proposals(Layout.open(store))
    tree = proposals.tree(proposals.get(proposal_id))
    return {path: data.decode() for path, data in tree.items()}


def report(store: Path, proposal_id: str) -> dict[str, Any]:
    proposals = Proposals(Layout.open(store))
    return proposals.report(proposals.get(proposal_id))


def at(day: date) -> float:
    return datetime(day.year, day.month, day.day, 9).timestamp()


def resolve_yesterday(body: dict[str, Any]) -> Reply:
    """A scripted model that knows only what it was shown: the session line and the date printed on it."""
    shown = json.dumps(body["messages"])
    line = re.search(r"#\d+ (\d{4}-\d{2}-\d{2}) \[user\] [^\"]*yesterday", shown)
    assert line, "the session line with 'yesterday' carries no date"
    day = date.fromisoformat(line.group(1)) - timedelta(days=1)
    new = DEPLOY.replace("CI publishes.\n", f"CI publishes.\nDeploys moved to Thursdays on {day}.\n")
    return Reply([memory("create", path="/memories/deploy-days.md", file_text=new.replace("name: deploy",
                                                                                        "name: deploy-days")),
                  memory("str_replace", path="/memories/MEMORY.md", old_str="how releases go out\n",
                         new_str="how releases go out\n- [Deploy days](deploy-days.md) — deploys on Thursdays\n")])


def test_yesterday_in_a_session_of_2026_11_10_becomes_2026_11_09(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    index = "- [Deploy](deploy.md) — how releases go out\n"
    store = make_store(tmp_path / "store", index, {"deploy.md": DEPLOY}, date(2026, 11, 10),
                       "> yesterday we moved deploys to Thursdays, remember that\n< Noted.\n")
    fake_api.play(
        Reply([tool_use("read_session", session_id="s1")]),
        resolve_yesterday,
        Reply([text("- created deploy-days.md: deploys moved to Thursdays (session s1)")]),
    )
    outcome = run(store, engine="claude", force=True, now=at(date(2026, 11, 12)))  # tonight is two days later
    assert outcome.status == Status.PROPOSED, outcome.error
    assert "Deploys moved to Thursdays on 2026-11-09." in proposal_tree(store, outcome.proposal_id)["deploy-days.md"]


def test_an_index_over_budget_gets_a_valid_proposal_from_a_model_that_never_touches_it(
    tmp_path: Path, fake_api: FakeAnthropic
) -> None:
    count = MAX_INDEX_LINES + 30
    topics = {f"topic-{i:03d}.md": f"---\nname: topic {i}\ndescription: fact {i}\ntype: project\n---\nFact {i}.\n"
              for i in range(count)}
    index = "".join(f"- [Topic {i}](topic-{i:03d}.md) — fact number {i}\n" for i in range(count))
    store = make_store(tmp_path / "store", index, {"deploy.md": DEPLOY, **topics}, date(2026, 11, 10),
                       "> deploys now go out on Thursdays\n< Noted.\n")
    index = index + "- [Deploy](deploy.md) — how releases go out\n"
    (store / "MEMORY.md").write_text(index)
    fake_api.play(
        Reply([memory("str_replace", path="/memories/deploy.md", old_str="CI publishes.\n",
                      new_str="CI publishes. Deploys go out on Thursdays.\n")]),
        Reply([text("- updated deploy.md: deploys go out on Thursdays (session s1)")]),
    )
    outcome = run(store, engine="claude", force=True, now=at(date(2026, 11, 12)))
    assert outcome.status == Status.PROPOSED, outcome.error
    tree = proposal_tree(store, outcome.proposal_id)
    assert len(tree["MEMORY.md"].splitlines()) <= MAX_INDEX_LINES
    assert "Deploys go out on Thursdays." in tree["deploy.md"]
    got = report(store, outcome.proposal_id)
    assert [(c["action"], c["path"]) for c in got["changes"]] == [("updated", "deploy.md")]  # the model's
    assert ("archived", "MEMORY.md") in {(c["action"], c["path"]) for c in got["finish"]}  # the finish's
    assert all("Topic 0]" not in line for line in tree["MEMORY.md"].splitlines())  # the oldest went to the archive
    assert "(topic-000.md)" in tree["archive.md"]
    assert not [f for f in got["findings"] if f["severity"] == "error"]


def test_a_progress_note_the_summary_does_not_account_for_is_dropped(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    index = "- [Deploy](deploy.md) — how releases go out\n"
    store = make_store(tmp_path / "store", index, {"deploy.md": DEPLOY}, date(2026, 11, 10),
                       "> deploys now go out on Thursdays\n< Noted.\n")
    fake_api.play(
        Reply([memory("create", path="/memories/dream-progress.md", file_text="# Progress\n- read s1\n"),
               memory("str_replace", path="/memories/deploy.md", old_str="CI publishes.\n",
                      new_str="CI publishes. Deploys go out on Thursdays.\n")]),
        Reply([text("- updated deploy.md: deploys go out on Thursdays (session s1)")]),
    )
    outcome = run(store, engine="claude", force=True, now=at(date(2026, 11, 12)))
    assert outcome.status == Status.PROPOSED, outcome.error
    assert "dream-progress.md" not in proposal_tree(store, outcome.proposal_id)
    finish = report(store, outcome.proposal_id)["finish"]
    assert ("dropped", "dream-progress.md") in {(c["action"], c["path"]) for c in finish}
