"""Kill `dream accept` / `dream rollback` at every crash point: the store ends exactly at the base or the new
version, edits made before the replay are never lost, and a journal that cannot be replayed does not wedge
the store."""

from __future__ import annotations

import json
import os
import signal

import pytest

from dream import history
from dream.store.layout import Layout
from dream.store.tree import read_tree
from dream.versions.manifests import Blobs, Versions
from dream.versions.proposals import Proposals

pytestmark = pytest.mark.slow  # one killed child process per test, 35 tests

# (crash point suffix, the state the store must be in once the next command has run)
POINTS = [
    ("before-journal", "base"),
    ("after-journal", "new"),
    ("after-first-write", "new"),
    ("after-apply", "new"),
    ("after-version", "new"),
]
NEXT_COMMANDS = {
    "status": ["status", "--json"],
    "run": ["run", "--force", "--engine", "offline", "--json"],
    "reject": ["reject"],
    "gc": ["gc", "--keep", "50"],
}


@pytest.fixture
def cli(cli, spawned_cli):
    """A crash point SIGKILLs the process that reaches it, so that command runs in a child process.

    Every other command (the run before it, the recovery after it) runs in
    this process: recovery reads only what the killed process left on disk.
    """

    def drive(*args, env=None, **kwargs):
        killed = env is not None and "DREAM_CRASHPOINT" in env
        return (spawned_cli if killed else cli)(*args, env=env, **kwargs)

    return drive


def _crashed_accept(demo_store, cli, point: str):
    """A pending proposal whose accept was killed at `accept-<point>`; returns (pid, base tree, new tree)."""
    pid = cli("run", "--store", str(demo_store), "--json").json["proposal_id"]
    layout = Layout.open(demo_store)
    proposal = Proposals(layout).get(pid)
    base, new = Versions(layout).tree(proposal.base_version), Proposals(layout).tree(proposal)
    assert base != new
    crashed = cli("accept", pid, "-m", "looks good", "--store", str(demo_store),
                  env={"DREAM_CRASHPOINT": f"accept-{point}"})
    assert crashed.code == -signal.SIGKILL, crashed.stderr
    return pid, base, new


def _crashed_rollback(demo_store, cli, point: str):
    """Version 2 accepted, then `rollback 1` killed at `rollback-<point>`; returns (tree before, version 1 tree)."""
    pid = cli("run", "--store", str(demo_store), "--json").json["proposal_id"]
    assert cli("accept", pid, "--store", str(demo_store)).code == 0
    layout = Layout.open(demo_store)
    before, v1 = Versions(layout).tree(2), Versions(layout).tree(1)
    crashed = cli("rollback", "1", "--store", str(demo_store), env={"DREAM_CRASHPOINT": f"rollback-{point}"})
    assert crashed.code == -signal.SIGKILL, crashed.stderr
    return before, v1


def _journal(layout: Layout) -> dict:
    return json.loads(layout.journal.read_text())


@pytest.mark.parametrize("point,expected", POINTS)
def test_killed_accept_leaves_base_or_new(demo_store, cli, point, expected):
    pid, base, new = _crashed_accept(demo_store, cli, point)
    layout = Layout.open(demo_store)

    # The next dream command (any of them) finishes or discards the interrupted accept.
    status = cli("status", "--store", str(demo_store), "--json")
    assert status.code == 0, status.stderr
    assert read_tree(demo_store) == (base if expected == "base" else new)
    assert not layout.journal.exists()

    if expected == "new":
        assert status.json["current_version"] == 2
        assert Proposals(layout).get(pid).status == "accepted"
    else:
        assert status.json["pending"] == [pid]
        done = cli("accept", pid, "--store", str(demo_store), "--json")
        assert done.code == 0 and done.json["version"] == 2
        assert read_tree(demo_store) == new
    # The audit trail has the accept exactly once, with who and why, even when recovery finished it.
    accepts = [e for e in history.events(layout) if e["action"] == "accept"]
    assert len(accepts) == 1 and accepts[0]["version"] == 2 and accepts[0]["proposal_id"] == pid
    assert expected == "base" or accepts[0]["comment"] == "looks good"


@pytest.mark.parametrize("point,expected", POINTS)
def test_killed_rollback_leaves_before_or_target(demo_store, cli, point, expected):
    before, v1 = _crashed_rollback(demo_store, cli, point)
    assert cli("status", "--store", str(demo_store)).code == 0
    layout = Layout.open(demo_store)
    assert read_tree(demo_store) == (before if expected == "base" else v1)
    assert not layout.journal.exists()
    rollbacks = [e for e in history.events(layout) if e["action"] == "rollback"]
    assert len(rollbacks) == (0 if expected == "base" else 1)


