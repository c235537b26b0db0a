"""kill -9 in the middle of a write or a run: the next command that takes the lock removes what was left
(temporary files beside memory files and in .dream/, staging copies) and says so."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest
from helpers.cli import console_script

from dream.store.layout import Layout
from dream.store.litter import is_temp_name
from dream.versions.proposals import Proposals

pytestmark = pytest.mark.slow


def dream(store: Path, *args: str, crash: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    if crash:
        env["DREAM_CRASHPOINT"] = crash
    return subprocess.run([*console_script(), *args, "--store", str(store)], capture_output=True, text=True,
                          env=env, timeout=120)


def litter(store: Path) -> list[str]:
    temps = [p.relative_to(store).as_posix() for p in store.rglob("*") if is_temp_name(p.name)]
    staging = store / ".dream" / "staging"
    return temps + ([p.relative_to(store).as_posix() for p in staging.iterdir()] if staging.is_dir() else [])


def test_a_killed_accept_leaves_temp_files_the_next_write_removes(demo_store):
    pid = json.loads(dream(demo_store, "run", "--json").stdout)["proposal_id"]
    killed = dream(demo_store, "accept", pid, crash="swap-temp-written")
    assert killed.returncode == -signal.SIGKILL
    left = litter(demo_store)
    assert left and all(is_temp_name(Path(p).name) for p in left)  # the kill did leave one

    again = dream(demo_store, "rollback", "1", "--json")  # finishes the accept first, then rolls it back
    assert again.returncode == 0, again.stderr
    assert sorted(json.loads(again.stdout)["cleaned"]) == sorted(left)  # reported
    assert litter(demo_store) == []


def test_a_killed_run_leaves_a_staging_copy_the_next_run_removes(demo_store):
    killed = dream(demo_store, "run", "--json", crash="propose-before-commit")
    assert killed.returncode == -signal.SIGKILL
    left = litter(demo_store)
    assert any(p.startswith(".dream/staging/") for p in left)

    again = dream(demo_store, "run", "--force", "--json")
    assert again.returncode == 0, again.stderr
    assert litter(demo_store) == []
    layout = Layout.open(demo_store)
    proposals = Proposals(layout)
    report = proposals.report(proposals.get(json.loads(again.stdout)["proposal_id"]))
    assert any("removed" in w and ".dream/staging/" in w for w in report["warnings"]), report["warnings"]


def test_files_that_only_look_alike_are_kept(demo_store):
    keep = [demo_store / ".notes.md.tmp", demo_store / "draft.tmp", demo_store / "logs" / ".x.md.abcdefgh.tmp"]
    for path in keep:
        path.write_text("mine\n")
    assert dream(demo_store, "run", "--force", "--json").returncode == 0
    assert all(p.exists() for p in keep)


PERSONS_FILES = [".draft.20261201.tmp", ".notes.md.a1b2c3d4.tmp", "team/.plan.backup01.tmp"]


def test_accept_keeps_a_persons_files_that_match_the_old_temp_pattern(demo_store):
    """Observed on main: accept deleted `.draft.20261201.tmp`, `.notes.md.a1b2c3d4.tmp` and
    `team/.plan.backup01.tmp`: they matched dream's temp-file pattern, but dream never made them."""
    (demo_store / "team").mkdir(exist_ok=True)
    for rel in PERSONS_FILES:
        (demo_store / rel).write_text("a person's draft\n")
    pid = json.loads(dream(demo_store, "run", "--json").stdout)["proposal_id"]
    accepted = dream(demo_store, "accept", pid, "--json")
    assert accepted.returncode == 0, accepted.stderr
    assert json.loads(accepted.stdout)["cleaned"] == []
    assert all((demo_store / rel).read_text() == "a person's draft\n" for rel in PERSONS_FILES)


def test_a_marked_name_no_journal_planned_is_kept_too(demo_store):
    """dream's own mark alone is not enough among memory files: the journal that made the file must name it."""
    stray = demo_store / ".notes.md.~dream-a1b2c3d4.tmp"
    stray.write_text("copied here by someone\n")
    pid = json.loads(dream(demo_store, "run", "--json").stdout)["proposal_id"]
    assert dream(demo_store, "accept", pid).returncode == 0
    assert stray.exists()
