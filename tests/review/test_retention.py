"""Retention: every line a proposal removes is accounted for as kept, merged or dropped.

Run on the demo store and on every store of the corpus with the offline
engine; the offline engine may drop only what a user asked to forget.
"""

from __future__ import annotations

import difflib
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from rapidfuzz import fuzz

from dream.outcomes import NoopReason, RunOutcome, Status
from dream.pipeline import run as pipeline
from dream.review.retention import (
    ARCHIVED,
    DROPPED,
    KEPT,
    MATCH_THRESHOLD,
    MERGED,
    REWRITTEN,
    account,
    memory_lines,
)
from dream.store.layout import Layout
from dream.store.model import parse_index_line, resolve_link
from dream.store.tree import INDEX_NAME, read_tree
from dream.versions.manifests import Versions
from dream.versions.proposals import Proposals
from helpers.stores import DEMO, corpus_stores

STORES = [DEMO, *corpus_stores()]


@dataclass
class Dreamed:
    outcome: RunOutcome
    store: Path
    base: dict[str, bytes]  # the base version (the store's current one on a noop)
    new: dict[str, bytes]  # the proposed tree (the base itself on a noop)
    report: dict | None


def dream_once(src, tmp_path) -> Dreamed:
    store = tmp_path / src.name
    shutil.copytree(src, store, ignore=shutil.ignore_patterns(".dream"))
    outcome = pipeline.run(store, engine="offline", force=True)
    layout = Layout.open(store)
    versions = Versions(layout)
    if outcome.proposal_id is None:
        base = versions.tree(versions.current())
        return Dreamed(outcome, store, base, base, None)
    proposals = Proposals(layout)
    proposal = proposals.get(outcome.proposal_id)
    return Dreamed(
        outcome, store, versions.tree(proposal.base_version), proposals.tree(proposal), proposals.report(proposal)
    )


def assert_noop_loses_nothing(dreamed: Dreamed, src: Path) -> None:
    """No proposal: the run says so, nothing is pending, the store is as copied, nothing to account for."""
    assert dreamed.outcome.status == Status.NOOP
    assert dreamed.outcome.reason == NoopReason.NO_CHANGES
    assert dreamed.outcome.changes == 0
    assert Proposals(Layout.open(dreamed.store)).ids() == []
    assert read_tree(dreamed.store) == read_tree(src) == dreamed.base
    assert account(dreamed.base, dreamed.new) == []


def dream_with_proposal(src: Path, tmp_path: Path) -> Dreamed | None:
    """Dream once on a copy of `src`; None (after checking the noop lost nothing) if there was no proposal."""
    dreamed = dream_once(src, tmp_path)
    if dreamed.report is None:
        assert_noop_loses_nothing(dreamed, src)
        return None
    return dreamed


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


def _words(text: str) -> str:
    """Content for a loose comparison: link targets, markup and case dropped, and a link title
    that only repeats its file name ("[user_role.md](user_role.md)"), which a retitle replaces."""
    def title(link: re.Match[str]) -> str:
        name = link.group(2).rsplit("/", 1)[-1]
        return "" if link.group(1).strip() in (name, name.rsplit(".", 1)[0]) else link.group(1)

    text = re.sub(r"\[([^\]\n]*)\]\(([^)\s]*)\)", title, text)
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def _content_lines(data: bytes | None) -> dict[int, str]:
    """Line number -> text of the lines that can carry a memory (not blank, not frontmatter
    other than its description), by an independent reading of the file."""
    lines = (data or b"").decode("utf-8", "replace").lstrip("\ufeff").splitlines()
    fence_end = 0
    if lines and lines[0].strip() == "---":
        fence_end = next((i + 1 for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), 0)
    found = {}
    for number, text in enumerate(lines, 1):
        if number <= fence_end and not text.lstrip().startswith("description:"):
            continue
        if _words(text):
            found[number] = text
    return found


