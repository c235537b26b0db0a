"""Accept while an agent keeps appending to the store: no appended line is ever lost.

Each trial copies one store with a pending proposal, starts a writer process
that appends numbered lines to the files the proposal changes (and one it does
not) the way an agent does (open, append, close), accepts, stops the writer,
and then looks for every line the writer says it wrote in the store. An
accept may merge the lines in or refuse (and be re-run); it may never drop one.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.cli import in_process

from dream.errors import Refused
from dream.review.decide import accept
from dream.store.layout import Layout
from dream.store.tree import read_tree
from dream.versions.proposals import Proposals

pytestmark = pytest.mark.slow

# Appends with a pause drawn from [low, high] seconds: slow writers land now and then between the
# check and the swap; fast ones land in every window accept has.
WRITERS = {"slow": (0.005, 0.04), "fast": (0.0, 0.002)}
TRIALS = 50  # per writer speed

WRITER = r"""
import os, random, sys, time
files, stop, log = sys.argv[1].split("|"), sys.argv[2], sys.argv[3]
low, high, seed = float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
rnd = random.Random(seed)
n = 0
with open(log, "a") as out:
    while not os.path.exists(stop):
        path = rnd.choice(files)
        line = f"- agent line {seed}-{n}\n"
        with open(path, "a") as fh:
            fh.write(line)
        out.write(f"{path}\t{line}"); out.flush()
        n += 1
        time.sleep(rnd.uniform(low, high))
"""


@pytest.fixture(scope="module")
def proposed(tmp_path_factory) -> tuple[Path, str]:
    """The demo store with a pending proposal, copied by each trial."""
    from helpers.stores import DEMO
    store = tmp_path_factory.mktemp("origin") / "demo"
    shutil.copytree(DEMO, store, ignore=shutil.ignore_patterns(".dream"))
    run = in_process("run", "--store", str(store), "--json")
    assert run.code == 0, run.stderr
    return store, run.json["proposal_id"]


def _trial(origin: Path, pid: str, where: Path, speed: str, seed: int) -> tuple[str, list[str]]:
    """One accept under a writer; (outcome, lines the writer wrote that the store does not hold)."""
    store = where / "store"
    shutil.copytree(origin, store)
    proposal = Proposals(Layout.open(store)).get(pid)
    kept = Proposals(Layout.open(store)).tree(proposal)
    targets = [store / p for p in proposal.changed if (store / p).is_file() and p in kept]
    untouched = next(p for p in read_tree(store) if p not in proposal.changed)
    files = [*targets, store / untouched]
    stop, log = where / "stop", where / "written.tsv"
    low, high = WRITERS[speed]
    writer = subprocess.Popen([sys.executable, "-c", WRITER, "|".join(map(str, files)), str(stop), str(log),
                               str(low), str(high), str(seed)])
    while not log.exists() or not log.read_text():  # the writer is running before the accept starts
        time.sleep(0.001)
    outcome = "refused"
    for attempt in range(3):
        try:
            accept(store, pid)
            outcome = "accepted" if attempt == 0 else "refused, then accepted"
            break
        except Refused:
            pass
    stop.touch()
    assert writer.wait(timeout=30) == 0
    now = read_tree(store)
    lost = []
    for row in log.read_text().splitlines(keepends=True):
        path, line = row.split("\t", 1)
        rel = str(Path(path).relative_to(store))
        if line not in now.get(rel, b"").decode():
            lost.append(f"{rel}: {line.strip()}")
    return outcome, lost


@pytest.mark.parametrize("speed", sorted(WRITERS))
def test_no_appended_line_is_lost_by_accept(proposed, tmp_path, speed):
    origin, pid = proposed
    outcomes: dict[str, int] = {}
    lost: list[str] = []
    for seed in range(TRIALS):
        outcome, missing = _trial(origin, pid, tmp_path / str(seed), speed, seed)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        lost += missing
    print(f"\n{speed} writer, {TRIALS} trials: {outcomes}; lines lost: {len(lost)}")
    assert lost == []
    assert outcomes.get("accepted", 0) + outcomes.get("refused, then accepted", 0) > 0  # the accepts happened
