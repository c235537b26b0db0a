"""Kill `dream accept` at several points: the store ends exactly at the base or the new version."""

from __future__ import annotations

import signal

import pytest

from dream.layout import Layout
from dream.proposals import Proposals
from dream.tree import read_tree
from dream.versions import Versions

# (crash point, the state the store must be in once the next command has run)
POINTS = [
    ("accept-before-journal", "base"),
    ("accept-after-journal", "new"),
    ("accept-after-first-write", "new"),
    ("accept-after-apply", "new"),
    ("accept-after-version", "new"),
]


@pytest.mark.parametrize("point,expected", POINTS)
def test_killed_accept_leaves_base_or_new(demo_store, cli, point, expected):
    pid = cli("run", "--store", str(demo_store), "--json").json["proposal_id"]
    layout = Layout.open(demo_store)
    proposal = Proposals(layout).get(pid)
    base = Versions(layout).tree(proposal.base_version)
    new = Proposals(layout).tree(proposal)
    assert base != new

    crashed = cli("accept", pid, "--store", str(demo_store), env={"DREAM_CRASHPOINT": point})
    assert crashed.code == -signal.SIGKILL, crashed.stderr

    # The next dream command (any of them) finishes or discards the interrupted accept.
    status = cli("status", "--store", str(demo_store), "--json")
    assert status.code == 0, status.stderr
    live = read_tree(demo_store)
    assert live == (base if expected == "base" else new)
    assert not layout.journal.exists()

    if expected == "new":
        assert status.json["current_version"] == 2
        assert Proposals(layout).get(pid).status == "accepted"
    else:
        assert status.json["pending"] == [pid]
        done = cli("accept", pid, "--store", str(demo_store), "--json")
        assert done.code == 0 and done.json["version"] == 2
        assert read_tree(demo_store) == new


def test_killed_rollback_recovers_to_target(demo_store, cli):
    pid = cli("run", "--store", str(demo_store), "--json").json["proposal_id"]
    cli("accept", pid, "--store", str(demo_store))
    layout = Layout.open(demo_store)
    v1 = Versions(layout).tree(1)
    crashed = cli("rollback", "1", "--store", str(demo_store), env={"DREAM_CRASHPOINT": "accept-after-first-write"})
    assert crashed.code == -signal.SIGKILL
    cli("status", "--store", str(demo_store))
    assert read_tree(demo_store) == v1
