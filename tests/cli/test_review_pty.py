"""`dream review` in a real terminal (a pty, through pexpect): one key per answer, choices that
would break the index explained when they are made, and no choice lost when the end refuses."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pexpect
from helpers.cli import dismiss_open_notes, terminal_env

from dream.store.layout import Layout
from dream.store.tree import read_tree
from dream.versions.manifests import Versions
from dream.versions.proposals import Proposals

# Each question says what yes does: add, delete or take the change to the file it names.
TAKE = r"(?:add|delete|take this change to) \S+\? \[y\]es .*\(one key\) "
NEEDED = r"add \S+\? \[y\]es \[n\]o \(leaves out reference_jenkins\.md too\) .*\(one key\) "


def spawn(store: Path, pager: str = "cat", rows: int = 50) -> pexpect.spawn:
    return pexpect.spawn(sys.executable, ["-m", "dream", "review", "--store", str(store)],
                         env={**terminal_env(), "PAGER": pager}, encoding="utf-8", timeout=60, dimensions=(rows, 200))


def dreamed(store: Path, cli) -> tuple[str, list[str]]:
    """A dream of the demo, its open notes for a person dismissed: these tests answer the files' questions,
    which `dream review` asks after a note's suggestion (tests/cli/test_notes.py answers those)."""
    pid = cli("run", "--store", str(store), "--engine", "offline", "--json").json["proposal_id"]
    dismiss_open_notes(store, cli)
    return pid, Proposals(Layout.open(store)).get(pid).changed


def test_a_choice_that_breaks_the_index_is_explained_at_once(demo_store: Path, cli) -> None:
    pid, changed = dreamed(demo_store, cli)
    layout = Layout.open(demo_store)
    base, new = Versions(layout).tree(1), Proposals(layout).tree(Proposals(layout).get(pid))
    child = spawn(demo_store)
    for path in changed[:changed.index("reference_jenkins.md")]:
        child.expect(TAKE)
        child.send("y" if path == "project_database.md" else "n")  # one key, no Enter

    # Taking the deletion of reference_jenkins.md needs the new index, which was skipped: said at once.
    child.expect(r"goes together with (\d+) file\(s\); yes takes them too:")
    needed = int(child.match.group(1))
    child.expect(r"MEMORY\.md: reference_jenkins\.md is deleted, and only the new MEMORY\.md stops pointing to it")
    child.expect(r"delete reference_jenkins\.md\? \[y\]es \[n\]o keep it, with its index line .*\(one key\) ")
    child.send("y")
    child.expect(r"taking reference_jenkins\.md needs (\d+) file\(s\) you skipped, or the index would break:")
    assert 0 < int(child.match.group(1)) < needed  # the ones answered "n" so far, not those still to come
    child.expect(r"MEMORY\.md: reference_jenkins\.md is deleted, and only the new MEMORY\.md stops pointing to it")
    child.expect(r"take the \d+ files above too, so that reference_jenkins\.md can be taken\? \[y\]es take them all "
                 r"\[n\]o leave reference_jenkins\.md out")
    child.send("y")

    # Skipping a file the new index points to would break it again: said at once; keep the file.
    child.expect(r"goes together with reference_jenkins\.md, which you took:")
    child.expect(r"the new MEMORY\.md points to \S+, which only this proposal adds")
    child.expect(NEEDED)
    child.send("n")
    added = re.escape(changed[changed.index("reference_jenkins.md") + 1])  # a memory this proposal adds
    child.expect(rf"skipping {added} breaks the index unless reference_jenkins\.md is skipped")
    child.expect(rf"the new MEMORY\.md points to {added}, which only this proposal adds")
    child.expect(rf"leave out reference_jenkins\.md too\? \[y\]es leave them all out \[n\]o take {added} after all")
    child.send("n")
    child.expect(TAKE)  # webhook_retries.md
    child.send("n")

    child.expect(r"summary.*take (\d+) file\(s\), skip (\d+)")
    taken = int(child.match.group(1))
    assert taken == needed + 2  # the index's files, reference_jenkins.md and project_database.md
    child.expect(rf"write {taken} file\(s\) into the store now\? \[y\]es \[n\]o \[e\]dit")
    assert read_tree(demo_store) == base, "nothing is written before the summary is confirmed"
    child.send("y")
    child.expect(r"accepted; the store is now version 2")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before

    after = read_tree(demo_store)
    assert after["project_database.md"] == new["project_database.md"]
    assert "reference_jenkins.md" not in after
    assert after["feedback_small_prs.md"] == base["feedback_small_prs.md"]  # skipped, and it stayed skipped
    # Merged duplicates whose deletion was skipped (webhook_retries.md, feedback_test_before_push.md)
    # stay, and each kept its index line in the new index: no orphan.
    skipped = [path for path in changed if path in base and path not in new and path != "reference_jenkins.md"]
    assert "webhook_retries.md" in skipped
    pointers = []
    for path in skipped:
        assert after[path] == base[path]
        pointers += [line for line in base["MEMORY.md"].splitlines() if f"]({path})".encode() in line]
    assert len(pointers) == len(skipped)
    assert sorted(after["MEMORY.md"].splitlines()) == sorted(new["MEMORY.md"].splitlines() + pointers)


