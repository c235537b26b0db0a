"""`dream rollback` with an agent writing the store the whole time, killed at every write point or not at all.

Each trial copies a store at version 2 (an accept), starts an agent that adds numbered lines to the files
the rollback changes (and one it does not) in three ways (append, an editor's rename, an in-place rewrite:
`helpers.agents`), and runs `dream rollback 1`.

In every other trial the agent also writes one file the rollback removes: an append to it during the write
makes the rollback refuse (and put back all it wrote), which the trials exercise besides the kills.

The fault is a kill -9 at one of rollback's named crash points, at its Nth write (every one in turn), or
none. After a kill, one later command (`dream status`) finishes or gives up the write. Then the agent
stops and the store is judged: with the agent's lines taken out, every file is at the old version or
every file is at the target, byte for byte (never a mix), and every line the agent wrote is in the live
files, whatever rollback said.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest
from helpers.agents import AGENT_LINE, Agent
from helpers.cli import console_script
from helpers.stores import DEMO

from dream.store.layout import Layout
from dream.store.tree import read_tree
from dream.versions.manifests import Versions

pytestmark = pytest.mark.slow

NAMED = ["rollback-before-journal", "rollback-after-journal", "swap-temp-written", "rollback-after-first-write",
         "rollback-after-apply", "rollback-after-version"]
ROUNDS = int(os.environ.get("DREAM_FAULT_ROUNDS", "6"))  # every fault this many times (another agent seed)
def dream(store: Path, *args: str, fault: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    if fault and fault.startswith("write "):
        env["DREAM_CRASH_AT_WRITE"] = fault.split()[1]
    elif fault:
        env["DREAM_CRASHPOINT"] = fault
    return subprocess.run([*console_script(), *args, "--store", str(store)], capture_output=True, text=True,
                          env=env, timeout=120)


@pytest.fixture(scope="module")
def origin(tmp_path_factory) -> Path:
    """The demo store at version 2 (its proposal accepted), to be rolled back to version 1."""
    store = tmp_path_factory.mktemp("origin") / "demo"
    shutil.copytree(DEMO, store, ignore=shutil.ignore_patterns(".dream"))
    pid = json.loads(dream(store, "run", "--json").stdout)["proposal_id"]
    assert dream(store, "accept", pid).returncode == 0
    return store


def _writes_of_a_rollback(origin: Path, where: Path) -> int:
    """How many writes an undisturbed rollback makes: each is a fault of its own."""
    for n in range(1, 200):
        store = where / f"count-{n}"
        shutil.copytree(origin, store)
        if dream(store, "rollback", "1", fault=f"write {n}").returncode != -signal.SIGKILL:
            return n - 1
    raise AssertionError("a rollback that writes 200 times")


def _core(tree: dict[str, bytes]) -> dict[str, bytes]:
    """The tree with the agent's lines taken out (a file that held only those, the agent made: left out)."""
    core = {rel: b"".join(line for line in data.splitlines(keepends=True)
                          if not AGENT_LINE.match(line.rstrip(b"\n"))) for rel, data in tree.items()}
    return {rel: data for rel, data in core.items() if data or tree[rel] == b""}


def _kept_in_versions(store: Path, since: int) -> bytes:
    """Every file of every version after `since`, one after the other: where a rolled-back line is kept."""
    versions = Versions(Layout.open(store))
    return b"".join(data for n in versions.numbers() if n > since for data in versions.tree(n).values())


def _agents_files(old: dict, target: dict, with_removed: bool) -> list[str]:
    """What the agent writes: every file the rollback rewrites (the index among them), one it leaves alone,
    and (`with_removed`) one it removes: an append to that one during the write makes the rollback refuse."""
    rewritten = [rel for rel in sorted(old) if rel in target and old[rel] != target[rel]]
    removed = [next(rel for rel in sorted(old) if rel not in target)] if with_removed else []
    untouched = next(rel for rel in sorted(old) if old[rel] == target.get(rel))
    return [*rewritten, *removed, untouched]


