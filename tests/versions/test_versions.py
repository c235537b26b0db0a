"""The version store: content-addressed blobs, numbered immutable manifests."""

from __future__ import annotations

from dream.store.layout import Layout
from dream.versions.manifests import Versions


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
    assert len(blobs) == 4  # two indexes, a.md once, b.md
    assert v.tree(1) == {"MEMORY.md": b"- a\n", "a.md": b"same\n"}


def test_record_with_number_is_idempotent(tmp_path):
    (tmp_path / "MEMORY.md").write_text("")
    layout = Layout.open(tmp_path)
    v = Versions(layout)
    first = v.record({"x.md": b"1"}, "accept", number=1)
    again = v.record({"x.md": b"2"}, "accept", number=1)
    assert again.files == first.files
    assert v.tree(1) == {"x.md": b"1"}
