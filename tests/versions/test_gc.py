"""`dream gc --keep N`: old versions and their unreferenced blobs go; nothing still needed does."""

from __future__ import annotations

import pytest

import dream.versions.gc as gc_module
from dream.errors import BadInput
from dream.store.records import DamagedRecord
from dream.store.layout import Layout
from dream.store.tree import read_tree
from dream.versions.gc import gc, versions_to_keep
from dream.versions.manifests import Blobs, Versions
from dream.versions.proposals import (
    ACCEPTED,
    PENDING,
    REJECTED,
    SUPERSEDED,
    Proposal,
    Proposals,
)


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
    # The accepted proposal was based on version 1, now gone: it goes too, with blobs only it held.
    assert res.json["proposals_deleted"] == [pid]
    assert Proposals(layout).ids() == []
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


# --- decided proposals -------------------------------------------------------------------------


def add_proposal(layout: Layout, pid: str, base: int, status: str, extra: dict[str, bytes]) -> Proposal:
    """A proposal whose tree is its base version plus `extra` files (their blobs stored)."""
    versions, proposals = Versions(layout), Proposals(layout)
    files = dict(versions.get(base).files) | versions.blobs.put_tree(extra)
    proposal = Proposal(pid, 0.0, base, "offline", f"run-{pid}", files, sorted(extra), status=status)
    return proposals.create(proposal, f"diff of {pid}\n", {"id": pid})


def blob_exists(layout: Layout, data: bytes) -> bool:
    from dream.store.tree import sha256
    return Blobs(layout).path(sha256(data)).exists()


@pytest.fixture
def mixed_store(demo_store):
    """Versions 1-3; decided proposals on version 1; one pending on 2; one rejected on 3."""
    layout = Layout.open(demo_store)
    layout.ensure()
    versions = Versions(layout)
    versions.record(read_tree(demo_store), "snapshot")  # 1
    add_proposal(layout, "p-accepted", 1, ACCEPTED, {"a.md": b"only in the accepted one"})
    add_proposal(layout, "p-rejected", 1, REJECTED, {"r.md": b"only in the rejected one", "v3.md": b"also in v3"})
    add_proposal(layout, "p-superseded", 1, SUPERSEDED,
                 {"s.md": b"only in the superseded one", "shared.md": b"shared with the pending one"})
    write(demo_store, "day.md", "written during the day")
    versions.record(read_tree(demo_store), "snapshot")  # 2
    (demo_store / "v3.md").write_bytes(b"also in v3")
    versions.record(read_tree(demo_store), "snapshot")  # 3
    add_proposal(layout, "p-pending", 2, PENDING,
                 {"p.md": b"only in the pending one", "shared.md": b"shared with the pending one"})
    add_proposal(layout, "p-recent", 3, REJECTED, {"n.md": b"rejected but on a kept version"})
    return demo_store


def test_gc_deletes_old_decided_proposals_and_only_their_blobs(mixed_store, cli):
    layout = Layout.open(mixed_store)
    res = cli("gc", "--keep", "1", "--store", str(mixed_store), "--json")
    assert res.code == 0, res.stderr
    assert res.json["kept_versions"] == [2, 3]  # 2 is the pending proposal's base
    assert sorted(res.json["proposals_deleted"]) == ["p-accepted", "p-rejected", "p-superseded"]
    assert Proposals(layout).ids() == ["p-pending", "p-recent"]
    assert not (layout.proposals / "p-accepted").exists()
    for gone in (b"only in the accepted one", b"only in the rejected one", b"only in the superseded one"):
        assert not blob_exists(layout, gone)
    for kept in (b"also in v3", b"shared with the pending one", b"only in the pending one",
                 b"rejected but on a kept version"):
        assert blob_exists(layout, kept)
    # What is left is whole: the pending proposal's tree and the kept versions read back.
    proposals = Proposals(layout)
    assert proposals.tree(proposals.get("p-pending"))["shared.md"] == b"shared with the pending one"
    assert proposals.tree(proposals.get("p-recent"))["n.md"] == b"rejected but on a kept version"
    assert Versions(layout).tree(3) == read_tree(mixed_store)
    assert not any((layout.dream / "gc-trash").iterdir())


