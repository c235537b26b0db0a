"""Every object read checks its hash: a damaged stored copy is an error naming it (exit 2), never content;
`dream fsck` finds it, and versions that do not need it still work."""

from __future__ import annotations

import pytest

from dream.store.layout import Layout
from dream.store.tree import read_tree
from dream.versions.gc import gc
from dream.versions.manifests import Blobs, Versions

V1 = {"MEMORY.md": b"- [Deploys](deploys.md)\n", "deploys.md": b"---\nname: deploys\n---\nWe ship on Tuesdays.\n"}
V2 = {**V1, "MEMORY.md": V1["MEMORY.md"] + b"- [Pager](pager.md)\n",
      "pager.md": b"---\nname: pager\n---\nThe on-call rota lives in the ops wiki, page 'rota-2026'.\n"}


def _damage(path, how: str, other: bytes) -> None:
    data = path.read_bytes()
    path.write_bytes({"truncated": b"", "first bytes changed": b"XXXX" + data[4:], "wrong hash": other}[how])


@pytest.fixture
def store(tmp_path, cli):
    """Versions 1 (no pager.md) and 2 (pager.md added), then a rollback to 1 as version 3."""
    root = tmp_path / "store"
    root.mkdir()
    for rel, data in V2.items():
        (root / rel).write_bytes(data)
    layout = Layout.open(root)
    layout.ensure()
    versions = Versions(layout)
    versions.record(V1, "snapshot")
    versions.record(V2, "snapshot")
    assert cli("rollback", "1", "--store", str(root)).code == 0
    assert read_tree(root) == V1
    return root


@pytest.mark.parametrize("how, packed", [("truncated", False), ("first bytes changed", False),
                                         ("wrong hash", False), ("first bytes changed", True)])
def test_a_damaged_object_fails_show_rollback_and_restore_naming_it(store, cli, how, packed):
    layout = Layout.open(store)
    digest = Versions(layout).get(2).files["pager.md"]
    other = Blobs(layout).stored(Versions(layout).get(1).files["deploys.md"])
    if packed:
        gc(store, keep=1)  # every version is recent, so all stay; their objects move into a pack
        (pack,) = layout.packs.iterdir()
        view = Blobs(layout).packed()[digest]
        offset, length = view.index[digest]
        data = bytearray(pack.read_bytes())
        data[offset:offset + 4] = b"XXXX"  # inside the pack: the object's first bytes
        pack.write_bytes(bytes(data))
        named = pack.name
    else:
        _damage(Blobs(layout).path(digest), how, other)
        named = digest[2:]
    found = read_tree(store)

    for args in (["show", "2", "pager.md"], ["rollback", "2"], ["restore", "pager.md"]):
        res = cli(*args, "--store", str(store))
        assert res.code == 2, (args, res.stdout, res.stderr)
        assert len(res.stderr.strip().splitlines()) == 1 and named in res.stderr, res.stderr
        assert "damaged object" in res.stderr
        assert res.stdout == "" or args[0] != "show"  # no garbage printed
    assert read_tree(store) == found  # nothing written

    assert cli("show", "1", "deploys.md", "--store", str(store)).stdout.encode() == V1["deploys.md"]
    fsck = cli("fsck", "--store", str(store))
    assert fsck.code == 2 and len(fsck.stderr.strip().splitlines()) == 1
    damaged = [line for line in fsck.stdout.splitlines() if line.startswith("damaged:")]
    assert len(damaged) == 1 and named in damaged[0] and "version 2 (pager.md)" in damaged[0], fsck.stdout
    assert "whole: versions 1, 3" in fsck.stdout
    assert "version 2: cannot read pager.md" in fsck.stdout
    report = cli("fsck", "--json", "--store", str(store)).json
    assert report["ok"] is False and report["whole"]["versions"] == ["1", "3"]
    assert report["unreadable_files"]["versions"] == {"2": ["pager.md"]}


def test_fsck_of_a_whole_store_says_so(store, cli):
    res = cli("fsck", "--store", str(store))
    assert res.code == 0, res.stderr
    assert "whole: versions 1-3" in res.stdout and "damaged" not in res.stdout
