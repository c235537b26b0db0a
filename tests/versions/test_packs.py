"""gc packs the objects it keeps into a few pack files; every version still reads back, from any reader."""

from __future__ import annotations

import os
import time

import pytest

from dream.store.layout import Layout
from dream.store.records import DamagedRecord
from dream.versions import packfiles
from dream.versions.gc import collect, gc
from dream.versions.manifests import Blobs, Versions

DAY = 86_400.0


def store_with_versions(tmp_path, count: int = 6) -> tuple[Layout, dict[int, dict[str, bytes]]]:
    """A store with `count` versions, each changing one topic and the index; version -> its tree."""
    (tmp_path / "MEMORY.md").write_text("")
    layout = Layout.open(tmp_path)
    layout.ensure()
    trees = {}
    tree = {f"t{i:02d}.md": f"---\nname: t{i}\n---\n- fact {i}\n".encode() for i in range(40)}
    for n in range(count):
        tree = dict(tree, **{f"t{n:02d}.md": tree[f"t{n:02d}.md"] + f"- more {n}\n".encode(),
                             "MEMORY.md": b"".join(f"- [t{i}](t{i:02d}.md)\n".encode() for i in range(n + 1))})
        trees[Versions(layout).record(tree, "snapshot").number] = tree
    return layout, trees


def pack_files(layout: Layout) -> list[str]:
    return [p.name for p in packfiles.pack_paths(layout.packs)]


def assert_every_version_reads_back(layout: Layout, trees: dict[int, dict[str, bytes]]) -> None:
    versions = Versions(layout)  # a fresh reader: nothing cached
    for number, tree in trees.items():
        assert versions.tree(number) == tree


def test_gc_packs_every_object_it_keeps_into_one_file(tmp_path, cli):
    layout, trees = store_with_versions(tmp_path)
    stored = Blobs(layout).digests()
    loose_files = len(Blobs(layout).loose())
    res = cli("gc", "--keep", "1", "--store", str(tmp_path), "--json")
    assert res.code == 0, res.stderr
    assert res.json["deleted_versions"] == []  # all younger than 90 days
    assert res.json["packed_objects"] == loose_files and res.json["pack_files"] == 1
    assert Blobs(layout).loose() == {} and len(pack_files(layout)) == 1
    assert Blobs(layout).digests() == stored
    assert_every_version_reads_back(layout, trees)


def test_later_objects_join_this_months_pack_and_a_new_month_gets_its_own(tmp_path):
    layout, trees = store_with_versions(tmp_path, 3)
    now = time.time()
    collect(layout, 1, False, 90.0, now=now)
    first = pack_files(layout)
    tree = dict(trees[3], **{"new.md": b"added after the first gc\n"})
    trees[Versions(layout).record(tree, "snapshot").number] = tree
    collect(layout, 1, False, 90.0, now=now)
    second = pack_files(layout)
    assert len(second) == 1 and second != first  # merged into one new pack of the same month
    tree = dict(tree, **{"later.md": b"added a month later\n"})
    trees[Versions(layout).record(tree, "snapshot").number] = tree
    collect(layout, 1, False, 90.0, now=now + 35 * DAY)
    third = pack_files(layout)
    assert len(third) == 2 and second[0] in third  # last month's pack is left as it is
    assert Blobs(layout).loose() == {}
    assert_every_version_reads_back(layout, trees)


def test_a_reader_that_listed_the_packs_before_a_repack_still_reads_everything(tmp_path):
    layout, trees = store_with_versions(tmp_path, 3)
    gc(tmp_path, keep=1)
    reader = Versions(layout)
    reader.blobs.packed()  # the reader knows the first pack only
    tree = dict(trees[3], **{"new.md": b"written after the reader looked\n"})
    trees[Versions(layout).record(tree, "snapshot").number] = tree
    gc(tmp_path, keep=1)  # the first pack is replaced, the new loose objects are packed and deleted
    for number, expected in trees.items():
        assert reader.tree(number) == expected


def test_two_packs_holding_the_same_objects_are_served_and_merged_by_the_next_gc(tmp_path):
    layout, trees = store_with_versions(tmp_path, 3)
    gc(tmp_path, keep=1)
    (only,) = packfiles.pack_paths(layout.packs)
    copy = layout.packs / f"{packfiles.group_of(only)}.0000dead.pack"  # as a gc killed before its deletions
    copy.write_bytes(only.read_bytes())
    assert_every_version_reads_back(layout, trees)
    gc(tmp_path, keep=1)
    assert len(pack_files(layout)) == 1
    assert_every_version_reads_back(layout, trees)