def diff_removed(base: dict, new: dict) -> tuple[set, set]:
    """(lines whose content is gone from their file, lines difflib marks as removed or replaced).

    Every line of the first set must be accounted for; every accounted line must be in the second.
    """
    gone, touched = set(), set()
    for path, data in base.items():
        if new.get(path) == data:
            continue
        old_lines = (data or b"").decode("utf-8", "replace").lstrip("\ufeff").splitlines()
        new_lines = (new.get(path) or b"").decode("utf-8", "replace").lstrip("\ufeff").splitlines()
        still = {_words(t) for t in _content_lines(new.get(path)).values()}
        content = _content_lines(data)
        matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
        for op, i1, i2, _, _ in matcher.get_opcodes():
            if op in ("delete", "replace"):
                for number in range(i1 + 1, i2 + 1):
                    if number in content:
                        touched.add((path, number))
                        if _words(content[number]) not in still:
                            gone.add((path, number))
    return gone, touched


def best_match(text: str, data: bytes) -> float:
    """How well `text` is found in a file: the best line, or the file's words as a whole."""
    words = _words(text)
    lines = [_words(t) for t in _content_lines(data).values()]
    whole = " " + " ".join(lines) + " "
    if f" {words} " in whole:
        return 100.0
    return max((max(fuzz.ratio(words, line), fuzz.token_set_ratio(words, line)) for line in lines), default=0.0)


@pytest.mark.parametrize("src", STORES, ids=lambda p: p.name)
def test_every_removed_line_is_accounted_for(src, tmp_path):
    dreamed = dream_with_proposal(src, tmp_path)
    if dreamed is None:
        return
    base, new, report = dreamed.base, dreamed.new, dreamed.report
    items = report["retention"]["items"]
    accounted = {(i["path"], i["line"]) for i in items}
    assert len(accounted) == len(items), "one entry per line"
    gone, touched = diff_removed(base, new)
    assert gone <= accounted, sorted(gone - accounted)[:5]
    assert accounted <= touched, sorted(accounted - touched)[:5]
    for item in items:
        base_line = base[item["path"]].decode("utf-8", "replace").lstrip("\ufeff").splitlines()[item["line"] - 1]
        assert item["text"] == base_line.strip()
        assert item["status"] in (KEPT, REWRITTEN, MERGED, ARCHIVED, DROPPED)
        if item["status"] == DROPPED:
            assert item["to"] is None
        else:
            target = item["path"] if item["status"] in (KEPT, REWRITTEN) else item["to"]
            assert item["to"] == target and target in new
            assert 0 < item["score"] <= 100
            assert best_match(item["text"], new[target]) >= item["score"] - 1, item
        if item["status"] in (MERGED, ARCHIVED):
            assert item["to"] != item["path"]
        if item["status"] == ARCHIVED:
            assert item["path"] == INDEX_NAME and "archive" in item["to"]
        if item["status"] == REWRITTEN:  # the exact words the file now holds, and what changed
            assert item["now"] in [t.strip() for t in new[item["path"]].decode("utf-8", "replace").splitlines()]
            assert item["now"] != item["text"] and item["edits"]
        if item["status"] == KEPT:  # unchanged: its words are all still in its file
            assert item["now"] is None and best_match(item["text"], new[item["path"]]) == 100.0
    counts = {s: sum(1 for i in items if i["status"] == s) for s in (DROPPED, MERGED, ARCHIVED, REWRITTEN, KEPT)}
    assert {k: report["retention"][k] for k in counts} == counts
    # Dropped items come first.
    statuses = [i["status"] for i in items]
    assert statuses == sorted(statuses, key=[DROPPED, ARCHIVED, MERGED, REWRITTEN, KEPT].index)


@pytest.mark.parametrize("src", STORES, ids=lambda p: p.name)
def test_offline_engine_drops_only_what_was_asked_to_be_forgotten(src, tmp_path):
    dreamed = dream_with_proposal(src, tmp_path)
    if dreamed is None:
        return
    base, new, report = dreamed.base, dreamed.new, dreamed.report
    unexplained = [i for i in account(base, new) if i.status == DROPPED and not asked_to_forget(i, report)]
    assert unexplained == []