def test_a_selection_refused_at_the_end_is_edited_not_lost(demo_store: Path, cli) -> None:
    """The live store changed under the proposal: taking project_database.md conflicts; the rest is kept."""
    pid, changed = dreamed(demo_store, cli)
    layout = Layout.open(demo_store)
    new = Proposals(layout).tree(Proposals(layout).get(pid))
    live = demo_store / "project_database.md"
    rewritten = set(live.read_bytes().splitlines()) - set(new["project_database.md"].splitlines())
    assert rewritten  # the agent edits today the very lines the proposal rewrites: a conflict
    live.write_bytes(b"\n".join(line + b" (edited today)" if line in rewritten else line
                                for line in live.read_bytes().splitlines()) + b"\n")
    wanted = ["project_database.md", "project_rounding_rule.md", "feedback_small_prs.md"]
    child = spawn(demo_store)
    for path in changed:
        child.expect(TAKE)
        child.send("y" if path in wanted else "n")

    child.expect(r"summary.*take 3 file\(s\)")
    child.expect(r"this selection cannot be written:.*project_database\.md")
    child.expect(r"\[e\]dit the selection or \[q\]uit")
    child.send("e")
    child.expect(r"number of a file to switch between take and skip")
    child.sendline(str(changed.index("project_database.md") + 1))
    child.expect(r"skip project_database\.md")
    child.sendline("")
    child.expect(r"summary.*take 2 file\(s\)")
    child.expect(r"write 2 file\(s\) into the store now\?")
    child.send("y")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before

    after = read_tree(demo_store)
    assert after["project_rounding_rule.md"] == new["project_rounding_rule.md"]  # the other choices survived
    assert after["feedback_small_prs.md"] == new["feedback_small_prs.md"]
    assert b"(edited today)" in after["project_database.md"]


def test_from_a_pipe_each_answer_is_one_letter_on_its_line(demo_store: Path, cli) -> None:
    pid, changed = dreamed(demo_store, cli)
    result = cli("review", "--store", str(demo_store), input="ynnq\n" + "n\n" * len(changed) + "q\n")
    assert result.code == 0, result.stderr
    assert "(a letter, then Enter)" in result.stdout
    assert result.stdout.count("please answer one of: y, n, a, q") == 1  # ynnq is not read as y
    assert "nothing written; the proposal stays pending" in result.stdout
    assert Proposals(Layout.open(demo_store)).get(pid).status == "pending"


