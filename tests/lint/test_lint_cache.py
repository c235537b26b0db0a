"""Lint's cache (.dream/lint-cache.json): an unchanged store over an unchanged project is not checked again,
and anything that could change an answer (a memory, a commit, an uncommitted edit) makes lint check again.

Each test compares the cached answer with a cold one (cache removed), on the
real git project of tests/helpers/git_project.py.
"""

from __future__ import annotations

import shutil

import pytest

from helpers.git_project import MEMORIES, STALE, commit, make_project, make_store, write

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "project"
    make_project(root)
    return root


@pytest.fixture
def store(tmp_path, project):
    return make_store(tmp_path / "store", project)


def lint(cli, store) -> dict:
    res = cli("lint", "--store", str(store), "--json")
    assert res.code in (0, 1), res.stderr
    return res.json


def cold(cli, store) -> dict:
    (store / ".dream" / "lint-cache.json").unlink(missing_ok=True)
    return lint(cli, store)


def answer(report: dict) -> tuple:
    """What a person reads from a lint: everything but how long it took and how it got there."""
    return tuple(report[key] for key in ("head", "claims", "held", "unchecked", "findings", "verified"))


def test_a_second_lint_of_an_unchanged_store_is_answered_from_the_cache(cli, store):
    first = cold(cli, store)
    again = lint(cli, store)
    assert first["cached"] == 0 and again["cached"] == len(MEMORIES)
    assert answer(again) == answer(first)
    assert len(again["findings"]) == len(STALE)


def test_a_changed_memory_alone_is_checked_again(cli, store):
    cold(cli, store)
    (store / "project_legacy.md").write_text(
        "---\nname: legacy\ndescription: old handlers\ntype: project\n---\nWebhooks are in `src/app.py`.\n")
    again = lint(cli, store)
    assert again["cached"] == len(MEMORIES) - 1
    assert answer(again) == answer(cold(cli, store))
    assert "project_legacy.md" in again["verified"]
    assert all(f["memory"] != "project_legacy.md" for f in again["findings"])


def test_a_new_commit_checks_every_memory_again(cli, store, project):
    before = cold(cli, store)
    write(project, {"src/legacy/old.py": "def handler():\n    pass\n"})
    head = commit(project, "bring the legacy handler back")
    again = lint(cli, store)
    assert again["cached"] == 0 and again["head"] == head != before["head"]
    assert all(f["claim"] != "src/legacy/old.py" for f in again["findings"])
    assert answer(again) == answer(cold(cli, store))


def test_an_uncommitted_edit_of_a_tracked_file_checks_again(cli, store, project):
    cold(cli, store)
    write(project, {"src/app.py": "import os\nDB = os.environ['DATABASE_URL']\nT = os.environ['LEGACY_TOKEN']\n"})
    again = lint(cli, store)
    assert again["cached"] == 0
    assert all(f["claim"] != "LEGACY_TOKEN" for f in again["findings"])  # the working tree has it again
    write(project, {"src/app.py": "import os\n# the token went\nDB = os.environ['DATABASE_URL']\n"})  # still uncommitted
    third = lint(cli, store)
    assert third["cached"] == 0 and any(f["claim"] == "LEGACY_TOKEN" for f in third["findings"])


def test_a_damaged_cache_is_ignored_and_rewritten(cli, store):
    first = cold(cli, store)
    (store / ".dream" / "lint-cache.json").write_text("{not json")
    again = lint(cli, store)
    assert again["cached"] == 0 and answer(again) == answer(first)
    assert lint(cli, store)["cached"] == len(MEMORIES)


def test_a_lint_that_ran_out_of_time_keeps_nothing(cli, store):
    (store / ".dream" / "config.toml").write_text(
        (store / ".dream" / "config.toml").read_text() + "lint_seconds = 0.000001\n")
    lint(cli, store)
    assert not (store / ".dream" / "lint-cache.json").exists()
