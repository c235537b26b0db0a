"""`dream lint` on a real git project with history: every stale claim, and no false one.

The project (tests/helpers/git_project.py) has three commits that add,
rename and delete files, make targets, package scripts, dependencies and
environment variables; the store's memories cite them.
"""

from __future__ import annotations

import json
import shutil

import pytest

from dream.pipeline.report import render_markdown
from helpers.cli import assert_one_line_error
from helpers.git_project import MEMORIES, STALE, dream_once, git, write

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def test_lint_finds_every_stale_claim_and_no_false_one(cli, store, project):
    _, commits = project
    res = cli("lint", "--store", str(store), "--json")
    assert res.code == 1, res.stderr
    report = res.json
    found = {(f["memory"], f["claim"]): f["commit"] for f in report["findings"]}
    assert found == {key: commits[which] for key, which in STALE.items()}
    assert report["unchecked"] == 0
    assert "project_facts.md" in report["verified"]  # every claim in it held


def test_lint_evidence_names_the_commit_that_changed_each(cli, store, project):
    _, commits = project
    res = cli("lint", "--store", str(store))
    assert res.code == 1
    head = commits["removed"]
    assert (f"project_auth.md:6: `src/auth/jwt.py` is not in the tree at {head}; "
            f"it was renamed to `src/auth/tokens.py` in {commits['renamed']}") in res.stdout
    assert f"`src/legacy/old.py` is not in the tree at {head}; it was deleted in {head}" in res.stdout
    assert f"no target `test` in Makefile at {head}; it was changed in {commits['renamed']}" in res.stdout


def test_lint_exits_0_when_every_claim_holds(cli, store):
    for rel in MEMORIES:
        if rel not in ("MEMORY.md", "project_facts.md"):
            (store / rel).unlink()
    (store / "MEMORY.md").write_text("- [facts](project_facts.md) — what still holds\n")
    res = cli("lint", "--store", str(store))
    assert res.code == 0, res.stdout
    assert "0 failed" in res.stdout


def test_lint_never_writes_the_project_or_the_store(cli, store, project):
    root, _ = project
    before = git(root, "status", "--porcelain", "--ignored"), {p: p.read_bytes() for p in store.rglob("*.md")}
    cli("lint", "--store", str(store))
    assert (git(root, "status", "--porcelain", "--ignored"), {p: p.read_bytes() for p in store.rglob("*.md")}) \
        == before


def test_a_store_with_no_known_project_is_one_line_exit_2(cli, demo_store):
    res = cli("lint", "--store", str(demo_store))
    assert_one_line_error(res, 2, str(demo_store), "project = PATH")


def test_the_project_comes_from_the_claude_code_transcripts_cwd(cli, home, project):
    root, commits = project
    folder = home / ".claude" / "projects" / "-work-shop"
    write(folder / "memory", MEMORIES)
    record = {"type": "user", "cwd": str(root), "sessionId": "s1", "message": {"role": "user", "content": "hi"}}
    (folder / "s1.jsonl").write_text(json.dumps(record) + "\n")
    res = cli("lint", "--store", str(folder / "memory"), "--json")
    assert res.code == 1
    assert res.json["found_by"] == "claude-code transcripts" and res.json["project"] == str(root)
    assert len(res.json["findings"]) == len(STALE)


def test_a_project_without_git_is_walked(cli, store, project):
    root, _ = project
    shutil.rmtree(root / ".git")
    res = cli("lint", "--store", str(store), "--json")
    found = {(f["memory"], f["claim"]) for f in res.json["findings"]}
    # without history nothing says a dependency was ever there; the rest is found from the files
    assert found == set(STALE) - {("project_deps.md", "requests")}
    assert all(f["commit"] == "" for f in res.json["findings"])


def _dream(cli, store) -> tuple[dict, dict, dict]:
    outcome, report, tree = dream_once(cli, store)
    assert outcome["status"] == "proposed", outcome
    return outcome, report, tree


def test_the_runs_report_lists_stale_claims_under_needs_a_person(cli, store, project):
    _, commits = project
    outcome, report, _ = _dream(cli, store)
    for (memory, claim), which in STALE.items():
        assert any(memory in line and claim in line and commits[which] in line for line in outcome["needs_person"])
    markdown = render_markdown(report)
    needs = markdown.split("## Needs a person", 1)[1]
    assert f"renamed to `src/auth/tokens.py` in {commits['renamed']}" in needs
    assert {(f["memory"], f["claim"]): f["commit"] for f in report["lint"]["findings"]} \
        == {key: commits[which] for key, which in STALE.items()}


def test_the_offline_engine_never_deletes_on_a_finding(cli, store):
    before = {rel: (store / rel).read_bytes() for rel in MEMORIES}
    _, _, tree = _dream(cli, store)
    assert set(before) <= set(tree)
    assert {rel: (store / rel).read_bytes() for rel in MEMORIES} == before
