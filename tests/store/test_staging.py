"""The staging copy costs what the engine changes: reads fall through to the base, writes land in its folder."""

from __future__ import annotations

import os
from datetime import date

import pytest

from dream.config import Settings
from dream.engines.base import EngineInput
from dream.engines.offline import OfflineEngine
from dream.errors import BadInput
from dream.store.staging import Staging
from dream.store.tree import read_tree
from helpers.offline_engine import run, sessions, topic

BASE = {
    "MEMORY.md": b"- [Deploy](deploy.md) \xe2\x80\x94 how we deploy\n- [Tests](tests.md) \xe2\x80\x94 how we test\n",
    "deploy.md": topic("Deploy", "how we deploy", "project", "Tag and push; CI publishes."),
    "tests.md": topic("Tests", "how we test", "project", "Run pytest -q from the root."),
}


def files_in(folder) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def test_an_overlay_reads_the_base_and_writes_only_what_changes(tmp_path):
    staging = Staging(tmp_path / "staging", BASE)
    assert staging.tree() == BASE and not (tmp_path / "staging").exists()  # nothing written to read the base
    staging.write("deploy.md", b"changed\n")
    staging.remove("tests.md")
    staging.write("notes/new.md", b"new\n")
    expected = {"MEMORY.md": BASE["MEMORY.md"], "deploy.md": b"changed\n", "notes/new.md": b"new\n"}
    assert staging.tree() == expected and list(staging.tree()) == sorted(expected)  # in read_tree's order
    assert files_in(tmp_path / "staging") == ["deploy.md", "notes/new.md"]


def test_the_base_is_what_the_snapshot_read_not_the_live_file(tmp_path):
    live = tmp_path / "store"
    live.mkdir()
    for rel, data in BASE.items():
        (live / rel).write_bytes(data)
    staging = Staging(tmp_path / "staging", read_tree(live))
    with open(live / "deploy.md", "ab") as fh:  # an agent appends to a live file mid-dream
        fh.write(b"- appended while dreaming\n")
    assert staging.tree()["deploy.md"] == BASE["deploy.md"]


def test_a_tool_that_works_on_files_gets_the_whole_copy_with_the_changes(tmp_path):
    staging = Staging(tmp_path / "staging", BASE)
    staging.write("deploy.md", b"changed\n")
    staging.remove("tests.md")
    staged = staging.tree()
    folder = staging.folder()
    assert read_tree(folder) == staged and staging.on_disk
    (folder / "tool.md").write_bytes(b"written by a tool\n")  # from now on the folder is the staging copy
    assert staging.tree() == {**staged, "tool.md": b"written by a tool\n"}
    staging.discard()
    assert not folder.exists()


@pytest.mark.parametrize("rel", ["../outside.md", "/tmp/outside.md", "a/../../outside.md", "link/x.md"])
def test_no_write_leaves_the_staging_folder(tmp_path, rel):
    outside = tmp_path / "outside"
    outside.mkdir()
    staging = Staging(tmp_path / "staging", BASE)
    staging.write("deploy.md", b"changed\n")  # the folder exists now
    os.symlink(outside, tmp_path / "staging" / "link")
    with pytest.raises(BadInput, match="not written to the staging copy"):
        staging.write(rel, b"escaped\n")
    with pytest.raises(BadInput, match="not written to the staging copy"):
        staging.remove(rel)
    assert list(outside.iterdir()) == [] and not (tmp_path / "outside.md").exists()
    assert staging.tree() == {**BASE, "deploy.md": b"changed\n"}


def test_the_offline_engine_stages_the_same_tree_over_the_base_as_on_a_whole_copy(tmp_path):
    rows = sessions(("s1", date(2026, 3, 9), "user", "remember: the staging database listens on port 5433"),
                    ("s1", date(2026, 3, 9), "user", "forget the deploy memory"))
    whole, whole_result = run(tmp_path / "whole", dict(BASE), rows)
    overlay = Staging(tmp_path / "overlay", dict(BASE))
    result = OfflineEngine().consolidate(EngineInput(tmp_path, overlay, rows, [], Settings(), date(2026, 3, 10)))
    staged = overlay.tree()
    assert staged == whole and staged != BASE
    assert [c.action for c in result.changes] == [c.action for c in whole_result.changes]
    written = {rel for rel in staged if staged[rel] != BASE.get(rel)}
    assert files_in(tmp_path / "overlay") == sorted(written)  # only what changed was written
