"""A store is what the user says it is: `--store`, `$DREAM_STORE`, or a current folder that is plainly one.

Typed inside a project checkout, `dream run` must not make the checkout a
store: no `.dream/` left in it, no proposal of a MEMORY.md indexing its README.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from helpers.cli import assert_one_line_error
from helpers.stores import DEMO

COMMANDS = [("run",), ("run", "--force"), ("status",), ("proposals",), ("history",), ("config",), ("lint",),
            ("import", "--from", "claude-code")]


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A git checkout with the markdown a project has: a README and docs."""
    repo = tmp_path / "project"
    (repo / "docs").mkdir(parents=True)
    (repo / "README.md").write_text("# project\n\nHow to build it.\n")
    (repo / "docs" / "design.md").write_text("# design\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_a_command_without_a_store_in_a_checkout_is_refused_and_leaves_nothing(cli, checkout: Path, args) -> None:
    before = sorted(p.name for p in checkout.iterdir())
    res = cli(*args, cwd=checkout)
    assert_one_line_error(res, 2, "no store named", "MEMORY.md", "--store")
    assert sorted(p.name for p in checkout.iterdir()) == before  # no .dream/


@pytest.mark.parametrize("named", ["flag", "env"])
def test_a_checkout_named_as_the_store_is_refused_saying_why(cli, checkout: Path, named: str) -> None:
    args, env = (["--store", "."], None) if named == "flag" else ([], {"DREAM_STORE": "."})
    res = cli("run", "--force", "--engine", "offline", *args, cwd=checkout, env=env)
    assert_one_line_error(res, 2, "inside the git work tree", str(checkout), "MEMORY.md")
    assert not (checkout / ".dream").exists()
    docs = cli("run", "--force", "--store", "docs", cwd=checkout)  # a folder of the checkout: the same
    assert_one_line_error(docs, 2, "inside the git work tree")
    assert not (checkout / "docs" / ".dream").exists()


def test_the_current_folder_is_the_store_when_it_holds_an_index(cli, tmp_path: Path) -> None:
    store = tmp_path / "demo"
    shutil.copytree(DEMO, store, ignore=shutil.ignore_patterns(".dream"))
    ran = cli("run", "--engine", "offline", "--json", cwd=store)
    assert ran.code == 0 and ran.json["status"] == "proposed", ran.stderr
    (store / "MEMORY.md").unlink()  # .dream/ alone still says so
    assert cli("proposals", "--json", cwd=store).json["proposals"]


def test_a_store_with_an_index_inside_a_checkout_is_a_store(cli, checkout: Path) -> None:
    store = checkout / "memory"
    shutil.copytree(DEMO, store, ignore=shutil.ignore_patterns(".dream"))
    ran = cli("run", "--engine", "offline", "--json", "--store", "memory", cwd=checkout)
    assert ran.code == 0 and ran.json["status"] == "proposed", ran.stderr
    assert not (checkout / ".dream").exists() and (store / ".dream").is_dir()


def test_all_and_root_need_no_store(cli, checkout: Path, tmp_path: Path, home: Path) -> None:
    for args in (("status", "--all"), ("run", "--all"), ("history", "--all"), ("status", "--root", str(tmp_path))):
        res = cli(*args, "--json", cwd=checkout)
        assert res.code == 0, (args, res.stderr)
    assert not (checkout / ".dream").exists()
