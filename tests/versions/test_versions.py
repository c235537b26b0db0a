"""The version store: content-addressed blobs and trees, numbered immutable records, old stores read."""

from __future__ import annotations

import gzip
import hashlib
import json
import signal
import zlib

import pytest

import dream.store.tree as tree_module
from dream.pipeline.report import proposal_markdown
from dream.store.records import DamagedRecord
from dream.store.layout import Layout
from dream.store.tree import read_tree
from dream.versions import packing, trees
from dream.versions.gc import gc
from helpers.aging import backdate
from dream.versions.manifests import Blobs, Versions
from dream.versions.proposals import ACCEPTED, Proposal, Proposals


def test_unchanged_file_stored_once_and_versions_numbered(tmp_path):
    (tmp_path / "MEMORY.md").write_text("")
    layout = Layout.open(tmp_path)
    layout.ensure()
    v = Versions(layout)
    one = v.record({"MEMORY.md": b"- a\n", "a.md": b"same\n"}, "snapshot")
    two = v.record({"MEMORY.md": b"- a\n- b\n", "a.md": b"same\n", "b.md": b"new\n"}, "accept")
    assert (one.number, two.number, v.current()) == (1, 2, 2)
    assert one.files["a.md"] == two.files["a.md"]
    blobs = [p for p in layout.objects.rglob("*") if p.is_file()]
    assert len(blobs) == 6  # two indexes, a.md once, b.md; one tree object per version (a leaf each)
    assert v.tree(1) == {"MEMORY.md": b"- a\n", "a.md": b"same\n"}


def test_record_with_number_is_idempotent(tmp_path):
    (tmp_path / "MEMORY.md").write_text("")
    layout = Layout.open(tmp_path)
    v = Versions(layout)
    first = v.record({"x.md": b"1"}, "accept", number=1)
    again = v.record({"x.md": b"2"}, "accept", number=1)
    assert again.files == first.files
    assert v.tree(1) == {"x.md": b"1"}


# --- the layout: trees of shared objects, deltas, old stores ---------------------------------------

def dream_bytes(layout: Layout) -> int:
    return sum(p.stat().st_size for p in layout.dream.rglob("*") if p.is_file())


def topic(i: int, extra: str = "") -> bytes:
    words = " ".join(f"w{(i * 7 + k) % 997}" for k in range(120))
    return f"---\nname: t{i}\ndescription: d{i}\ntype: project\n---\n\n{words}\n{extra}".encode()


def big_tree(count: int) -> dict[str, bytes]:
    tree = {f"t{i:05d}.md": topic(i) for i in range(count)}
    tree["MEMORY.md"] = "".join(f"- [t{i}](t{i:05d}.md) — d{i}\n" for i in range(count)).encode()
    return tree


def new_store(tmp_path) -> Layout:
    (tmp_path / "MEMORY.md").write_text("")
    layout = Layout.open(tmp_path)
    layout.ensure()
    return layout


def test_a_one_file_change_costs_about_one_file(tmp_path):
    layout = new_store(tmp_path)
    versions = Versions(layout)
    tree = big_tree(2000)
    versions.record(tree, "snapshot")
    before = dream_bytes(layout)
    changed = dict(tree, **{"t00042.md": tree["t00042.md"] + b"- one more line\n"})
    two = versions.record(changed, "snapshot")
    added = dream_bytes(layout) - before
    # The old layout rewrote the whole list (2,001 paths, ~200 KB); now: the file (a delta), the
    # three tree nodes above it (deltas too) and a record of a few hundred bytes.
    assert added < len(changed["t00042.md"]) + 1024, added
    assert versions.tree(2) == changed and versions.tree(1) == tree
    assert versions.get(1).tree != two.tree
    again = dream_bytes(layout)
    versions.record(changed, "snapshot")  # the same tree again: only a record
    assert dream_bytes(layout) - again < 400