def test_skip_a_deletion_take_the_index_and_the_index_keeps_its_line(demo_store: Path, cli, tmp_path: Path) -> None:
    """The transcript of #26: skipping the deletion of reference_jenkins.md while taking MEMORY.md leaves no orphan."""
    pid, changed = dreamed(demo_store, cli)
    layout = Layout.open(demo_store)
    base, new = Versions(layout).tree(1), Proposals(layout).tree(Proposals(layout).get(pid))
    pointer = next(line for line in base["MEMORY.md"].decode().splitlines() if "](reference_jenkins.md)" in line)
    assert pointer not in new["MEMORY.md"].decode(), "the proposal's index drops the line"
    child = spawn(demo_store)
    child.logfile_read = transcript = (tmp_path / "review-transcript.txt").open("w", encoding="utf-8")
    for path in changed:
        if path == "reference_jenkins.md":
            child.expect(r"delete reference_jenkins\.md\? \[y\]es \[n\]o keep it, with its index line .*\(one key\) ")
            child.send("n")
            child.expect(r"reference_jenkins\.md stays, and so does its line in MEMORY\.md")
        else:
            child.expect(TAKE)
            child.send("y")
    child.expect(r"summary.*take (\d+) file\(s\), skip 1")
    assert int(child.match.group(1)) == len(changed) - 1
    child.expect(r"write \d+ file\(s\) into the store now\?")
    child.send("y")
    child.expect(r"accepted; the store is now version 2")
    child.expect(pexpect.EOF)
    child.close()
    transcript.close()
    assert child.exitstatus == 0, child.before

    after = read_tree(demo_store)
    assert after["reference_jenkins.md"] == base["reference_jenkins.md"]  # the deletion was skipped
    index = after["MEMORY.md"].decode().splitlines()
    assert pointer in index, "the skipped deletion's file keeps its index line: no orphan"
    assert [line for line in index if line != pointer] == new["MEMORY.md"].decode().splitlines()
    assert index.index(pointer) > 0 and index[index.index(pointer) - 1] in base["MEMORY.md"].decode().splitlines()
    assert "reference_jenkins.md stays" in (tmp_path / "review-transcript.txt").read_text(encoding="utf-8")


def test_a_long_diff_goes_through_the_pager_a_short_one_does_not(demo_store: Path, cli, tmp_path: Path) -> None:
    dreamed(demo_store, cli)
    paged = tmp_path / "paged.txt"
    child = spawn(demo_store, pager=f"tee -a {paged}", rows=30)  # $PAGER: a shell command, as git reads it
    child.expect(TAKE)  # MEMORY.md: its 37-line diff is taller than the 30-line terminal
    child.send("q")
    child.expect(r"nothing to write: \[e\]dit the selection or \[q\]uit")
    child.send("q")
    child.expect(pexpect.EOF)
    child.close()
    shown = paged.read_text(encoding="utf-8")
    assert "+++ b/MEMORY.md" in shown and "\x1b[" in shown, "paged in colour"

    paged.unlink()
    child = spawn(demo_store, pager=f"tee -a {paged}", rows=30)
    child.expect(TAKE)
    child.send("n")  # MEMORY.md skipped, paged again
    child.expect(r"add feedback_always_add_regression_test\.md\?")  # a short diff: printed, not paged
    child.send("q")
    child.expect(r"\[q\]uit")
    child.send("q")
    child.expect(pexpect.EOF)
    child.close()
    assert "+++ b/MEMORY.md" in paged.read_text(encoding="utf-8")
    assert "+++ b/feedback_always_add_regression_test.md" not in paged.read_text(encoding="utf-8")


def test_no_pager_when_the_review_is_not_on_a_terminal(demo_store: Path, cli, tmp_path: Path) -> None:
    dreamed(demo_store, cli)
    marker = tmp_path / "pager-ran"
    result = cli("review", "--store", str(demo_store), input="q\nq\n", env={"PAGER": f"touch {marker}"})
    assert result.code == 0 and "+++ b/MEMORY.md" in result.stdout
    assert not marker.exists()
