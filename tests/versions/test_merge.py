"""The merge matrix: accepting a proposal onto a store that changed after it was made.

Each case builds a base version, a proposal and a live store, accepts, and
checks the files written; every conflict must leave the store's bytes as
they were and name the conflicting files.
"""

from __future__ import annotations

import time

import pytest

from dream.errors import BadInput, MergeConflict, Refused
from dream.review.decide import accept
from dream.store.layout import Layout
from dream.store.tree import read_tree
from dream.versions.manifests import Versions
from dream.store.merge import merge_file, merge_trees
from dream.versions.proposals import Proposal, Proposals, new_proposal_id

BODY = "".join(f"line {n}\n" for n in range(1, 11))


def topic(name: str, body: str = BODY) -> bytes:
    return f"---\nname: {name}\ndescription: {name} notes\ntype: project\n---\n\n{body}".encode()


def index(*names: str, extra: str = "") -> bytes:
    return ("# Memory\n\n" + "".join(f"- [{n}]({n}.md) — about {n}\n" for n in names) + extra).encode()


def edit(body: str, number: int, text: str) -> str:
    lines = body.splitlines(keepends=True)
    lines[number - 1] = text + "\n"
    return "".join(lines)


def make_store(tmp_path, base: dict[str, bytes], proposed: dict[str, bytes]) -> tuple[Layout, str]:
    """A store at version 1 = `base`, with one pending proposal of `proposed`."""
    root = tmp_path / "store"
    for rel, data in base.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    layout = Layout.open(root)
    layout.ensure()
    Versions(layout).record(base, "snapshot")
    proposals = Proposals(layout)
    changed = sorted(p for p in base.keys() | proposed.keys() if base.get(p) != proposed.get(p))
    proposal = Proposal(new_proposal_id(), time.time(), 1, "offline", "test", proposals.blobs.put_tree(proposed), changed)
    proposals.create(proposal, "", {"counts": {}, "changes": []})
    return layout, proposal.id


def set_live(layout: Layout, files: dict[str, bytes | None]) -> None:
    for rel, data in files.items():
        path = layout.root / rel
        if data is None:
            path.unlink()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)


def store_bytes(layout: Layout) -> dict[str, bytes]:
    return {str(p.relative_to(layout.root)): p.read_bytes() for p in layout.root.rglob("*")
            if p.is_file() and ".dream" not in p.parts}


def assert_conflict_untouched(layout: Layout, pid: str, expected_files: list[str]) -> MergeConflict:
    before = store_bytes(layout)
    with pytest.raises(MergeConflict) as info:
        accept(layout.root, pid)
    assert sorted(info.value.conflicts) == sorted(expected_files)
    assert store_bytes(layout) == before, "a conflict must not write anything"
    assert Proposals(layout).get(pid).status == "pending"
    for name in expected_files:
        assert name in str(info.value)
    return info.value


BASE = {"MEMORY.md": index("a", "b"), "a.md": topic("a"), "b.md": topic("b")}


# ---------------------------------------------------------------- one side only


def test_only_the_proposal_changed_a_file(tmp_path):
    proposed = {**BASE, "a.md": topic("a", edit(BODY, 3, "line 3, made absolute"))}
    layout, pid = make_store(tmp_path, BASE, proposed)
    decision = accept(layout.root, pid)
    assert read_tree(layout.root) == proposed
    assert decision.pre_accept_version is None and decision.combined == []


def test_only_the_store_changed_a_file_it_is_kept(tmp_path):
    proposed = {**BASE, "a.md": topic("a", edit(BODY, 3, "proposal edit"))}
    layout, pid = make_store(tmp_path, BASE, proposed)
    agent_b = topic("b", BODY + "written during the day\n")
    set_live(layout, {"b.md": agent_b})
    decision = accept(layout.root, pid)
    assert read_tree(layout.root) == {**proposed, "b.md": agent_b}
    # The store as found became a version of its own before the accept.
    assert decision.pre_accept_version == 2 and decision.version == 3
    assert Versions(layout).get(2).source == "pre-accept"
    assert Versions(layout).tree(2)["b.md"] == agent_b


def test_store_added_a_new_file_it_is_kept(tmp_path):
    proposed = {**BASE, "a.md": topic("a", edit(BODY, 3, "proposal edit"))}
    layout, pid = make_store(tmp_path, BASE, proposed)
    set_live(layout, {"c.md": topic("c")})
    accept(layout.root, pid)
    assert read_tree(layout.root) == {**proposed, "c.md": topic("c")}


# ---------------------------------------------------------------- both sides