def test_version_and_proposal_records_name_a_tree_not_every_file(demo_store, cli):
    run = cli("run", "--store", str(demo_store), "--json")
    assert run.code == 0, run.stderr
    layout = Layout.open(demo_store)
    record = json.loads((layout.versions / "000001.json").read_text())
    assert "files" not in record and len(record["tree"]) == 64
    manifest = json.loads((layout.proposals / run.json["proposal_id"] / "proposal.json").read_text())
    assert "files" not in manifest and len(manifest["tree"]) == 64
    assert sorted(p.name for p in (layout.proposals / run.json["proposal_id"]).iterdir()) == [
        "proposal.json", "review.json.gz"]
    proposal = Proposals(layout).get(run.json["proposal_id"])
    assert Versions(layout).tree(1) == read_tree(demo_store)
    assert set(Proposals(layout).tree(proposal)) == set(proposal.files)


def test_a_proposal_stores_its_report_once_and_renders_the_markdown(demo_store, cli):
    run = cli("run", "--store", str(demo_store), "--json")
    assert run.code == 0, run.stderr
    layout = Layout.open(demo_store)
    folder = layout.proposals / run.json["proposal_id"]
    review = json.loads(gzip.decompress((folder / "review.json.gz").read_bytes()))
    assert set(review) == {"diff", "report"}  # the markdown is the report rendered, not a third copy
    proposals = Proposals(layout)
    markdown = proposal_markdown(proposals, proposals.get(run.json["proposal_id"]))
    assert markdown.startswith(f"# Dream proposal {run.json['proposal_id']}\n") and "\n## Changes\n" in markdown
    shown = cli("diff", "--store", str(demo_store), env={"COLUMNS": "1000"}).stdout
    assert all(line in shown for line in markdown.splitlines())
    # A review written by an older dream keeps showing the markdown it stored.
    review["report_md"] = "# Dream proposal, as an older dream wrote it\n"
    (folder / "review.json.gz").write_bytes(gzip.compress(json.dumps(review).encode()))
    assert proposal_markdown(proposals, proposals.get(run.json["proposal_id"])) == review["report_md"]


def write_old_store(root) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """A store as the first layout left it: raw blobs, manifests listing every file, plain artefacts."""
    base = {"MEMORY.md": b"- [A](a.md) \xe2\x80\x94 a\n", "a.md": b"---\nname: a\ndescription: a\ntype: user\n---\n\nA.\n"}
    new = dict(base, **{"a.md": base["a.md"] + b"More.\n"})
    for rel, data in base.items():
        (root / rel).write_bytes(data)
    dream = root / ".dream"
    for data in [*base.values(), *new.values()]:
        digest = hashlib.sha256(data).hexdigest()
        (dream / "objects" / digest[:2]).mkdir(parents=True, exist_ok=True)
        (dream / "objects" / digest[:2] / digest[2:]).write_bytes(data)
    listing = {rel: hashlib.sha256(data).hexdigest() for rel, data in base.items()}
    (dream / "versions").mkdir(parents=True)
    (dream / "versions" / "000001.json").write_text(json.dumps(
        {"number": 1, "created_at": 1.0, "source": "snapshot", "files": listing, "note": "",
         "proposal_id": None, "actor": None, "meta": {}}, indent=1))
    folder = dream / "proposals" / "20260101-000000-abcd"
    folder.mkdir(parents=True)
    (folder / "proposal.json").write_text(json.dumps(
        {"id": folder.name, "created_at": 2.0, "base_version": 1, "engine": "offline", "run_id": "r1",
         "files": {rel: hashlib.sha256(data).hexdigest() for rel, data in new.items()}, "changed": ["a.md"],
         "status": "pending", "decided_at": None, "accepted_version": None, "meta": {}}, indent=1))
    (folder / "diff.patch").write_text("--- a/a.md\n+++ b/a.md\n@@ -6 +6,2 @@\n A.\n+More.\n")
    (folder / "report.json").write_text(json.dumps({"proposal_id": folder.name, "files_changed": ["a.md"]}, indent=2))
    (folder / "report.md").write_text("# Dream proposal\n")
    return base, new


