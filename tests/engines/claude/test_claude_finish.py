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

from dream.pipeline.report import proposal_markdown
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
    outcome = run(store, engine="claude", force=True, now=at(date(2026, 11, 12)),  # tonight is two days later
                  overrides={"first_message_session_chars": 0})  # a digest: the model reads the session
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
    proposals = Proposals(Layout.open(store))
    markdown = proposal_markdown(proposals, proposals.get(outcome.proposal_id))
    assert "## Finish (made by dream after the model, not by it)" in markdown and "**archived** `MEMORY.md`" in markdown


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
    got = report(store, outcome.proposal_id)
    assert ("dropped", "dream-progress.md") in {(c["action"], c["path"]) for c in got["finish"]}
    assert [c["path"] for c in got["changes"]] == ["deploy.md"]  # the note is not reported as the model's


def test_a_run_that_fails_validation_still_records_what_it_spent(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    index = "- [Deploy](deploy.md) — how releases go out\n"
    store = make_store(tmp_path / "store", index, {"deploy.md": DEPLOY}, date(2026, 11, 10),
                       "> deploys now go out on Thursdays\n< Noted.\n")
    bad = DEPLOY.replace("type: project", "type: gossip")
    fake_api.play(
        Reply([memory("create", path="/memories/thursdays.md", file_text=bad.replace("name: deploy", "name: t"))]),
        Reply([text("- created thursdays.md: deploy days (session s1)")]),
        Reply([text("- I could not fix it")]),  # the corrective turn changes nothing
    )
    outcome = run(store, engine="claude", force=True, now=at(date(2026, 11, 12)))
    assert outcome.status == Status.FAILED and outcome.reason == "validation", outcome.error
    assert outcome.usage.turns == 3 and outcome.usage.output_tokens > 0


def test_a_contradiction_the_model_cannot_settle_is_listed_for_a_person(
    tmp_path: Path, fake_api: FakeAnthropic
) -> None:
    index = "- [Deploy](deploy.md) — how releases go out\n"
    store = make_store(tmp_path / "store", index, {"deploy.md": DEPLOY}, date(2026, 11, 10),
                       "> deploys go out on Thursdays\n< Noted.\n")
    fake_api.play(
        Reply([memory("str_replace", path="/memories/deploy.md", old_str="CI publishes.\n",
                      new_str="CI publishes.\n- Deploy day: see Needs a person.\n")]),
        Reply([text("- updated deploy.md: flagged the deploy day\n\nNeeds a person:\n"
                    "- deploy day: s1 says Thursdays, deploy.md says Fridays; neither is clearly later\n")]),
    )
    outcome = run(store, engine="claude", force=True, now=at(date(2026, 11, 12)))
    got = report(store, outcome.proposal_id)
    assert got["needs_person"] == ["deploy day: s1 says Thursdays, deploy.md says Fridays; neither is clearly later"]
    proposals = Proposals(Layout.open(store))
    assert "## Needs a person" in proposal_markdown(proposals, proposals.get(outcome.proposal_id))


def test_the_first_message_shows_what_changed_since_the_last_dream(
    tmp_path: Path, fake_api: FakeAnthropic, cli
) -> None:
    index = "- [Deploy](deploy.md) — how releases go out\n"
    store = make_store(tmp_path / "store", index, {"deploy.md": DEPLOY}, date(2026, 11, 10),
                       "> deploys now go out on Thursdays\n< Noted.\n")
    fake_api.play(
        Reply([memory("str_replace", path="/memories/deploy.md", old_str="CI publishes.\n",
                      new_str="CI publishes. Deploys go out on Thursdays.\n")]),
        Reply([text("- updated deploy.md: deploys go out on Thursdays (session s1)")]),
    )
    first = run(store, engine="claude", force=True, now=at(date(2026, 11, 12)))
    assert cli("accept", first.proposal_id, "--store", str(store)).code == 0
    # a person edits the store between dreams, and a new session comes in
    (store / "deploy.md").write_text((store / "deploy.md").read_text() + "Freeze on release weeks.\n")
    log = store / "logs" / "2026" / "11" / "13" / "s2-freeze.md"
    log.parent.mkdir(parents=True)
    log.write_text("> the freeze starts monday\n< Noted.\n")
    fake_api.play(Reply([text("- nothing to change")]))
    run(store, engine="claude", force=True, now=at(date(2026, 11, 14)))
    opening = fake_api.requests[0]["messages"][0]["content"][0]["text"]
    section = opening.split("## What changed in the memory files since the last dream")[1].split("## Sessions")[0]
    assert "+Freeze on release weeks." in section  # the person's edit
    assert "+Tag, then push; CI publishes. Deploys go out on Thursdays." not in section  # not the dream's own
