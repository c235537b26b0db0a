"""One run sequence: the Prefect flow and `dream run` end the same situation the same way.

The flow used to mirror the run step by step, and the copies drifted: with
its gate closed the flow never finished an accept that a crash had cut short,
while `dream run` did. Both now call `dream.pipeline.run.run`.
"""

from __future__ import annotations

import shutil
import signal

import pytest
from helpers.prefect_fixtures import prefect_harness  # noqa: F401  (sets Prefect's environment first)

from dream import history
from dream.outcomes import SkipReason, Status
from dream.store.layout import Layout
from dream.store.tree import read_tree
from dream.versions.manifests import Versions
from dream.versions.proposals import ACCEPTED, Proposals
from flows.dream_store import dream_store

# What differs between two runs of the same situation: ids, clocks, and the gate's
# message, which names the hours since the last dream to a tenth.
CLOCKS = {"run_id", "started_at", "finished_at", "duration_s", "at", "error"}


def _interrupted_accept(store, cli, spawned_cli) -> str:
    """A proposal whose `dream accept` was killed after writing its first file; returns its id."""
    pid = cli("run", "--store", str(store), "--engine", "offline", "--json").json["proposal_id"]
    crashed = spawned_cli("accept", pid, "-m", "looks good", "--store", str(store),
                  env={"DREAM_CRASHPOINT": "accept-after-first-write"})
    assert crashed.code == -signal.SIGKILL, crashed.stderr
    return pid


def _what_the_store_keeps(store) -> dict:
    layout = Layout.open(store)
    versions = Versions(layout)
    return {
        "files": read_tree(store),
        "journal": layout.journal.exists(),
        "versions": {n: versions.tree(n) for n in versions.numbers()},
        "proposals": {p: Proposals(layout).get(p).status for p in Proposals(layout).ids()},
        "runs": [_without(CLOCKS, row) for row in history.runs(layout)],
        "events": [_without(CLOCKS, row) for row in history.events(layout)],
    }


def _without(keys: set, row: dict) -> dict:
    return {k: v for k, v in row.items() if k not in keys}


@pytest.mark.usefixtures("prefect_harness")
def test_a_flow_whose_gate_is_closed_finishes_an_interrupted_accept_like_dream_run(demo_store, tmp_path, cli, spawned_cli):
    pid = _interrupted_accept(demo_store, cli, spawned_cli)
    layout = Layout.open(demo_store)
    accepted = Proposals(layout).tree(Proposals(layout).get(pid))
    assert layout.journal.exists() and read_tree(demo_store) != accepted  # really cut short
    twin = tmp_path / "twin"
    shutil.copytree(demo_store, twin)

    by_cli = cli("run", "--store", str(twin), "--engine", "offline", "--json")
    state = dream_store(str(demo_store), engine="offline", return_state=True)

    assert by_cli.code == 0, by_cli.stderr
    assert state.is_completed(), state.message
    by_flow = state.result()
    assert Status(by_flow["status"]) == Status(by_cli.json["status"]) == Status.SKIPPED
    assert SkipReason(by_flow["reason"]) == SkipReason(by_cli.json["reason"]) == SkipReason.HOURS
    assert _without(CLOCKS | {"review"}, by_flow) == _without(CLOCKS, by_cli.json)
    kept = _what_the_store_keeps(demo_store)
    assert kept["files"] == accepted and not kept["journal"] and kept["proposals"][pid] == ACCEPTED
    assert kept == _what_the_store_keeps(twin)
