"""Every JSON record under `.dream/` is read by the one bounded reader (`dream.store.records`).

A FIFO, a folder or a file past the record cap in place of the proposal's
review, the accept journal or the lint cache ends the command a user runs
(`dream accept`, `review`, `diff`, `rollback`, `lint`) with exit 2 and one
line naming the file; what stands there is left as it is, and the store's
memory files are not touched. Each command runs in a child process with a
timeout: that is the hang detector (a FIFO read with a plain open() waits
for a writer forever), not a timing assert.
"""

from __future__ import annotations

import gzip
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.cli import assert_one_line_error
from helpers.git_project import make_project, make_store

from dream.store.records import MAX_RECORD_BYTES
from dream.store.tree import read_tree

TIMEOUT = 60  # seconds: a hang fails here; each command takes about one


def _put(path: Path, kind: str) -> None:
    """Something dream never writes, in place of the record at `path`."""
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:  # oversized: sparse, so it costs no disk
        with open(path, "wb") as fh:
            fh.truncate(MAX_RECORD_BYTES + 1)


def _still_there(path: Path, kind: str) -> bool:
    mode = os.lstat(path).st_mode
    return {"fifo": stat.S_ISFIFO, "folder": stat.S_ISDIR}.get(kind, stat.S_ISREG)(mode)


# The FIFO (a hang before) runs by default; the folder and the oversized file also under -m slow.
KINDS = ["fifo", pytest.param("folder", marks=pytest.mark.slow), pytest.param("oversized", marks=pytest.mark.slow)]
WHAT = {"fifo": "is a FIFO", "folder": "is a folder", "oversized": f"is {MAX_RECORD_BYTES + 1:,} bytes, over dream's limit"}


@pytest.fixture
def proposed(demo_store, cli) -> Path:
    res = cli("run", "--store", str(demo_store), "--json")
    assert res.code == 0, res.stderr
    return demo_store


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("command", [["accept"], ["reject"], ["review"], ["diff"]], ids=" ".join)
def test_proposal_review_not_a_record_is_one_line_exit_2(proposed, cli, spawned_cli, kind, command):
    review = next((proposed / ".dream" / "proposals").glob("*/review.json.gz"))
    _put(review, kind)
    before = read_tree(proposed)
    res = spawned_cli(*command, "--store", str(proposed), timeout=TIMEOUT)
    assert_one_line_error(res, 2, "review.json.gz", "proposal review", WHAT[kind])
    assert read_tree(proposed) == before and _still_there(review, kind)
    status = cli("proposals", "--store", str(proposed), "--json")
    assert [p["status"] for p in status.json["proposals"]] == ["pending"], status.stdout


@pytest.mark.parametrize("damage,why", [  # mtime=0 and ids: xdist's workers must collect the same tests
    (b"not gzip at all", "not gzip"),
    (gzip.compress(b'{"diff": "x", "report": {}', mtime=0)[:-12], "cut short"),
    (gzip.compress(b'{"diff": 1, "report": {}}', mtime=0), "key diff"),
], ids=["not-gzip", "cut-short", "wrong-type"])
def test_damaged_proposal_review_names_what_is_wrong(proposed, cli, damage, why):
    review = next((proposed / ".dream" / "proposals").glob("*/review.json.gz"))
    review.write_bytes(damage)
    res = cli("accept", "--store", str(proposed))
    assert_one_line_error(res, 2, "review.json.gz", why)
    assert review.read_bytes() == damage


@pytest.fixture
def accepted(proposed, cli) -> Path:
    res = cli("accept", "--store", str(proposed))
    assert res.code == 0, res.stderr
    return proposed


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("command", [["accept"], ["rollback", "1"]], ids=" ".join)
def test_journal_not_a_record_blocks_with_one_line_exit_2(accepted, spawned_cli, kind, command):
    journal = accepted / ".dream" / "accept.journal.json"
    _put(journal, kind)
    before = read_tree(accepted)
    res = spawned_cli(*command, "--store", str(accepted), timeout=TIMEOUT)
    assert_one_line_error(res, 2, "accept.journal.json: an interrupted accept or rollback cannot be read",
                          "move that file aside")
    assert read_tree(accepted) == before and _still_there(journal, kind)


def test_journal_cut_short_was_never_committed_and_is_dropped(accepted, cli):
    journal = accepted / ".dream" / "accept.journal.json"
    journal.write_bytes(b'{"action": "rollback", "new_version": 3, "files": {"MEMORY.md": "ab')
    res = cli("rollback", "1", "--store", str(accepted))
    assert res.code == 0, res.stderr
    assert not journal.exists()


def test_journal_with_trailing_text_is_not_taken_for_cut_short(accepted, cli):
    """Whole JSON and then more is not what an interrupted atomic write leaves: kept for a person, not deleted."""
    journal = accepted / ".dream" / "accept.journal.json"
    journal.write_bytes(b'{"action": "accept"} and more')
    res = cli("accept", "--store", str(accepted))
    assert_one_line_error(res, 2, "accept.journal.json: an interrupted accept or rollback is not a journal")
    assert journal.read_bytes() == b'{"action": "accept"} and more'


@pytest.fixture
def linted(tmp_path) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    project = tmp_path / "project"
    make_project(project)
    return make_store(tmp_path / "store", project)


@pytest.mark.parametrize("kind", KINDS)
def test_lint_cache_not_a_record_is_one_line_exit_2(linted, spawned_cli, kind):
    cache = linted / ".dream" / "lint-cache.json"
    _put(cache, kind)
    res = spawned_cli("lint", "--store", str(linted), timeout=TIMEOUT)
    assert_one_line_error(res, 2, "lint-cache.json", "lint cache", WHAT[kind])
    assert _still_there(cache, kind)  # not dream's to replace


def test_lint_cache_of_damaged_json_is_checked_again_and_rewritten(linted, cli):
    cache = linted / ".dream" / "lint-cache.json"
    cache.write_bytes(b'{"key": 1, "memories": []}')
    first = cli("lint", "--store", str(linted), "--json")
    assert first.code in (0, 1) and first.json["cached"] == 0, first.stderr
    again = cli("lint", "--store", str(linted), "--json")
    assert again.json["cached"] == again.json["memories"] > 0


def test_fleet_tail_read_of_a_fifo_history_does_not_hang(proposed):
    """The fleet asks every due store for its last run's reason: a FIFO history is no answer, not a hang."""
    history = proposed / ".dream" / "history.jsonl"
    _put(history, "fifo")
    code = ("import sys; from pathlib import Path; from dream import history; from dream.store.layout import Layout;"
            "print(history.last_run_reason(Layout(Path(sys.argv[1]))))")
    res = subprocess.run([sys.executable, "-c", code, str(proposed)], capture_output=True, text=True,
                         timeout=TIMEOUT)
    assert res.returncode == 0 and res.stdout.strip() == "None", res.stderr
    assert _still_there(history, "fifo")
