"""Retention: every line a proposal removes is accounted for as kept, merged or dropped.

Run on the demo store and on every store of the corpus with the offline
engine; the offline engine may drop only what a user asked to forget.
"""

from __future__ import annotations

import shutil

import pytest

from dream import pipeline
from dream.layout import Layout
from dream.proposals import Proposals
from dream.retention import DROPPED, KEPT, MERGED, account, memory_lines, summarize
from dream.store import parse_index_line, resolve_link
from dream.tree import INDEX_NAME
from dream.versions import Versions

from tests.conftest import DEMO, corpus_stores

STORES = [DEMO, *corpus_stores()]


def dream_once(src, tmp_path):
    store = tmp_path / src.name
    shutil.copytree(src, store, ignore=shutil.ignore_patterns(".dream"))
    outcome = pipeline.run(store, engine="offline", force=True)
    layout = Layout.open(store)
    if outcome.proposal_id is None:
        return None
    proposals = Proposals(layout)
    proposal = proposals.get(outcome.proposal_id)
    return (Versions(layout).tree(proposal.base_version), proposals.tree(proposal), proposals.report(proposal))


def removed_lines(base, new):
    """(path, line number) of every memory line of `base` that is not in the same file of `new`."""
    gone = set()
    for path, data in base.items():
        if new.get(path) == data:
            continue
        still = {norm for _, _, norm in memory_lines(new.get(path))}
        gone |= {(path, n) for n, _, norm in memory_lines(data) if norm not in still}
    return gone


def forgotten_paths(report) -> set[str]:
    return {c["path"] for c in report["changes"] if c["action"] == "forgotten"}


def forgotten_details(report) -> list[str]:
    return [c["detail"] for c in report["changes"] if c["action"] == "forgotten"]


def asked_to_forget(item, report) -> bool:
    """A dropped line is explained by a forget request: its file, or its index pointer, was forgotten."""
    paths = forgotten_paths(report) - {INDEX_NAME}
    if item.path in paths:
        return True
    if item.path == INDEX_NAME:
        targets = {resolve_link(INDEX_NAME, t) for t in parse_index_line(item.text).links}
        if targets & paths:
            return True
        return any(item.text.strip() in d for d in forgotten_details(report))
    return False


@pytest.mark.parametrize("src", STORES, ids=lambda p: p.name)
def test_every_removed_line_is_accounted_for(src, tmp_path):
    dreamed = dream_once(src, tmp_path)
    if dreamed is None:
        pytest.skip("the offline engine proposes nothing for this store")
    base, new, report = dreamed
    items = account(base, new)
    assert {(i.path, i.line) for i in items} == removed_lines(base, new)
    for item in items:
        assert item.status in (KEPT, MERGED, DROPPED)
        if item.status == MERGED:
            assert item.to != item.path and item.to in new and 0 < item.score <= 100
        if item.status == KEPT:
            assert item.to == item.path and item.path in new
    # Dropped items come first, and the proposal's own report carries the same account.
    statuses = [i.status for i in items]
    assert statuses == sorted(statuses, key=[DROPPED, MERGED, KEPT].index)
    assert report["retention"] == summarize(base, new)


@pytest.mark.parametrize("src", STORES, ids=lambda p: p.name)
def test_offline_engine_drops_only_what_was_asked_to_be_forgotten(src, tmp_path):
    dreamed = dream_once(src, tmp_path)
    if dreamed is None:
        pytest.skip("the offline engine proposes nothing for this store")
    base, new, report = dreamed
    unexplained = [i for i in account(base, new) if i.status == DROPPED and not asked_to_forget(i, report)]
    assert unexplained == []


def test_demo_forget_request_is_reported_as_dropped_first(tmp_path):
    base, new, report = dream_once(DEMO, tmp_path)
    retention = report["retention"]
    dropped = [i for i in retention["items"] if i["status"] == DROPPED]
    assert retention["dropped"] == len(dropped) > 0
    assert {i["path"] for i in dropped} == {"reference_jenkins.md", INDEX_NAME}
    assert retention["items"][: len(dropped)] == dropped
    # A merged duplicate's lines are found in its survivor, with a score.
    merged = [i for i in retention["items"] if i["path"] == "webhook_retries.md"]
    assert merged and all(i["status"] == MERGED and i["to"] == "project_webhook_retries.md" for i in merged)


def test_kept_merged_and_dropped_on_a_small_tree():
    base = {
        "a.md": b"- the deploy runs on fridays\n- yesterday we moved to postgres 16\n",
        "b.md": b"- cache ttl is ten minutes\n- nobody remembers this line\n",
    }
    new = {
        "a.md": b"- the deploy runs on fridays\n- 2026-11-18 we moved to postgres 16\n",
        "c.md": b"- cache ttl is ten minutes\n",
    }
    by_line = {(i.path, i.line): i for i in account(base, new)}
    assert by_line[("a.md", 2)].status == KEPT
    assert by_line[("b.md", 1)].status == MERGED and by_line[("b.md", 1)].to == "c.md"
    assert by_line[("b.md", 1)].score == 100.0
    assert by_line[("b.md", 2)].status == DROPPED
    assert list(by_line)[0] == ("b.md", 2), "dropped first"


def test_frontmatter_keys_other_than_description_are_not_memories():
    data = b"---\nname: x\ndescription: what x is\ntype: project\n---\n\nbody line\n"
    assert [t for _, t, _ in memory_lines(data)] == ["description: what x is", "body line"]


def test_cli_diff_prints_dropped_first_with_a_count(demo_store, cli):
    cli("run", "--store", str(demo_store), "--json")
    text = cli("diff", "--store", str(demo_store)).stdout
    assert "## Dropped (5)" in text
    assert text.index("## Dropped") < text.index("## Changes") < text.index("--- a/")
    as_json = cli("diff", "--store", str(demo_store), "--json").json
    assert as_json["dropped"] == 5 and as_json["retention"]["items"][0]["status"] == "dropped"