def test_a_store_in_the_old_layout_is_read_and_accepted(tmp_path, cli):
    base, new = write_old_store(tmp_path)
    layout = Layout.open(tmp_path)
    versions, proposals = Versions(layout), Proposals(layout)
    assert versions.tree(1) == base and versions.get(1).tree is None
    proposal = proposals.get("20260101-000000-abcd")
    assert proposals.tree(proposal) == new
    assert proposals.diff(proposal).endswith("+More.\n") and proposal_markdown(proposals, proposal) == "# Dream proposal\n"
    assert proposals.report(proposal)["files_changed"] == ["a.md"]
    shown = cli("diff", proposal.id, "--json", "--store", str(tmp_path))
    assert shown.code == 0, shown.stderr
    assert shown.json["diff"] == proposals.diff(proposal) and shown.json["report"]["files_changed"] == ["a.md"]

    done = cli("accept", proposal.id, "--json", "--store", str(tmp_path))
    assert done.code == 0, done.stderr
    assert read_tree(tmp_path) == new and Versions(layout).tree(2) == new
    # Written anew: the version names a tree; the old proposal's status change rewrote it with one too.
    assert "tree" in json.loads((layout.versions / "000002.json").read_text())
    rewritten = json.loads((layout.proposals / proposal.id / "proposal.json").read_text())
    assert "files" not in rewritten and rewritten["status"] == ACCEPTED
    assert Proposals(layout).tree(Proposals(layout).get(proposal.id)) == new
    # gc on the mixed store keeps the raw blobs the old manifest needs.
    gc(tmp_path, keep=5)
    assert Versions(layout).tree(1) == base


def test_a_raw_blob_that_starts_like_a_packed_one_is_still_read(tmp_path):
    layout = new_store(tmp_path)
    data = packing.MAGIC + b"\x00 a memory file that happens to start with these bytes"
    digest = hashlib.sha256(data).hexdigest()
    path = Blobs(layout).path(digest)
    path.parent.mkdir(parents=True)
    path.write_bytes(data)  # as the first layout stored every blob: raw
    assert Blobs(layout).get(digest) == data


def test_a_damaged_delta_is_an_error_not_wrong_bytes(tmp_path):
    layout = new_store(tmp_path)
    versions = Versions(layout)
    tree = big_tree(3)
    versions.record(tree, "snapshot")
    changed = dict(tree, **{"t00001.md": tree["t00001.md"] + b"- more\n"})
    versions.record(changed, "snapshot")
    digest = versions.get(2).files["t00001.md"]
    stored = Blobs(layout).path(digest).read_bytes()
    assert packing.parse(stored).depth == 1  # stored as a delta against version 1's file
    Blobs(layout).path(digest).write_bytes(stored[:-3] + bytes(3))
    with pytest.raises(DamagedRecord, match="damaged object"):
        Versions(layout).tree(2)


def test_a_file_larger_than_zlibs_window_that_grows_costs_its_new_lines(tmp_path):
    layout = new_store(tmp_path)
    versions = Versions(layout)
    archive = "".join(f"- archived note {i}: {hashlib.sha256(str(i).encode()).hexdigest()}\n"
                      for i in range(2000)).encode()  # 170 KB: past zlib's 32 KB window
    versions.record({"MEMORY.md": b"", "archive.md": archive}, "snapshot")
    grown = archive + b"- archived note 2000: moved out of the index today\n"
    versions.record({"MEMORY.md": b"", "archive.md": grown}, "snapshot")
    stored = Blobs(layout).path(versions.get(2).files["archive.md"]).read_bytes()
    assert packing.parse(stored).depth == 1
    assert len(stored) < 120  # the header and the new line, not a copy of 170 KB
    assert Versions(layout).tree(2)["archive.md"] == grown


