"""`verified_at: <commit>`: proposed where every claim of a memory held, and only when it says something new.

Driven through the command line on the real git project of
tests/helpers/git_project.py (its third commit is HEAD): `project_facts.md`
is the one memory whose every claim holds there.
"""

from __future__ import annotations

import shutil

import pytest

from dream.lint import verified
from dream.store.model import TextFile, parse_frontmatter
from helpers.git_project import commit, configure, dream_once, write

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

FACTS = "project_facts.md"


@pytest.fixture
def store(store):
    configure(store, "lint_verified_at = true")
    return store


def recorded(data: bytes | str) -> object:
    text = data if isinstance(data, str) else data.decode()
    fm = parse_frontmatter(TextFile.decode(text.encode()).lines)
    return fm.data.get("verified_at") if fm else None


def verified_changes(report: dict) -> list[dict]:
    return [c for c in report.get("changes") or [] if c["action"] == "verified"]


def accept(cli, store) -> None:
    res = cli("accept", "--store", str(store))
    assert res.code == 0, res.stderr


def test_a_memory_whose_claims_all_hold_is_proposed_with_the_head_commit(cli, store, project):
    _, commits = project
    before = {p.name: p.read_bytes() for p in store.glob("*.md")}
    outcome, report, tree = dream_once(cli, store)
    assert outcome["status"] == "proposed"
    assert recorded(tree[FACTS]) == commits["removed"]
    changes = verified_changes(report)
    assert [(c["path"], c["kind"]) for c in changes] == [(FACTS, "housekeeping")]
    assert f"every claim in it held at {commits['removed']}" in changes[0]["reason"]
    # the body is kept byte for byte: one frontmatter line added before the closing fence
    old, new = before[FACTS].decode().splitlines(), tree[FACTS].decode().splitlines()
    assert [line for line in new if not line.startswith("verified_at:")] == old
    # memories with a stale claim get nothing; and the store itself waits for the accept
    assert all(recorded(tree[rel]) is None for rel in tree if rel != FACTS)
    assert {p.name: p.read_bytes() for p in store.glob("*.md")} == before


def test_off_by_default(cli, store):
    (store / ".dream" / "config.toml").write_text(
        (store / ".dream" / "config.toml").read_text().replace("lint_verified_at = true\n", ""))
    _, report, tree = dream_once(cli, store)
    assert not verified_changes(report) and all(recorded(data) is None for data in tree.values())


def test_head_moving_on_is_no_reason_to_write_it_again(cli, store, project):
    root, commits = project
    dream_once(cli, store)
    accept(cli, store)
    write(root, {"docs/release.md": "# 1.1\n", "src/app.py": "import os\nDB = os.environ['DATABASE_URL']\nX = 1\n"})
    commit(root, "release notes")
    outcome, report, _ = dream_once(cli, store, "s2", "> the tests pass again\n")
    assert not verified_changes(report), report.get("changes")
    assert outcome["status"] == "noop"
    assert recorded((store / FACTS).read_bytes()) == commits["removed"]


def test_a_memory_that_now_cites_something_newer_records_the_new_commit(cli, store, project):
    root, commits = project
    dream_once(cli, store)
    accept(cli, store)
    write(root, {"src/worker.py": "def run_jobs():\n    pass\n"})
    newer = commit(root, "add the worker")
    # an agent adds a line to the memory and keeps its frontmatter: at the recorded commit that file was not there
    with open(store / FACTS, "a") as memory:
        memory.write("- Background jobs run in `src/worker.py`.\n")
    _, report, tree = dream_once(cli, store, "s2", "> the tests pass again\n")
    assert recorded(tree[FACTS]) == newer
    assert f"not all did at the recorded {commits['removed']}" in verified_changes(report)[0]["reason"]
    assert sum(line.startswith("verified_at:") for line in tree[FACTS].decode().splitlines()) == 1


def test_uncommitted_edits_to_the_project_stamp_nothing(cli, store, project):
    root, _ = project
    (root / "src" / "app.py").write_text("print('edited, not committed')\n")
    _, report, _ = dream_once(cli, store)
    assert not verified_changes(report)


def test_a_pinned_memory_is_never_stamped(cli, store):
    with open(store / ".dream" / "config.toml", "a") as config:
        config.write(f'pinned = ["{FACTS}"]\n')
    _, report, tree = dream_once(cli, store)
    assert not verified_changes(report)
    assert tree.get(FACTS, (store / FACTS).read_bytes()) == (store / FACTS).read_bytes()


def test_lint_still_finds_a_file_deleted_after_the_recorded_commit(cli, store, project):
    root, commits = project
    dream_once(cli, store)
    accept(cli, store)
    assert recorded((store / FACTS).read_bytes()) == commits["removed"]
    (root / "docs" / "setup.md").unlink()
    gone = commit(root, "drop the setup notes")
    res = cli("lint", "--store", str(store), "--json")
    assert res.code == 1
    found = [f for f in res.json["findings"] if f["memory"] == FACTS]
    assert {(f["claim"], f["commit"]) for f in found} == {("docs/setup.md", gone), ("docs", gone)}
    assert FACTS not in res.json["verified"]


def test_a_commit_yaml_would_read_as_a_number_is_quoted():
    assert verified._scalar("1234567") == '"1234567"' and verified._scalar("12e4567") == '"12e4567"'
    assert verified._scalar("3a068cd") == "3a068cd"