def test_both_sides_without_overlap_are_combined(tmp_path):
    proposed = {**BASE, "a.md": topic("a", edit(BODY, 2, "line 2 from the proposal"))}
    layout, pid = make_store(tmp_path, BASE, proposed)
    set_live(layout, {"a.md": topic("a", edit(BODY, 9, "line 9 from the agent"))})
    decision = accept(layout.root, pid)
    expected = topic("a", edit(edit(BODY, 2, "line 2 from the proposal"), 9, "line 9 from the agent"))
    assert read_tree(layout.root)["a.md"] == expected
    assert decision.combined == ["a.md"]


def test_both_sides_overlapping_conflict_and_nothing_is_written(tmp_path):
    proposed = {**BASE, "a.md": topic("a", edit(BODY, 5, "proposal says five")),
                "b.md": topic("b", edit(BODY, 1, "b changed cleanly"))}
    layout, pid = make_store(tmp_path, BASE, proposed)
    set_live(layout, {"a.md": topic("a", edit(BODY, 5, "agent says five"))})
    conflict = assert_conflict_untouched(layout, pid, ["a.md"])
    hunk = conflict.conflicts["a.md"][0]
    assert "agent says five" in hunk and "proposal says five" in hunk and "base line 11" in hunk


def test_index_lines_added_by_the_agent_survive_the_proposals_index_edit(tmp_path):
    base = {**BASE, "MEMORY.md": index("a", "b", extra="\n## Notes\n\n- keep answers short\n")}
    proposed = {**base, "MEMORY.md": index("a", "b", extra="\n## Notes\n\n- keep answers short\n").replace(
        b"about a", b"all about a")}
    layout, pid = make_store(tmp_path, base, proposed)
    live_index = base["MEMORY.md"] + b"- [c](c.md) \xe2\x80\x94 new today\n"
    set_live(layout, {"MEMORY.md": live_index, "c.md": topic("c")})
    accept(layout.root, pid)
    text = (layout.root / "MEMORY.md").read_text()
    assert "all about a" in text and "- [c](c.md) — new today" in text


# ---------------------------------------------------------------- added on both sides


def test_added_on_both_sides_with_the_same_bytes_is_fine(tmp_path):
    proposed = {**BASE, "c.md": topic("c")}
    layout, pid = make_store(tmp_path, BASE, proposed)
    set_live(layout, {"c.md": topic("c")})
    accept(layout.root, pid)
    assert read_tree(layout.root) == proposed


def test_added_on_both_sides_with_different_bytes_conflicts(tmp_path):
    proposed = {**BASE, "c.md": topic("c", "from the proposal\n")}
    layout, pid = make_store(tmp_path, BASE, proposed)
    set_live(layout, {"c.md": topic("c", "from the agent\n")})
    conflict = assert_conflict_untouched(layout, pid, ["c.md"])
    assert "added on both sides" in conflict.conflicts["c.md"][0]


# ---------------------------------------------------------------- deleted on one side, edited on the other


def test_deleted_by_the_proposal_edited_in_the_store_conflicts(tmp_path):
    proposed = {"MEMORY.md": index("a"), "a.md": topic("a")}
    layout, pid = make_store(tmp_path, BASE, proposed)
    set_live(layout, {"b.md": topic("b", BODY + "the agent still needs this\n")})
    conflict = assert_conflict_untouched(layout, pid, ["b.md"])
    assert "deleted by the proposal" in conflict.conflicts["b.md"][0]


def test_deleted_in_the_store_edited_by_the_proposal_conflicts(tmp_path):
    proposed = {**BASE, "b.md": topic("b", edit(BODY, 4, "proposal edit"))}
    layout, pid = make_store(tmp_path, BASE, proposed)
    set_live(layout, {"b.md": None})
    conflict = assert_conflict_untouched(layout, pid, ["b.md"])
    assert "deleted in the store" in conflict.conflicts["b.md"][0]


def test_deleted_on_both_sides_is_fine(tmp_path):
    proposed = {"MEMORY.md": index("a"), "a.md": topic("a")}
    layout, pid = make_store(tmp_path, BASE, proposed)
    set_live(layout, {"b.md": None, "MEMORY.md": index("a")})
    accept(layout.root, pid)
    assert read_tree(layout.root) == proposed


# ---------------------------------------------------------------- renamed


RENAMED = {"MEMORY.md": index("a", "b").replace(b"(b.md)", b"(ops/b.md)"), "a.md": topic("a"), "ops/b.md": topic("b")}


def test_renamed_by_the_proposal_untouched_in_the_store(tmp_path):
    layout, pid = make_store(tmp_path, BASE, RENAMED)
    accept(layout.root, pid)
    assert read_tree(layout.root) == RENAMED


def test_renamed_by_the_proposal_edited_in_the_store_carries_the_edit(tmp_path):
    layout, pid = make_store(tmp_path, BASE, RENAMED)
    set_live(layout, {"b.md": topic("b", edit(BODY, 7, "line 7 edited by the agent"))})
    accept(layout.root, pid)
    tree = read_tree(layout.root)
    assert "b.md" not in tree
    assert tree["ops/b.md"] == topic("b", edit(BODY, 7, "line 7 edited by the agent"))