def test_a_delta_written_before_shared_spans_is_still_read():
    base = b"".join(b"- line %d\n" % i for i in range(50))
    data = base.replace(b"line 7\n", b"line seven\n")
    deflater = zlib.compressobj(6, zlib.DEFLATED, -15, zdict=base)
    old_form = packing.MAGIC + b"\x01" + hashlib.sha256(base).digest() + deflater.compress(data) + deflater.flush()
    packed = packing.parse(old_form)
    assert (packed.depth, packed.shared_head, packed.shared_tail) == (1, 0, 0)
    assert packing.inflate(packed, base) == data


def test_a_delta_sharing_more_than_its_base_holds_is_damaged():
    base = b"".join(b"- line %d\n" % i for i in range(50))
    stored = packing.pack(base + b"- one more\n", (hashlib.sha256(base).hexdigest(), base, 0))
    assert packing.parse(stored).shared_head == len(base)
    with pytest.raises(ValueError, match="shares more"):
        packing.inflate(packing.parse(stored), base[:100])  # a different, shorter base than the one it names


def test_gc_keeps_the_bases_of_the_deltas_it_keeps(tmp_path):
    layout = new_store(tmp_path)
    versions = Versions(layout)
    tree = big_tree(40)  # more than one tree node
    for i in range(4):
        tree = dict(tree, **{"MEMORY.md": tree["MEMORY.md"] + f"- line {i}\n".encode()})
        versions.record(tree, "snapshot")
    blobs = Blobs(layout)
    chain = [versions.get(n).files["MEMORY.md"] for n in (4, 3, 2, 1)]
    assert [blobs.base_of(d) for d in chain] == [*chain[1:], None]  # each index a delta on the one before
    backdate(layout, 200)
    result = gc(tmp_path, keep=1)
    assert result.deleted_versions == [1, 2, 3]
    assert all(Blobs(layout).has(d) for d in chain)  # versions 1-3 are gone, their indexes are not
    assert Versions(layout).tree(4) == tree


def test_delta_chains_stay_short(tmp_path):
    layout = new_store(tmp_path)
    versions = Versions(layout)
    tree = big_tree(3)
    for i in range(3 * packing.MAX_CHAIN):
        tree = dict(tree, **{"MEMORY.md": tree["MEMORY.md"] + f"- line {i}\n".encode()})
        versions.record(tree, "snapshot")
    blobs = Blobs(layout)
    depths = [packing.parse(blobs.path(versions.get(n).files["MEMORY.md"]).read_bytes()).depth
              for n in versions.numbers()]
    assert max(depths) == packing.MAX_CHAIN
    assert Versions(layout).tree(versions.current()) == tree


def test_tree_nodes_read_back_and_split_by_path_hash():
    files = {f"team/n{i}.md" if i % 3 else f"n{i}.md": hashlib.sha256(str(i).encode()).hexdigest()
             for i in range(500)}
    files["odd name \udcff.md"] = "0" * 64  # not valid UTF-8 on disk: kept byte for byte
    root, nodes = trees.build(files)
    store = {node.digest: node.data for node in nodes}
    listing = trees.read(root, store.__getitem__)
    assert listing.files == files
    assert max(len(node.data) for node in nodes) < 40 * (32 + 20)  # no node lists the whole tree
    same_root, _ = trees.build(dict(reversed(list(files.items()))))
    assert same_root == root  # the split depends on the set of paths only


# --- durability: one commit, never a half proposal -------------------------------------------------


def count_syncs(monkeypatch) -> dict[str, int]:
    counts = {"fsync": 0, "syncfs": 0}
    real_fsync = tree_module.os.fsync

    def fsync(fd):
        counts["fsync"] += 1
        real_fsync(fd)

    def syncfs(fd):
        counts["syncfs"] += 1
        return 0

    monkeypatch.setattr(tree_module.os, "fsync", fsync)
    monkeypatch.setattr(tree_module, "_syncfs", syncfs)
    return counts