def test_a_gc_that_cannot_write_its_pack_leaves_every_object_where_it_was(tmp_path, cli):
    layout, trees = store_with_versions(tmp_path, 3)
    loose, packs = set(Blobs(layout).loose()), pack_files(layout)  # the first version's objects: one pack
    res = cli("gc", "--keep", "1", "--store", str(tmp_path), env={"DREAM_DISK_FULL_AFTER": "0"})
    assert res.code == 2 and len(res.stderr.strip().splitlines()) == 1 and "disk full" in res.stderr
    assert set(Blobs(layout).loose()) == loose and pack_files(layout) == packs
    assert_every_version_reads_back(layout, trees)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "symlink"])
def test_a_damaged_pack_is_one_line_naming_it(tmp_path, cli, damage):
    layout, _ = store_with_versions(tmp_path, 2)
    gc(tmp_path, keep=1)
    (pack,) = packfiles.pack_paths(layout.packs)
    data = pack.read_bytes()
    if damage == "garbage":
        pack.write_bytes(b"x" * len(data))
    elif damage == "truncated":
        pack.write_bytes(data[:-20])
    else:
        target = tmp_path / "elsewhere.pack"
        target.write_bytes(data)
        pack.unlink()
        os.symlink(target, pack)
    res = cli("show", "1", "MEMORY.md", "--store", str(tmp_path))
    assert res.code == 2 and len(res.stderr.strip().splitlines()) == 1 and pack.name in res.stderr
    with pytest.raises(DamagedRecord):
        gc(tmp_path, keep=1)


def test_a_packs_folder_that_is_a_symlink_is_refused(tmp_path, cli):
    layout, _ = store_with_versions(tmp_path, 2)
    elsewhere = tmp_path.parent / f"{tmp_path.name}-packs"
    os.rename(layout.packs, elsewhere)  # with the pack the first version wrote
    os.symlink(elsewhere, layout.packs)
    before = sorted(elsewhere.iterdir())
    res = cli("gc", "--keep", "1", "--store", str(tmp_path))
    assert res.code == 2 and len(res.stderr.strip().splitlines()) == 1 and "symlink" in res.stderr
    assert sorted(elsewhere.iterdir()) == before


def test_pack_round_trip_keeps_each_object_once():
    data = packfiles.encode([("a" * 64, b"one"), ("b" * 64, b"two"), ("a" * 64, b"one again")])
    assert data.count(b"one") == 1


def many_topics(count: int) -> dict[str, bytes]:
    return {f"t{i:03d}.md": f"---\nname: t{i}\n---\n- fact {i}\n".encode() for i in range(count)}


def test_a_version_adding_many_objects_writes_one_pack_and_one_adding_a_few_loose_files(tmp_path, cli):
    (tmp_path / "MEMORY.md").write_text("")
    layout = Layout.open(tmp_path)
    layout.ensure()
    trees = {Versions(layout).record(many_topics(200), "snapshot").number: many_topics(200)}
    assert Blobs(layout).loose() == {} and len(pack_files(layout)) == 1  # 200 files and their tree: one file
    few = dict(many_topics(200), **{"t000.md": b"changed\n"})
    trees[Versions(layout).record(few, "snapshot").number] = few
    assert 0 < len(Blobs(layout).loose()) < packfiles.PACK_AT and len(pack_files(layout)) == 1
    assert_every_version_reads_back(layout, trees)
    res = cli("fsck", "--store", str(tmp_path))
    assert res.code == 0 and "whole: versions 1-2" in res.stdout, res.stdout + res.stderr


def test_a_damaged_byte_in_a_versions_pack_is_found_by_fsck(tmp_path, cli):
    (tmp_path / "MEMORY.md").write_text("")
    layout = Layout.open(tmp_path)
    layout.ensure()
    files = Versions(layout).record(many_topics(40), "snapshot").files
    (pack,) = packfiles.pack_paths(layout.packs)
    offset, _ = Blobs(layout).packed()[files["t007.md"]].index[files["t007.md"]]
    data = bytearray(pack.read_bytes())
    data[offset + 8] ^= 0xFF  # inside the object's deflate stream
    pack.write_bytes(bytes(data))
    res = cli("fsck", "--store", str(tmp_path))
    assert res.code == 2 and pack.name in res.stdout and "version 1: cannot read t007.md" in res.stdout, res.stdout