@pytest.mark.parametrize("command", sorted(NEXT_COMMANDS))
def test_any_locking_command_finishes_the_interrupted_accept(demo_store, cli, command):
    pid, _, new = _crashed_accept(demo_store, cli, "after-first-write")
    cli(*NEXT_COMMANDS[command], "--store", str(demo_store))  # reject / run may refuse or skip; recovery ran first
    layout = Layout.open(demo_store)
    assert not layout.journal.exists()
    assert Proposals(layout).get(pid).status == "accepted"
    assert Versions(layout).tree(2) == new
    assert [e["action"] for e in history.events(layout)].count("accept") == 1


def test_replaying_twice_records_the_event_once(demo_store, cli):
    """A crash after the event but before the journal is dropped: the next replay adds no second event."""
    _, _, new = _crashed_accept(demo_store, cli, "after-version")
    layout = Layout.open(demo_store)
    saved = layout.journal.read_bytes()
    assert cli("status", "--store", str(demo_store)).code == 0
    layout.journal.write_bytes(saved)  # as if killed between the event and the journal's removal
    assert cli("status", "--store", str(demo_store)).code == 0
    assert not layout.journal.exists() and read_tree(demo_store) == new
    assert [e["action"] for e in history.events(layout)].count("accept") == 1


# ------------------------------------------------------- edits made between the crash and the replay


@pytest.mark.parametrize("point", ["after-journal", "after-first-write", "after-apply"])
def test_edit_before_replay_of_accept_is_merged_into_the_accept(demo_store, cli, point):
    pid, base, new = _crashed_accept(demo_store, cli, point)
    layout = Layout.open(demo_store)
    edited = [w for w in _journal(layout)["writes"] if w in base][-1]  # a file the agent already had
    with open(demo_store / edited, "ab") as fh:
        fh.write(b"\nAGENT-EDIT made after the crash\n")

    status = cli("status", "--store", str(demo_store), "--json")
    assert status.code == 0, status.stderr
    assert status.json["interrupted_accept"] is False and status.json["pending"] == []
    # The replay finished the accept with the agent's edit merged in, and that state is the version.
    now = read_tree(demo_store)
    assert now[edited].endswith(b"AGENT-EDIT made after the crash\n")
    assert {p: d for p, d in now.items() if p != edited} == {p: d for p, d in new.items() if p != edited}
    assert Versions(layout).tree(Versions(layout).current()) == now
    assert not layout.journal.exists()
    assert Proposals(layout).get(pid).status == "accepted"


def test_edit_colliding_with_the_replay_is_kept_and_accept_can_be_redone(demo_store, cli):
    pid, base, new = _crashed_accept(demo_store, cli, "after-journal")
    layout = Layout.open(demo_store)
    edited = [w for w in _journal(layout)["writes"] if w in base][-1]
    (demo_store / edited).write_bytes(b"AGENT rewrote this file after the crash\n")
    edited_bytes = (demo_store / edited).read_bytes()

    status = cli("status", "--store", str(demo_store), "--json")
    assert status.code == 0, status.stderr
    assert status.json["interrupted_accept"] is True
    assert edited in status.json["interrupted_accept_problem"] and f"dream accept {pid}" in status.json[
        "interrupted_accept_problem"]
    # The store is exactly the base plus the agent's edit, and that state is a version: nothing lost.
    assert read_tree(demo_store) == {**base, edited: edited_bytes}
    assert Versions(layout).tree(Versions(layout).current()) == {**base, edited: edited_bytes}
    assert not layout.journal.exists()
    assert status.json["pending"] == [pid]
    assert "accept-abandoned" in [e["action"] for e in history.events(layout)]
    again = cli("accept", pid, "--store", str(demo_store), "--json")
    assert again.code == 1 and "conflict" in again.stderr and edited in again.stderr
    assert read_tree(demo_store) == {**base, edited: edited_bytes}


def test_edit_after_the_version_was_recorded_stays_on_disk(demo_store, cli):
    pid, _, new = _crashed_accept(demo_store, cli, "after-version")
    layout = Layout.open(demo_store)
    edited = _journal(layout)["writes"][0]
    with open(demo_store / edited, "ab") as fh:
        fh.write(b"AGENT-EDIT\n")
    assert cli("status", "--store", str(demo_store)).code == 0
    assert (demo_store / edited).read_bytes() == new[edited] + b"AGENT-EDIT\n"
    assert Proposals(layout).get(pid).status == "accepted"


@pytest.mark.parametrize("point", ["after-journal", "after-first-write"])
def test_edit_before_replay_of_rollback_is_kept(demo_store, cli, point):
    before, v1 = _crashed_rollback(demo_store, cli, point)
    layout = Layout.open(demo_store)
    edited = [w for w in _journal(layout)["writes"] if w in before][-1]
    with open(demo_store / edited, "ab") as fh:
        fh.write(b"AGENT-EDIT\n")
    out = cli("status", "--store", str(demo_store), "--json")
    assert out.code == 0 and out.json["interrupted_accept"] is False, out.stderr
    now = read_tree(demo_store)
    assert now[edited].endswith(b"AGENT-EDIT\n")  # the rollback finished; the edit sits on top of it
    assert {p: d for p, d in now.items() if p != edited} == {p: d for p, d in v1.items() if p != edited}
    assert Versions(layout).tree(Versions(layout).current()) == now
    assert not layout.journal.exists()