def test_demo_forget_request_is_reported_as_dropped_first(tmp_path):
    dreamed = dream_once(DEMO, tmp_path)
    base, new, report = dreamed.base, dreamed.new, dreamed.report
    retention = report["retention"]
    dropped = [i for i in retention["items"] if i["status"] == DROPPED]
    assert retention["dropped"] == len(dropped) > 0
    # Exactly the forgotten memory: every content line of its file, and its index line.
    forgotten = "reference_jenkins.md"
    assert forgotten not in new and forgotten_paths(report) == {forgotten}
    index_lines = base[INDEX_NAME].decode().splitlines()
    pointer = [n for n, t in enumerate(index_lines, 1) if f"]({forgotten})" in t]
    expected = {(forgotten, n) for n in _content_lines(base[forgotten])} | {(INDEX_NAME, n) for n in pointer}
    assert len(pointer) == 1 and len(expected) == 5
    assert {(i["path"], i["line"]) for i in dropped} == expected
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
    assert by_line[("a.md", 2)].status == REWRITTEN  # changed in place: rewritten, not "kept"
    assert by_line[("a.md", 2)].now == "- 2026-11-18 we moved to postgres 16"
    assert by_line[("a.md", 2)].edits == [("yesterday", "2026-11-18")]
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


def test_a_20k_line_index_half_moved_is_all_archived():
    """Accounting is near-linear: 10k moved lines (a quarter of them reworded) are each found in
    their new file without scanning the whole tree per line (this took ~25 s when it did)."""
    lines = [f"- [Service {i} notes](svc_{i}.md) — deploys of svc{i} use port {10000 + i}" for i in range(20_000)]
    moved = {i: line.replace("use port", "uses port") if i % 8 == 1 else line
             for i, line in enumerate(lines) if i % 2}
    base = {INDEX_NAME: "\n".join(lines).encode()}
    new = {INDEX_NAME: "\n".join(l for i, l in enumerate(lines) if i not in moved).encode(),
           "archive.md": "\n".join(moved.values()).encode()}
    items = account(base, new)
    assert {(i.path, i.line) for i in items} == {(INDEX_NAME, i + 1) for i in moved}
    assert all(i.status == ARCHIVED and i.to == "archive.md" for i in items)  # counted apart from merged (#12)
    reworded = [i for i in items if (i.line - 1) % 8 == 1]
    assert len(reworded) == 2500 and all(MATCH_THRESHOLD <= i.score < 100 for i in reworded)


def test_words_found_across_lines_and_the_home_file_preferred():
    base = {"a.md": b"- the deploy runs on fridays\n- keep\n", "b.md": b"- the deploy runs\n- on fridays\n"}
    new = {"a.md": b"- keep\n- the deploy runs\n- on fridays\n", "b.md": b"- the deploy runs on fridays\n"}
    by_line = {(i.path, i.line): i for i in account(base, new)}
    assert by_line[("a.md", 1)].status == KEPT and by_line[("a.md", 1)].score == 100.0  # across two lines
    assert by_line[("b.md", 1)].status == KEPT and by_line[("b.md", 2)].status == KEPT  # parts of one line


def test_a_merged_duplicates_index_line_is_merged_when_its_hook_is_carried_not_dropped():
    index = (b"- [Local checks](feedback_run_tests.md) - CI takes 25 minutes, so check first\n"
             b"- [Test before push](feedback_test_before_push.md) - always `make test` before you push\n")
    base = {INDEX_NAME: index, "feedback_run_tests.md": b"Run `make test` before pushing.\n",
            "feedback_test_before_push.md": b"Always run `make test` before you push.\n"}
    new = {INDEX_NAME: index.splitlines(keepends=True)[0],
           "feedback_run_tests.md": b"Run `make test` before pushing.\n\nalways `make test` before you push\n"}
    by_line = {(i.path, i.line): i for i in account(base, new)}
    assert (by_line[(INDEX_NAME, 2)].status, by_line[(INDEX_NAME, 2)].to) == (MERGED, "feedback_run_tests.md")
    gone = dict(new, **{"feedback_run_tests.md": b"Run `make test` before pushing.\n"})
    assert {(i.path, i.line): i.status for i in account(base, gone)}[(INDEX_NAME, 2)] == DROPPED  # the title alone is no proof