def test_renamed_and_edited_overlapping_conflicts(tmp_path):
    proposed = {**RENAMED, "ops/b.md": topic("b", edit(BODY, 7, "proposal's line 7"))}
    layout, pid = make_store(tmp_path, BASE, proposed)
    set_live(layout, {"b.md": topic("b", edit(BODY, 7, "agent's line 7"))})
    assert_conflict_untouched(layout, pid, ["ops/b.md"])


# ---------------------------------------------------------------- partial accept


def test_only_takes_the_named_files_and_merges(tmp_path):
    proposed = {**BASE, "a.md": topic("a", edit(BODY, 1, "A1")), "b.md": topic("b", edit(BODY, 1, "B1"))}
    layout, pid = make_store(tmp_path, BASE, proposed)
    decision = accept(layout.root, pid, only=["a.md"])
    assert read_tree(layout.root) == {**BASE, "a.md": proposed["a.md"]}
    assert decision.taken == ["a.md"] and decision.skipped == ["b.md"]
    assert Proposals(layout).get(pid).status == "accepted"


def test_except_leaves_the_named_files(tmp_path):
    proposed = {**BASE, "a.md": topic("a", edit(BODY, 1, "A1")), "b.md": topic("b", edit(BODY, 1, "B1"))}
    layout, pid = make_store(tmp_path, BASE, proposed)
    accept(layout.root, pid, except_=["a.md"])
    assert read_tree(layout.root) == {**BASE, "b.md": proposed["b.md"]}


def test_partial_accept_that_would_leave_a_dangling_pointer_is_refused(tmp_path):
    proposed = {"MEMORY.md": index("a"), "a.md": topic("a")}
    layout, pid = make_store(tmp_path, BASE, proposed)
    before = store_bytes(layout)
    with pytest.raises(Refused, match="MEMORY.md would still point to b.md"):
        accept(layout.root, pid, only=["b.md"])
    assert store_bytes(layout) == before


def test_partial_accept_is_checked_against_the_index_limits(tmp_path):
    names = [f"m{n}" for n in range(195)]
    base = {"MEMORY.md": index(*names), **{f"{n}.md": topic(n) for n in names}}
    # The proposal adds two memories: 199 index lines, within the limit of 200 ...
    proposed = {**base, "MEMORY.md": index(*names, "x", "y"), "x.md": topic("x"), "y.md": topic("y")}
    layout, pid = make_store(tmp_path, base, proposed)
    # ... but the agent added three lines meanwhile: merged, the index would have 202.
    set_live(layout, {"MEMORY.md": index("z1", "z2", "z3", *names)} | {f"z{i}.md": topic(f"z{i}") for i in (1, 2, 3)})
    before = store_bytes(layout)
    with pytest.raises(Refused, match="limit is 200"):
        accept(layout.root, pid, only=["MEMORY.md", "x.md", "y.md"])
    assert store_bytes(layout) == before


def test_unknown_file_in_only_is_bad_input(tmp_path):
    proposed = {**BASE, "a.md": topic("a", edit(BODY, 1, "A1"))}
    layout, pid = make_store(tmp_path, BASE, proposed)
    with pytest.raises(BadInput, match="'nope.md' is not among its changed files"):
        accept(layout.root, pid, only=["nope.md"])


# ---------------------------------------------------------------- the merge functions themselves


def test_merge_file_keeps_crlf_and_bytes_that_are_not_utf8():
    base = b"one\r\ntwo\r\nthree\r\n\xff\r\n"
    merged, hunks = merge_file(base, base.replace(b"one", b"ONE"), base.replace(b"three", b"THREE"))
    assert hunks == [] and merged == b"ONE\r\ntwo\r\nTHREE\r\n\xff\r\n"


def test_merge_trees_lists_every_conflicting_file():
    base = {"a.md": b"x\n", "b.md": b"y\n"}
    with pytest.raises(MergeConflict) as info:
        merge_trees(base, {"a.md": b"x1\n", "b.md": b"y1\n"}, {"a.md": b"x2\n", "b.md": b"y2\n"})
    assert sorted(info.value.conflicts) == ["a.md", "b.md"]


def test_cli_conflict_is_one_line_exit_1(tmp_path, cli):
    proposed = {**BASE, "a.md": topic("a", edit(BODY, 5, "proposal five"))}
    layout, pid = make_store(tmp_path, BASE, proposed)
    set_live(layout, {"a.md": topic("a", edit(BODY, 5, "agent five"))})
    res = cli("accept", pid, "--store", str(layout.root))
    assert res.code == 1
    assert len(res.stderr.strip().splitlines()) == 1
    assert "a.md" in res.stderr and "dream rebase" in res.stderr
