"""Limits and formats: index limits are errors, untouched files only warn."""

from __future__ import annotations

from dream.store.validate import errors, validate_tree

GOOD = b"---\nname: a\ndescription: d\ntype: user\n---\nbody\n"


def rules(findings, severity=None):
    return sorted((f.rule, f.path) for f in findings if severity in (None, f.severity))


def test_clean_tree_has_no_findings():
    assert validate_tree({"MEMORY.md": b"- [A](a.md) \xe2\x80\x94 hook\n", "a.md": GOOD}) == []


def test_index_limits_are_always_errors():
    many = b"".join(b"- rule %d\n" % i for i in range(201))
    assert rules(validate_tree({"MEMORY.md": many}), "error") == [("index-lines", "MEMORY.md")]
    big = (b"- " + b"x" * 140 + b"\n") * 180
    assert ("index-bytes", "MEMORY.md") in rules(validate_tree({"MEMORY.md": big}), "error")


def test_line_length_counts_characters_not_bytes():
    cjk_150 = ("- " + "中" * 148).encode()  # 150 characters, 446 bytes
    assert validate_tree({"MEMORY.md": cjk_150}) == []
    cjk_151 = ("- " + "中" * 149).encode()
    found = validate_tree({"MEMORY.md": cjk_151})
    assert [(f.rule, f.severity, f.message) for f in found] == [
        ("line-length", "error", "line 1 has 151 characters, the limit is 150")]


def test_format_problems_are_errors_only_in_changed_files():
    tree = {"a.md": b"---\nname: a\ndescription: d\ntype: infrastructure\n---\n", "b.md": b"# no fm\n"}
    assert errors(validate_tree(tree)) == []
    assert rules(validate_tree(tree), "warning") == [("frontmatter", "a.md"), ("frontmatter", "b.md")]
    assert rules(validate_tree(tree, changed={"b.md"}), "error") == [("frontmatter", "b.md")]


def test_broken_pointer_is_error_only_on_a_changed_line():
    base = {"MEMORY.md": b"- [Old](gone.md)\n"}
    same = {"MEMORY.md": b"- [Old](gone.md)\n- [A](a.md)\n", "a.md": GOOD}
    assert errors(validate_tree(same, {"MEMORY.md", "a.md"}, base=base)) == []
    new_broken = {"MEMORY.md": b"- [Old](gone.md)\n- [New](missing.md)\n"}
    found = errors(validate_tree(new_broken, {"MEMORY.md"}, base=base))
    assert [f.message for f in found] == ["line 2 points to missing file missing.md"]
    # Without the base we cannot tell old from new lines: only a warning.
    assert errors(validate_tree(new_broken, {"MEMORY.md"})) == []


def test_external_links_are_not_broken_pointers():
    assert validate_tree({"MEMORY.md": b"- [T](../../TASKS.md)\n- [W](https://x.org/a.md)\n"}) == []


def test_invalid_utf8_is_reported():
    found = validate_tree({"x.md": b"\xff"}, changed={"x.md"})
    assert [(f.rule, f.severity) for f in found] == [("encoding", "error")]