def _trial(origin: Path, where: Path, fault: str | None, seed: int, old: dict, target: dict) -> tuple[str, list]:
    """One rollback under the agent; (outcome, problems)."""
    store = where / "store"
    shutil.copytree(origin, store)
    files = [store / rel for rel in _agents_files(old, target, with_removed=seed % 2 == 1)]
    with Agent(files, where / "agent", seed) as agent:
        res = dream(store, "rollback", "1", "--json", fault=fault)
        outcome = {0: "rolled back", 1: "refused", -signal.SIGKILL: "killed"}.get(res.returncode,
                                                                                  f"exit {res.returncode}")
        problems = [] if outcome != f"exit {res.returncode}" else [res.stderr.strip()]
        if outcome == "killed":
            later = dream(store, "status", "--json")
            problems += [] if later.returncode == 0 else [f"status after the kill: {later.stderr.strip()}"]
            outcome += ", then " + ("finished" if read_tree(store) and Versions(Layout.open(store)).get(
                Versions(Layout.open(store)).current()).source == "rollback" else "not applied")
        if outcome == "refused" and "nothing was lost" not in res.stderr:
            problems.append(f"refusal without its sentence: {res.stderr.strip()}")
        time.sleep(0.05)  # the agent writes on after the command, as it does
    now = read_tree(store)
    core = _core(now)
    if core != _core(old) and core != _core(target):
        mixed = sorted(rel for rel in set(core) | set(old) | set(target)
                       if core.get(rel) not in (_core(old).get(rel), _core(target).get(rel)))
        at_old = sorted(rel for rel in core if core.get(rel) == _core(old).get(rel) != _core(target).get(rel))
        problems.append(f"{fault}: a mix: {mixed} are neither; {at_old} are at the old version")
    # A rollback that ran (or was finished) rolls back the lines written before it read the store: they are
    # kept in the version of the store as found. After a refusal every line is in the live files.
    kept = _kept_in_versions(store, since=2) if outcome.startswith(("rolled back", "killed, then finished")) else b""
    for path, how, line in agent.written():
        rel = path.relative_to(store).as_posix()
        if line not in now.get(rel, b"") and line not in kept:
            where = "the live files or any version" if kept else "the live files"
            problems.append(f"{fault}: a line is in none of {where}: {rel} ({how}): {line.strip().decode()}")
    if list(store.rglob("*~dream-*")):
        problems.append(f"{fault}: temporary files left: {list(store.rglob('*~dream-*'))}")
    return outcome, problems


def test_rollback_under_faults_and_an_agent_leaves_old_or_target_and_every_line(origin, tmp_path):
    writes = _writes_of_a_rollback(origin, tmp_path)
    _run_trials(origin, tmp_path, [None, *NAMED, *(f"write {n}" for n in range(1, writes + 1))], writes)


def test_replay_given_up_after_a_merge_keeps_the_lines_merged_before_the_kill(origin, tmp_path):
    """Killed after every file was written (an agent's line merged into one) and before the version; then
    an edit collides with the replay, which gives up: the merged line stays in the live file. (Taking out
    the merged bytes, not the bytes planned before the merge, lost it.)"""
    store = tmp_path / "store"
    shutil.copytree(origin, store)
    layout = Layout.open(store)
    before = read_tree(store)
    assert dream(store, "rollback", "1", fault="rollback-after-journal").returncode == -signal.SIGKILL
    merged_into, collides = [rel for rel in json.loads(layout.journal.read_text())["writes"] if rel in before][:2]
    with open(store / merged_into, "ab") as fh:
        fh.write(b"- agent line merged before the kill\n")
    assert dream(store, "status", fault="rollback-after-apply").returncode == -signal.SIGKILL
    journal = json.loads(layout.journal.read_text())
    assert merged_into in journal["planned"] and journal["planned"][merged_into] != journal["files"][merged_into]
    (store / collides).write_bytes(b"the agent rewrote this file after the kill\n")

    status = dream(store, "status", "--json")
    assert status.returncode == 0 and json.loads(status.stdout)["interrupted_accept"] is True, status.stderr
    assert not layout.journal.exists()
    assert read_tree(store) == {**before, merged_into: before[merged_into] + b"- agent line merged before the kill\n",
                                collides: b"the agent rewrote this file after the kill\n"}


def _run_trials(origin: Path, tmp_path: Path, faults: list, writes: int) -> None:
    layout = Layout.open(origin)
    old, target = read_tree(origin), Versions(layout).tree(1)
    assert old != target
    outcomes: Counter = Counter()
    problems: list[str] = []
    for round_ in range(ROUNDS):
        for i, fault in enumerate(faults):
            seed = round_ * 1000 + i
            outcome, found = _trial(origin, tmp_path / str(seed), fault, seed, old, target)
            outcomes[outcome] += 1
            problems += found
            shutil.rmtree(tmp_path / str(seed))
    trials = sum(outcomes.values())
    print(f"\n{trials} trials ({len(faults)} faults x {ROUNDS}; {writes} write points): {dict(outcomes)}; "
          f"problems: {len(problems)}")
    assert problems == [], "\n".join(problems[:40])
    if writes:  # the whole run: every write point, more than 100 trials, each outcome seen
        assert trials >= 100 or ROUNDS < 5
        assert outcomes["rolled back"] > 0 and any(o.startswith("killed") for o in outcomes)
