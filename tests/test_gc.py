"""`dream gc --keep N`: old versions and their unreferenced blobs go; nothing still needed does."""

from __future__ import annotations

import pytest

from dream.errors import BadInput
from dream.gc import gc, versions_to_keep
from dream.layout import Layout
from dream.proposals import Proposals
from dream.tree import read_tree
from dream.versions import Blobs, Versions


def blob_count(layout: Layout) -> int:
    return sum(1 for p in layout.objects.rglob("*") if p.is_file())


def write(store, name: str, text: str) -> None:
    (store / name).write_text(f"---\nname: {name}\ndescription: d\ntype: project\n---\n\n{text}\n")


def test_keep_one_deletes_old_versions_and_their_blobs(demo_store, cli):
    layout = Layout.open(demo_store)
    pid = cli("run", "--store", str(demo_store), "--json").json["proposal_id"]
    assert cli("accept", pid, "--store", str(demo_store)).code == 0
    write(demo_store, "scratch.md", "only in version 3")  # an edit made during the day ...
    cli("rollback", "1", "--store", str(demo_store))  # ... kept as a snapshot (3), then version 4 = 1
    versions = Versions(layout)
    assert versions.numbers() == [1, 2, 3, 4]
    scratch_digest = versions.get(3).files["scratch.md"]

    res = cli("gc", "--keep", "1", "--store", str(demo_store), "--json")
    assert res.code == 0, res.stderr
    assert res.json["deleted_versions"] == [1, 2, 3] and res.json["kept_versions"] == [4]
    assert versions.numbers() == [4]
    assert not Blobs(layout).path(scratch_digest).exists()
    # Blobs of the accepted proposal are kept: proposals still refer to them.
    for digest in Proposals(layout).get(pid).files.values():
        assert Blobs(layout).path(digest).exists()
    # Every remaining version is whole.
    assert versions.tree(4) == read_tree(demo_store)
    assert res.json["deleted_blobs"] >= 1 and res.json["freed_bytes"] > 0


def test_never_deletes_the_base_of_a_pending_proposal(demo_store, cli):
    layout = Layout.open(demo_store)
    pid = cli("run", "--store", str(demo_store), "--json").json["proposal_id"]  # base version 1
    write(demo_store, "later.md", "written during the day")
    versions = Versions(layout)
    versions.record(read_tree(demo_store), "snapshot")  # version 2
    versions.record(read_tree(demo_store), "snapshot")  # version 3
    result = gc(demo_store, keep=1)
    assert result.kept_versions == [1, 3] and result.deleted_versions == [2]
    # The pending proposal can still be accepted, merging the day's edit.
    done = cli("accept", pid, "--store", str(demo_store), "--json")
    assert done.code == 0, done.stderr
    assert (demo_store / "later.md").exists()


def test_gc_keeps_everything_still_referenced(demo_store, cli):
    layout = Layout.open(demo_store)
    cli("run", "--store", str(demo_store), "--json")
    before = blob_count(layout)
    result = gc(demo_store, keep=5)
    assert result.deleted_versions == [] and result.deleted_blobs == 0
    assert blob_count(layout) == before


def test_versions_to_keep_always_has_the_current_one():
    assert versions_to_keep([1, 2, 3, 4, 5], 2, set()) == [4, 5]
    assert versions_to_keep([1, 2, 3, 4, 5], 1, {2}) == [2, 5]
    assert versions_to_keep([], 3, {1}) == []


def test_keep_below_one_is_bad_input(demo_store, cli):
    with pytest.raises(BadInput):
        gc(demo_store, keep=0)
    res = cli("gc", "--keep", "0", "--store", str(demo_store))
    assert res.code == 2 and len(res.stderr.strip().splitlines()) == 1
