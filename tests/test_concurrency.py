"""Four runs started at once on one store: one proposes, three skip on the lock."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

# Each child imports dream first, then waits for the go file, so that all four
# reach the gate and the lock within milliseconds of each other.
CHILD = r"""
import json, os, sys, time
from dream import pipeline
go = sys.argv[2]
while not os.path.exists(go):
    time.sleep(0.001)
print(json.dumps(pipeline.run(sys.argv[1]).to_json()))
"""


@pytest.mark.slow
def test_four_simultaneous_runs_one_proposal(demo_store, tmp_path):
    go = tmp_path / "go"
    procs = [
        subprocess.Popen([sys.executable, "-c", CHILD, str(demo_store), str(go)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    time.sleep(3)  # let all four finish importing
    go.touch()
    results = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=120)
        assert p.returncode == 0, stderr
        results.append(json.loads(stdout))
    statuses = sorted((r["status"], r["reason"]) for r in results)
    assert statuses == [("proposed", None)] + [("skipped", "lock")] * 3
    proposals = list((demo_store / ".dream" / "proposals").iterdir())
    assert len(proposals) == 1
