"""The store model reads any store and writes untouched files back byte for byte."""

from __future__ import annotations

from datetime import date

from dream.store.model import (
    Store,
    TextFile,
    parse_index_line,
    resolve_link,
    yaml_scalar,
)
from dream.store.tree import read_tree


def test_index_line_kinds():
    link = parse_index_line("- [Title](file.md) — the hook")
    assert (link.kind, link.title, link.target, link.hook) == ("link", "Title", "file.md", "the hook")
    assert parse_index_line("* [T](a.md): hook").hook == "hook"
    assert parse_index_line("- [T](a.md) – hook").hook == "hook"
    assert parse_index_line("- [T](a.md) - hook").hook == "hook"
    assert parse_index_line("- **[T](a.md)** — hook").target == "a.md"
    assert parse_index_line("- [T](a.md)").hook == ""
    wiki = parse_index_line("- [[user_profile]] — who")
    assert (wiki.kind, wiki.target, wiki.hook) == ("wikilink", "user_profile", "who")
    assert parse_index_line("- Always run `uv run`.").kind == "rule"
    assert parse_index_line("## Feedback").kind == "heading"
    assert parse_index_line("   ").kind == "blank"
    prose = parse_index_line("See [the plan](plan.md) first.")
    assert (prose.kind, prose.links) == ("prose", ("plan.md",))


def test_link_resolution_is_relative_and_external_links_are_none():
    assert resolve_link("MEMORY.md", "a/b.md") == "a/b.md"
    assert resolve_link("MEMORY.md", "./a.md#part") == "a.md"
    assert resolve_link("MEMORY.md", "my%20file.md") == "my file.md"
    assert resolve_link("team/MEMORY.md", "x.md") == "team/x.md"
    assert resolve_link("MEMORY.md", "../../TASKS.md") is None
    assert resolve_link("MEMORY.md", "https://example.com/a.md") is None
    assert resolve_link("MEMORY.md", "/etc/passwd") is None


def test_flat_and_nested_frontmatter_fields():
    flat = b"---\nname: a\ndescription: d\ntype: user\ncreated: 2026-01-02\n---\nbody\n"
    nested = b"---\nname: b\ndescription: e\nmetadata:\n  node_type: memory\n  type: feedback\n  updated: 2026-02-03\n---\n\nbody\n"
    store = Store.from_tree({"a.md": flat, "b.md": nested})
    a, b = store.topics["a.md"], store.topics["b.md"]
    assert (a.name, a.description, a.type, a.source_dates()) == ("a", "d", "user", {"created": date(2026, 1, 2)})
    assert (b.name, b.type, b.source_dates()) == ("b", "feedback", {"updated": date(2026, 2, 3)})
    assert a.format_problems == [] and b.format_problems == []


def test_malformed_frontmatter_is_a_finding_not_a_crash():
    data = b"---\nname: [unclosed\ndescription: x: y: z\ntype: user\n---\nbody\n"
    topic = Store.from_tree({"bad.md": data}).topics["bad.md"]
    assert topic.frontmatter.error.startswith("malformed frontmatter")
    assert topic.type == "user"  # recovered by the forgiving reader
    assert topic.format_problems == [topic.frontmatter.error]


def test_missing_frontmatter_and_unclosed_frontmatter():
    store = Store.from_tree({"a.md": b"# Heading\ntext", "b.md": b"---\nname: x\n"})
    assert store.topics["a.md"].format_problems == ["no frontmatter"]
    assert store.topics["a.md"].title == "Heading"
    assert "no closing" in store.topics["b.md"].format_problems[0]


def test_round_trip_keeps_exact_bytes_of_odd_files():
    tree = {
        "MEMORY.md": b"\xef\xbb\xbf- [A](a.md) \xe2\x80\x94 hook\r\n- [B](b.md)",
        "a.md": b"---\r\nname: a\r\n---\r\nmixed\nendings\r\n",
        "b.md": b"no newline at end",
        "c.md": b"\xff\xfe not utf-8",
        "d.md": b"",
        "e.md": b"\n\n",
    }
    store = Store.from_tree(tree)
    assert store.unparseable == {"c.md": "UTF-16 text, not UTF-8"}  # its first bytes are a UTF-16 mark
    assert store.to_tree() == tree


def test_edit_keeps_style_crlf_bom_and_key_order():
    tree = {"a.md": b"\xef\xbb\xbf---\r\nz: 1\r\nname: a\r\ndescription: d\r\ntype: user\r\n---\r\nline\r\n"}
    store = Store.from_tree(tree)
    store.topics["a.md"].append_body(["added"])
    assert store.to_tree()["a.md"] == (
        b"\xef\xbb\xbf---\r\nz: 1\r\nname: a\r\ndescription: d\r\ntype: user\r\n---\r\nline\r\n\r\nadded\r\n")


def test_removed_and_created_files():
    store = Store.from_tree({"a.md": b"x\n", "MEMORY.md": b"- [A](a.md)\n"})
    store.remove("a.md")
    assert store.free_path("a") == "a-2.md"  # a removed name is not reused in the same run
    store.add_topic("n.md", TextFile(["hi"]))
    assert store.to_tree() == {"MEMORY.md": b"- [A](a.md)\n", "n.md": b"hi\n"}


def test_yaml_scalar_quotes_only_when_needed():
    assert yaml_scalar("plain words") == "plain words"
    assert yaml_scalar("key: value") == '"key: value"'
    assert yaml_scalar("yes") == '"yes"'
    assert yaml_scalar('- "x"') == '"- \\"x\\""'


# ------------------------------------------------------------------ the format of .dream/


def test_the_store_records_its_format_and_a_newer_one_is_refused(demo_store, cli):
    from dream.store.layout import FORMAT_VERSION

    assert cli("run", "--store", str(demo_store)).code == 0
    marker = demo_store / ".dream" / "format"
    assert marker.read_text() == f"{FORMAT_VERSION}\n"
    found = read_tree(demo_store)
    for text, why in [(f"{FORMAT_VERSION + 1}\n", "newer than this dream reads"),
                      ("two\n", "should hold the store's format number")]:
        marker.write_text(text)
        for args in (["status"], ["show", "1"], ["run", "--force"], ["rollback", "1"], ["fsck"]):
            res = cli(*args, "--store", str(demo_store))
            assert res.code == 2, (args, res.stderr)
            assert res.stderr.strip().splitlines() == [res.stderr.strip()] and str(marker) in res.stderr
            assert why in res.stderr
    assert read_tree(demo_store) == found  # nothing written


def test_a_store_made_before_formats_gets_its_format_at_the_next_write(demo_store, cli):
    assert cli("run", "--store", str(demo_store)).code == 0
    marker = demo_store / ".dream" / "format"
    marker.unlink()
    assert cli("status", "--store", str(demo_store)).code == 0  # read as format 1
    assert cli("rollback", "1", "--store", str(demo_store)).code == 0
    assert marker.read_text() == "1\n"