@pytest.mark.parametrize("count", [20, 600])
def test_a_version_costs_the_same_syncs_however_many_files(tmp_path, monkeypatch, count):
    layout = new_store(tmp_path)
    counts = count_syncs(monkeypatch)
    Versions(layout).record(big_tree(count), "snapshot")
    # Objects: one syncfs for their bytes, one for their names; the record: its file and its folder.
    assert counts == {"syncfs": 2, "fsync": 2}


def test_a_proposal_is_one_commit(tmp_path, monkeypatch):
    layout = new_store(tmp_path)
    tree = big_tree(300)
    Versions(layout).record(tree, "snapshot")
    counts = count_syncs(monkeypatch)
    changed = {f"t{i:05d}.md": topic(i, "- changed\n") for i in range(0, 300, 3)}
    proposal = Proposal("p1", 0.0, 1, "offline", "r1", {}, sorted(changed))
    Proposals(layout).create(proposal, "diff\n", {"id": "p1"}, tree=dict(tree, **changed))
    assert counts == {"syncfs": 2, "fsync": 1}  # objects and folder synced together; then the folder's rename
    assert Proposals(layout).tree(Proposals(layout).get("p1")) == dict(tree, **changed)


def test_the_staging_copy_is_never_synced(tmp_path, monkeypatch):
    counts = count_syncs(monkeypatch)
    tree_module.materialize(big_tree(50), tmp_path / "staging")
    assert counts == {"syncfs": 0, "fsync": 0}
    assert read_tree(tmp_path / "staging") == big_tree(50)


def test_a_run_killed_before_its_proposal_commits_leaves_no_proposal(demo_store, cli, spawned_cli):
    crashed = spawned_cli("run", "--store", str(demo_store), "--json", env={"DREAM_CRASHPOINT": "propose-before-commit"})
    assert crashed.code == -signal.SIGKILL, crashed.stderr
    layout = Layout.open(demo_store)
    assert Proposals(layout).ids() == [] and not any(layout.proposals.iterdir())
    assert any((layout.dream / "tmp").iterdir())  # the built, uncommitted folder: invisible to every command
    blobs = Blobs(layout)
    for digest in blobs.digests():  # every object under its final name, loose or in a pack, is whole
        assert hashlib.sha256(blobs.get(digest)).hexdigest() == digest
    status = cli("status", "--store", str(demo_store), "--json")
    assert status.code == 0 and status.json["pending"] == []
    again = cli("run", "--force", "--store", str(demo_store), "--json")
    assert again.code == 0 and again.json["status"] == "proposed", again.stderr
    assert Proposals(layout).ids() == [again.json["proposal_id"]]
    assert not any((layout.dream / "tmp").iterdir())  # what the crash left is gone


def test_a_failed_batch_leaves_nothing_and_gc_clears_what_a_crash_left(tmp_path):
    layout = new_store(tmp_path)
    Versions(layout).record(big_tree(5), "snapshot")
    def files():
        return sorted(p for p in layout.objects.rglob("*") if p.is_file())

    before = files()
    with pytest.raises(RuntimeError), tree_module.DurableBatch() as batch:
        Blobs(layout).add(batch, b"never committed")
        raise RuntimeError("the write fails half-way")
    assert files() == before  # no temporary file, no object
    crashed = layout.objects / "ab" / ".cdef.1234.tmp"  # what a kill during a batch's writes leaves
    crashed.parent.mkdir(exist_ok=True)
    crashed.write_bytes(b"half")
    result = gc(tmp_path, keep=1)
    assert not crashed.exists() and result.deleted_blobs == 0
    assert Versions(layout).tree(1) == big_tree(5)


def test_without_syncfs_every_new_file_is_fsynced(tmp_path, monkeypatch):
    layout = new_store(tmp_path)
    counts = count_syncs(monkeypatch)
    monkeypatch.setattr(tree_module, "_syncfs", None)  # not Linux: no one call syncs a file system
    Versions(layout).record(big_tree(10), "snapshot")  # fewer than PACK_AT objects: a loose file each
    assert counts["syncfs"] == 0 and counts["fsync"] >= 11  # each object, each folder, the record
    assert Versions(layout).tree(1) == big_tree(10)
