"""`dream review`, driven through its prompt in a real terminal (pexpect)."""

from __future__ import annotations

import sys

import pexpect
from helpers.cli import dismiss_open_notes, terminal_env

from dream.store.layout import Layout
from dream.store.tree import read_tree
from dream.versions.manifests import Versions
from dream.versions.proposals import Proposals

PROMPT = r"(?:add|delete|take this change to) \S+\? \[y\]es .*\[a\]ll remaining"  # one question per file


def spawn(store, *extra: str) -> pexpect.spawn:
    return pexpect.spawn(sys.executable, ["-m", "dream", "review", "--store", str(store), *extra], env={**terminal_env(), "PAGER": "cat"},
                         encoding="utf-8", timeout=60, dimensions=(50, 200))


def test_take_some_files_skip_others(demo_store, cli):
    pid = cli("run", "--store", str(demo_store), "--json").json["proposal_id"]
    dismiss_open_notes(demo_store, cli)
    layout = Layout.open(demo_store)
    proposal = Proposals(layout).get(pid)
    base, new = Versions(layout).tree(1), Proposals(layout).tree(proposal)
    wanted = {"project_database.md", "project_rounding_rule.md"}

    child = spawn(demo_store)
    shown = []
    for n, path in enumerate(proposal.changed, 1):
        child.expect(rf"{n}/{len(proposal.changed)}\s+([^\s\x1b]+)")
        shown.append(child.match.group(1))
        assert shown[-1] == path
        child.expect(PROMPT)
        if path == "project_database.md":
            assert "\x1b[" in child.before, "the diff is shown in colour"
        child.sendline("y" if path in wanted else "n")
    child.expect(r"summary.*take 2 file\(s\), skip (\d+)")
    assert int(child.match.group(1)) == len(proposal.changed) - 2
    child.expect(r"write 2 file\(s\) into the store now\?")
    assert read_tree(demo_store) == base, "nothing is written before the summary is confirmed"
    child.sendline("y")
    child.expect(r"accepted; the store is now version 2")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0

    expected = {**base, **{p: new[p] for p in wanted}}
    assert read_tree(demo_store) == expected
    assert Proposals(layout).get(pid).status == "accepted"


def test_declining_the_summary_writes_nothing(demo_store, cli):
    pid = cli("run", "--store", str(demo_store), "--json").json["proposal_id"]
    dismiss_open_notes(demo_store, cli)
    before = read_tree(demo_store)
    child = spawn(demo_store)
    child.expect(PROMPT)
    child.sendline("a")  # take this file and all the rest
    child.expect(r"write \d+ file\(s\) into the store now\?")
    child.sendline("n")
    child.expect("nothing written; the proposal stays pending")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert read_tree(demo_store) == before
    assert Proposals(Layout.open(demo_store)).get(pid).status == "pending"


def test_bad_answers_are_asked_again_and_quit_skips_the_rest(demo_store, cli):
    cli("run", "--store", str(demo_store), "--json")
    dismiss_open_notes(demo_store, cli)
    before = read_tree(demo_store)
    child = spawn(demo_store, "--json")
    child.expect(PROMPT)
    child.sendline("x")  # on a terminal each key is an answer: an unknown one is asked again
    child.expect("please answer one of: y, n, a, q")
    child.sendline("q")
    child.expect(r"nothing to write: \[e\]dit the selection or \[q\]uit")
    child.sendline("q")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert '"status": "pending"' in child.before
    assert read_tree(demo_store) == before


def test_a_partial_review_that_would_break_the_index_is_stopped_when_chosen(demo_store, cli):
    """Taking the forgotten file's deletion without MEMORY.md would leave a dangling pointer: asked at once."""
    pid = cli("run", "--store", str(demo_store), "--json").json["proposal_id"]
    dismiss_open_notes(demo_store, cli)
    proposal = Proposals(Layout.open(demo_store)).get(pid)
    before = read_tree(demo_store)
    child = spawn(demo_store)
    for path in proposal.changed[:proposal.changed.index("reference_jenkins.md") + 1]:
        child.expect(PROMPT)
        child.sendline("y" if path == "reference_jenkins.md" else "n")
    child.expect(r"taking reference_jenkins\.md needs \d+ file\(s\) you skipped, or the index would break")
    child.expect(r"too, so that reference_jenkins\.md can be taken\? \[y\]es take them all \[n\]o leave")
    child.sendline("n")  # then reference_jenkins.md stays skipped too
    for _ in proposal.changed[proposal.changed.index("reference_jenkins.md") + 1:]:
        child.expect(PROMPT)
        child.sendline("n")
    child.expect(r"summary.*take 0 file\(s\)")
    child.expect(r"nothing to write: \[e\]dit the selection or \[q\]uit")
    child.sendline("q")
    child.expect("nothing written; the proposal stays pending")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert read_tree(demo_store) == before