# ------------------------------------------------------- journals that cannot be replayed


def _assert_blocked_but_status_works(demo_store, cli, base_like: dict, words: str):
    layout = Layout.open(demo_store)
    status = cli("status", "--store", str(demo_store), "--json")
    assert status.code == 0, status.stderr
    assert status.json["interrupted_accept"] is True and words in status.json["interrupted_accept_problem"]
    refused = cli("accept", "--store", str(demo_store))
    assert refused.code == 2 and "internal error" not in refused.stderr and "Traceback" not in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and str(layout.journal) in refused.stderr
    assert read_tree(demo_store) == base_like
    layout.journal.rename(layout.journal.with_suffix(".aside"))  # what the message says to do
    assert cli("status", "--store", str(demo_store), "--json").json["interrupted_accept"] is False


def test_journal_naming_a_missing_blob_blocks_with_a_clear_message(demo_store, cli):
    _, base, _ = _crashed_accept(demo_store, cli, "after-journal")
    layout = Layout.open(demo_store)
    digest = _journal(layout)["files"][_journal(layout)["writes"][0]]
    blobs = Blobs(layout)
    # The demo's snapshot has enough files to be written as one pack: remove the file that holds the object.
    os.unlink(blobs.packed()[digest].path if digest in blobs.packed() else blobs.path(digest))
    _assert_blocked_but_status_works(demo_store, cli, base, "blob missing")


WRONG_JOURNALS = [
    '{"foo": 1}',
    '{"action": "accept", "new_version": "x", "files": [], "writes": [], "deletes": [], "version_source": "a"}',
    "[]",
]


@pytest.mark.parametrize("content", WRONG_JOURNALS)
def test_journal_with_wrong_keys_blocks_with_a_clear_message(demo_store, cli, content):
    _, base, _ = _crashed_accept(demo_store, cli, "after-journal")
    Layout.open(demo_store).journal.write_text(content)
    _assert_blocked_but_status_works(demo_store, cli, base, "journal")


def test_folder_where_a_file_goes_gives_the_rollback_up_cleanly(demo_store, cli):
    before, _ = _crashed_rollback(demo_store, cli, "after-first-write")
    layout = Layout.open(demo_store)
    journal = _journal(layout)
    victim = [w for w in journal["writes"] if w in before][-1]
    (demo_store / victim).unlink()
    (demo_store / victim).mkdir()
    (demo_store / victim / "n.md").write_text("x\n")

    status = cli("status", "--store", str(demo_store), "--json")
    assert status.code == 0, status.stderr
    assert "is a folder" in status.json["interrupted_accept_problem"]
    assert not layout.journal.exists()
    assert (demo_store / victim / "n.md").read_text() == "x\n"
    expected = {p: d for p, d in before.items() if p != victim} | {f"{victim}/n.md": b"x\n"}
    assert read_tree(demo_store) == expected  # the first file written was put back
    again = cli("rollback", "1", "--store", str(demo_store))
    assert again.code == 1 and "is a folder" in again.stderr and "internal error" not in again.stderr
    assert cli("status", "--store", str(demo_store)).code == 0


def test_symlink_put_in_place_before_replay_is_not_written_through(demo_store, cli, tmp_path):
    _, base, _ = _crashed_accept(demo_store, cli, "after-journal")
    layout = Layout.open(demo_store)
    victim = _journal(layout)["writes"][0]
    outside = tmp_path / "outside.md"
    outside.write_bytes(base.get(victim, b""))  # same bytes as the pre-image: only the link is wrong
    (demo_store / victim).unlink(missing_ok=True)
    (demo_store / victim).symlink_to(outside)

    status = cli("status", "--store", str(demo_store), "--json")
    assert status.code == 0 and "symlink" in status.json["interrupted_accept_problem"]
    assert (demo_store / victim).is_symlink() and outside.read_bytes() == base.get(victim, b"")
    assert {p: d for p, d in read_tree(demo_store).items()} == {p: d for p, d in base.items() if p != victim}


def test_a_run_whose_gate_is_closed_still_finishes_an_interrupted_accept(demo_store, cli):
    pid = cli("run", "--store", str(demo_store), "--json").json["proposal_id"]
    layout = Layout.open(demo_store)
    new = Proposals(layout).tree(Proposals(layout).get(pid))
    crashed = cli("accept", pid, "--store", str(demo_store), env={"DREAM_CRASHPOINT": "accept-after-first-write"})
    assert crashed.code == -signal.SIGKILL
    skipped = cli("run", "--store", str(demo_store), "--json")
    assert skipped.json["status"] == "skipped" and skipped.json["reason"] == "hours"
    assert read_tree(demo_store) == new and not layout.journal.exists()
