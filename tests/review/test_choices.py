"""Which files of a proposal go together, and a reviewer's choices kept consistent with that."""

from __future__ import annotations

from dream.review.choices import Choices, needs

BASE = {
    "MEMORY.md": b"- [Old](old.md) \xe2\x80\x94 gone soon\n- [Keep](keep.md) \xe2\x80\x94 stays\n",
    "old.md": b"old\n", "keep.md": b"keep\n",
}
NEW = {
    "MEMORY.md": b"- [Keep](keep.md) \xe2\x80\x94 stays\n- [Fresh](fresh.md) \xe2\x80\x94 new\n",
    "keep.md": b"keep, edited\n", "fresh.md": b"fresh\n",
}
CHANGED = ["MEMORY.md", "fresh.md", "keep.md", "old.md"]


def test_the_new_index_needs_the_files_it_adds_and_a_deletion_needs_the_new_index() -> None:
    assert needs(BASE, NEW, CHANGED) == {"MEMORY.md": {"fresh.md"}, "fresh.md": set(), "keep.md": set(),
                                         "old.md": {"MEMORY.md"}}
    assert needs(BASE, NEW, ["keep.md"]) == {"keep.md": set()}  # without the index, nothing is linked


def test_taking_brings_what_is_needed_and_skipping_takes_back_only_what_came_along() -> None:
    choices = Choices(CHANGED, needs(BASE, NEW, CHANGED))
    choices.skip("fresh.md")
    assert choices.conflicts("old.md") == {"fresh.md"}  # a review asks before lifting that skip
    choices.take("old.md")
    assert choices.in_order() == ["MEMORY.md", "fresh.md", "old.md"] and not choices.refused
    choices.take("keep.md")

    assert choices.needed_by("fresh.md") == {"old.md"}
    choices.skip("fresh.md")
    assert choices.in_order() == ["keep.md"]  # MEMORY.md came along with old.md, and left with it
    assert choices.refused == {"fresh.md", "old.md"}
