"""Runs and decisions racing for one store's lock.

Four runs started at once: one proposes, three skip on the lock. An accept
while a run holds the lock waits a while, then refuses with one line.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from dream.pipeline import run as pipeline
from dream.store.layout import Layout
from dream.versions.proposals import Proposals
from helpers.stores import snapshot_bytes

RUNS = 4


@pytest.fixture
def cli(spawned_cli):
    """The refused accept is a process of its own, like the lock holder it waits for."""
    return spawned_cli


# Each child imports dream, says it is ready, then waits for the go file, so
# that all four reach the gate and the lock within milliseconds of each other.
# The one that gets the lock keeps it until the other three have finished
# (they write their result files): a loser that started late still finds the
# lock held, and the gate still open, as the last consolidation has not ended.
# That delay is the only change to the real pipeline; the lock is the real one.
CHILD = r"""
import json, os, sys, time
from pathlib import Path
from dream.pipeline import run as pipeline

store, me, folder = sys.argv[1], sys.argv[2], Path(sys.argv[3])
real_locked_run = pipeline.locked_run

def held_until_the_others_are_done(*args, **kwargs):
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if len(list(folder.glob("result-*"))) == RUNS - 1:
            break
        time.sleep(0.01)
    return real_locked_run(*args, **kwargs)

pipeline.locked_run = held_until_the_others_are_done
(folder / f"ready-{me}").touch()
while not (folder / "go").exists():
    time.sleep(0.001)
outcome = pipeline.run(store).to_json()
tmp = folder / f".result-{me}"
tmp.write_text(json.dumps(outcome))
tmp.rename(folder / f"result-{me}")
print(json.dumps(outcome))
""".replace("RUNS", str(RUNS))


def wait_for(predicate, what: str, seconds: float = 60) -> None:
    """Poll until `predicate()` holds; fail naming `what` if it never does."""
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.01)


@pytest.mark.slow
def test_four_simultaneous_runs_one_proposal(demo_store, tmp_path):
    signals = tmp_path / "signals"
    signals.mkdir()
    procs = [
        subprocess.Popen([sys.executable, "-c", CHILD, str(demo_store), str(i), str(signals)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for i in range(RUNS)
    ]
    try:
        wait_for(lambda: len(list(signals.glob("ready-*"))) == RUNS or any(p.poll() is not None for p in procs),
                 "the children to import dream")
        (signals / "go").touch()
        results = []
        for p in procs:
            stdout, stderr = p.communicate(timeout=120)
            assert p.returncode == 0, stderr
            results.append(json.loads(stdout))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    statuses = sorted((r["status"], r["reason"]) for r in results)
    assert statuses == [("proposed", None)] + [("skipped", "lock")] * (RUNS - 1)
    assert Proposals(Layout.open(demo_store)).ids() == [r["proposal_id"] for r in results if r["proposal_id"]]


# Holds the store's lock the way a run does, until the test says to let go.
HOLDER = r"""
import sys, time
from pathlib import Path
from dream.store.layout import Layout
from dream.store.lock import store_lock

store, folder = Path(sys.argv[1]), Path(sys.argv[2])
with store_lock(Layout.open(store), "run-held-by-test"):
    (folder / "holding").touch()
    deadline = time.monotonic() + 120
    while not (folder / "release").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
"""


@pytest.mark.slow  # accept waits 10 s for the lock before it refuses
def test_accept_refuses_in_one_line_while_a_run_holds_the_lock(demo_store, tmp_path, cli):
    proposal_id = pipeline.run(demo_store, engine="offline", force=True).proposal_id
    assert proposal_id
    before = snapshot_bytes(demo_store)
    signals = tmp_path / "signals"
    signals.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(demo_store), str(signals)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: (signals / "holding").exists() or holder.poll() is not None, "the lock holder")
        assert holder.poll() is None, holder.communicate()[1]

        refused = cli("accept", proposal_id, "--store", str(demo_store), "--json")

        assert refused.code == 1, (refused.stdout, refused.stderr)
        lines = refused.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in refused.stderr, refused.stderr
        assert f"store is locked by run run-held-by-test (pid {holder.pid})" in lines[0]
        assert str(demo_store) in lines[0] and "try again" in lines[0]
        assert snapshot_bytes(demo_store) == before
        proposals = Proposals(Layout.open(demo_store))
        assert [p.id for p in proposals.pending()] == [proposal_id]
    finally:
        (signals / "release").touch()
        _, stderr = holder.communicate(timeout=60)
    assert holder.returncode == 0, stderr

    # Once the run has let go, the same accept goes through.
    accepted = cli("accept", proposal_id, "--store", str(demo_store), "--json")
    assert accepted.code == 0, accepted.stderr
    assert accepted.json["status"] == "accepted" and accepted.json["version"] == 2
