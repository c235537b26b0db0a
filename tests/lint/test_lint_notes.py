"""Dated notes on lint's findings (`lint_notes = true`): added once, through the proposal, never to a pinned memory,
never taken by auto_accept.

Driven through the command line on the real git project of tests/helpers/git_project.py.
"""

from __future__ import annotations

import shutil
from datetime import date

import pytest

from dream.lint.notes import MARK
from helpers.git_project import MEMORIES, STALE, configure, dream_once

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.fixture
def store(store):
    configure(store, "lint_notes = true")
    return store


def notes(data: bytes | str) -> list[str]:
    text = data if isinstance(data, str) else data.decode()
    return [line for line in text.splitlines() if line.startswith(MARK)]


def noted(report: dict) -> list[dict]:
    return [c for c in report.get("changes") or [] if c["action"] == "noted"]


def test_each_failed_claim_gets_one_dated_note_and_every_line_is_kept(cli, store, project):
    _, commits = project
    outcome, report, tree = dream_once(cli, store)
    today = date.today().isoformat()
    assert outcome["status"] == "proposed"
    for rel, text in MEMORIES.items():
        if rel == "MEMORY.md":
            continue  # the index's slug titles are retitled: housekeeping of its own
        wanted = sorted(claim for memory, claim in STALE if memory == rel)
        got = notes(tree[rel])
        assert len(got) == len(wanted), (rel, got)
        for claim, note in zip(wanted, sorted(got, key=lambda n: n.split("`")[1])):
            assert note.startswith(f"{MARK}`{claim}`") and f"not found in the project as of {today}" in note
        # the memory's own lines stay as they were, in order: the notes come after them
        assert tree[rel].decode().splitlines()[:len(text.splitlines())] == text.splitlines()
    auth = notes(tree["project_auth.md"])[0]
    assert f"renamed to `src/auth/tokens.py` in {commits['renamed']}" in auth
    assert {c["kind"] for c in noted(report)} == {"housekeeping"} and len(noted(report)) == len(STALE)
    assert (store / "project_auth.md").read_text() == MEMORIES["project_auth.md"]  # the store waits for a person


def test_a_dependency_at_another_major_says_which_major(cli, store):
    _, _, tree = dream_once(cli, store)
    react = [n for n in notes(tree["project_deps.md"]) if "`react`" in n]
    assert react and react[0].startswith(f"{MARK}`react` 18 not found")


def test_a_claim_is_noted_once_not_again_every_night(cli, store):
    dream_once(cli, store)
    assert cli("accept", "--store", str(store)).code == 0
    after_first = {rel: (store / rel).read_bytes() for rel in MEMORIES}
    outcome, report, _ = dream_once(cli, store, "s2", "> the tests pass again\n")
    assert not noted(report)
    assert outcome["status"] == "noop"
    assert {rel: (store / rel).read_bytes() for rel in MEMORIES} == after_first


def test_lint_reads_no_claim_from_a_note(cli, store):
    dream_once(cli, store)
    assert cli("accept", "--store", str(store)).code == 0
    res = cli("lint", "--store", str(store), "--json")
    found = [(f["memory"], f["claim"]) for f in res.json["findings"]]
    assert sorted(found) == sorted(STALE)  # each once, from the memory's own line
    lines = {(f["memory"], f["line"]) for f in res.json["findings"]}
    assert all(not (store / rel).read_text().splitlines()[line - 1].startswith(MARK) for rel, line in lines)


def test_off_by_default(cli, store):
    config = store / ".dream" / "config.toml"
    config.write_text(config.read_text().replace("lint_notes = true\n", ""))
    _, report, tree = dream_once(cli, store)
    assert not noted(report) and not any(notes(data) for data in tree.values())


def test_a_pinned_memory_gets_no_note(cli, store):
    configure(store, 'pinned = ["project_legacy.md"]')
    outcome, report, tree = dream_once(cli, store)
    assert tree["project_legacy.md"] == (store / "project_legacy.md").read_bytes()
    assert "project_legacy.md" not in {c["path"] for c in noted(report)}
    assert not any("pinned: no engine may change" in c["reason"] for c in report.get("finish") or [])
    assert any("src/legacy/old.py" in line for line in outcome["needs_person"])  # still listed for a person


def test_auto_accept_leaves_the_notes_for_a_person(cli, store):
    configure(store, "auto_accept = true")
    outcome, _, _ = dream_once(cli, store)
    assert {rel: (store / rel).read_text() for rel in MEMORIES} == MEMORIES
    assert outcome.get("accepted_version") is None
    pending = cli("proposals", "--store", str(store), "--json")
    assert pending.code == 0
    assert any(p["status"] == "pending" for p in pending.json["proposals"]), pending.stdout