def test_history_works_and_diff_of_a_deleted_proposal_is_a_one_line_error(mixed_store, cli):
    assert cli("gc", "--keep", "1", "--store", str(mixed_store)).code == 0
    hist = cli("history", "--store", str(mixed_store), "--json")
    assert hist.code == 0, hist.stderr
    assert set(hist.json) == {"runs", "events", "damaged_lines"} and hist.json["damaged_lines"] == []
    gone = cli("diff", "p-rejected", "--store", str(mixed_store))
    assert gone.code == 2 and gone.stdout == ""
    assert len(gone.stderr.strip().splitlines()) == 1 and "no proposal 'p-rejected'" in gone.stderr
    assert cli("diff", "p-pending", "--store", str(mixed_store)).code == 0


def test_keep_proposals_keeps_decided_ones_and_their_blobs(mixed_store):
    layout = Layout.open(mixed_store)
    result = gc(mixed_store, keep=1, keep_proposals=True)
    assert result.proposals_deleted == [] and result.deleted_versions == [1]
    assert len(Proposals(layout).ids()) == 5
    assert blob_exists(layout, b"only in the accepted one")


def test_an_old_pending_proposal_pins_its_base_and_the_decided_ones_on_it(demo_store):
    layout = Layout.open(demo_store)
    layout.ensure()
    versions = Versions(layout)
    versions.record(read_tree(demo_store), "snapshot")  # 1
    add_proposal(layout, "old-pending", 1, PENDING, {"p.md": b"pending on 1"})
    add_proposal(layout, "old-rejected", 1, REJECTED, {"r.md": b"rejected on 1"})
    write(demo_store, "day.md", "later")
    versions.record(read_tree(demo_store), "snapshot")  # 2
    result = gc(demo_store, keep=1)
    assert result.kept_versions == [1, 2] and result.proposals_deleted == []
    assert blob_exists(layout, b"pending on 1") and blob_exists(layout, b"rejected on 1")


def test_a_damaged_proposal_makes_gc_refuse_and_delete_nothing(mixed_store, cli):
    layout = Layout.open(mixed_store)
    (layout.proposals / "p-recent" / "proposal.json").write_text("{not json")
    before = blob_count(layout)
    with pytest.raises(DamagedRecord):
        gc(mixed_store, keep=1)
    res = cli("gc", "--keep", "1", "--store", str(mixed_store))
    assert res.code == 2 and len(res.stderr.strip().splitlines()) == 1
    assert blob_count(layout) == before and Versions(layout).numbers() == [1, 2, 3]
    assert (layout.proposals / "p-accepted" / "proposal.json").is_file()


def test_an_interrupted_gc_leaves_no_manifest_pointing_at_deleted_blobs(mixed_store, monkeypatch):
    layout = Layout.open(mixed_store)

    def crash(folder):
        raise KeyboardInterrupt("power cut while emptying the trash")

    monkeypatch.setattr(gc_module, "_remove_folder", crash)
    with pytest.raises(KeyboardInterrupt):
        gc(mixed_store, keep=1)
    # The first proposal left proposals/ in one rename; no blob was deleted yet.
    remaining = Proposals(layout).all(skip_damaged=False)
    assert len(remaining) == 4
    for proposal in remaining:
        Proposals(layout).tree(proposal)  # every manifest still finds all its blobs
    assert blob_exists(layout, b"only in the accepted one")
    monkeypatch.undo()
    result = gc(mixed_store, keep=1)  # the next gc finishes the job
    assert Proposals(layout).ids() == ["p-pending", "p-recent"]
    assert not any((layout.dream / "gc-trash").iterdir())
    assert not blob_exists(layout, b"only in the accepted one")
    assert len(result.proposals_deleted) == 2  # the third was already out of proposals/


def test_a_trash_that_is_a_file_is_refused_before_anything_is_deleted(mixed_store, cli):
    layout = Layout.open(mixed_store)
    (layout.dream / "gc-trash").write_text("not a folder")
    res = cli("gc", "--keep", "1", "--store", str(mixed_store))
    assert res.code == 2 and len(res.stderr.strip().splitlines()) == 1 and "gc-trash" in res.stderr
    assert len(Proposals(layout).ids()) == 5 and Versions(layout).numbers() == [1, 2, 3]
