"""A full disk cannot split an accept or a rollback.

The disk fills at every point where `dream accept` / `dream rollback` writes
(`DREAM_DISK_FULL_AFTER=N`: the first N writes succeed, every later one fails
with ENOSPC, as on a disk that stays full). Each trial must end in one line
and exit 2 that says which state the store is in, and once space is back the
next command leaves the store exactly at the old or the new version, never a
mix, with the history saying which.

The same again on a real file system: a 16 MB tmpfs filled to within 0, 4,
8 … KB of full (a page at a time, tmpfs's unit), so ENOSPC also comes from
what the hook does not stand at (creating a folder, a temporary file's
name, a hard link, fsync). Mounting needs root; elsewhere those tests skip.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.cli import assert_one_line_error

from dream import history
from dream.store.layout import Layout
from dream.store.tree import read_tree
from dream.versions.manifests import Versions
from dream.versions.proposals import Proposals

pytestmark = pytest.mark.slow  # about 40 trials, each a copied store, an accept or rollback, and a status

MAX_TRIALS = 200  # far more write points than an accept of the demo store has: a loop that never ends fails

NOTHING_WRITTEN = ("nothing of it was written", "were not applied", "was not applied")
FINISHED_LATER = "the next dream command finishes"


def _trials(template: Path, tmp_path: Path, cli, args: list[str]):
    """(n, copy of the store, result) for n = 0, 1, … writes allowed, until the command succeeds."""
    for n in range(MAX_TRIALS):
        store = tmp_path / f"trial-{n}"
        shutil.copytree(template, store, symlinks=True)
        res = cli(*args, "--store", str(store), env={"DREAM_DISK_FULL_AFTER": str(n)})
        yield n, store, res
        if res.code == 0:
            return
    raise AssertionError(f"`dream {' '.join(args)}` still failed with {MAX_TRIALS} writes allowed")


def _outcomes_until_done(trials, cli, before: dict, after: dict, action: str) -> list[str]:
    """Each failed trial's outcome ("old" or "new"), checked, until a trial succeeds with `after` in place."""
    outcomes: list[str] = []
    for _, store, res in trials:
        if res.code == 0:
            assert read_tree(store) == after
            break
        outcomes.append(_check_said_and_left(res, store, cli, before, after))
        done = [e for e in history.events(Layout.open(store)) if e["action"] == action]
        assert len(done) == (1 if outcomes[-1] == "new" else 0)
    return outcomes


def _check_said_and_left(res, store: Path, cli, old: dict, new: dict) -> str:
    """The message's promise holds once space is back: 'old' or 'new', as it said."""
    assert_one_line_error(res, 2, "disk full")
    said_old = "was not applied" in res.stderr or "nothing of it was written" in res.stderr
    said_later = FINISHED_LATER in res.stderr or "was written as version" in res.stderr
    assert said_old != said_later, res.stderr
    after = cli("status", "--store", str(store), "--json")  # the next command, with room on the disk again
    assert after.code == 0, after.stderr
    assert not Layout.open(store).journal.exists()
    tree = read_tree(store)
    assert tree in (old, new), "the store holds a mix of two versions"
    assert tree == (old if said_old else new), res.stderr
    assert not [p for p in store.rglob("*.tmp")], "staged files left behind"
    return "old" if said_old else "new"


@pytest.fixture
def proposed(demo_store, cli, tmp_path) -> tuple[Path, str]:
    pid = cli("run", "--store", str(demo_store), "--json").json["proposal_id"]
    return demo_store, pid


def test_disk_full_at_every_write_of_accept_leaves_the_old_or_the_new_version(proposed, cli, tmp_path):
    template, pid = proposed
    layout = Layout.open(template)
    proposal = Proposals(layout).get(pid)
    old, new = Versions(layout).tree(proposal.base_version), Proposals(layout).tree(proposal)
    outcomes = []
    for n, store, res in _trials(template, tmp_path, cli, ["accept", pid, "-m", "full disk"]):
        if res.code == 0:
            assert read_tree(store) == new
            break
        outcome = _check_said_and_left(res, store, cli, old, new)
        outcomes.append(outcome)
        events = history.events(Layout.open(store))
        accepts = [e for e in events if e["action"] == "accept"]
        if outcome == "new":
            assert len(accepts) == 1 and accepts[0]["proposal_id"] == pid and accepts[0]["version"] == 2
            assert Proposals(Layout.open(store)).get(pid).status == "accepted"
        else:
            assert accepts == []
            assert Proposals(Layout.open(store)).get(pid).status == "pending"
            abandoned = [e for e in events if e["action"] == "accept-abandoned"]
            assert all("nothing of it written" in (e.get("detail") or "") for e in abandoned)
            done = cli("accept", pid, "--store", str(store), "--json")  # and it can simply be run again
            assert done.code == 0 and read_tree(store) == new, done.stderr
    print(f"accept: {len(outcomes)} write points, {outcomes.count('old')} left the old version, "
          f"{outcomes.count('new')} the new one")
    assert "old" in outcomes and "new" in outcomes  # the disk filled before and after the first swap


def test_disk_full_at_every_write_of_rollback_leaves_the_old_or_the_target(proposed, cli, tmp_path):
    template, pid = proposed
    assert cli("accept", pid, "--store", str(template)).code == 0
    versions = Versions(Layout.open(template))
    before, target = versions.tree(2), versions.tree(1)
    outcomes = _outcomes_until_done(_trials(template, tmp_path, cli, ["rollback", "1"]), cli, before, target, "rollback")
    print(f"rollback: {len(outcomes)} write points, {outcomes.count('old')} left the old version, "
          f"{outcomes.count('new')} the target")
    assert "old" in outcomes and "new" in outcomes


PAGE = 4096  # tmpfs hands out space a page at a time
DISK_MB = 16


@pytest.fixture
def small_disk(tmp_path) -> Iterator[Path]:
    """A real 16 MB tmpfs, mounted for this test; skipped (with the reason) where mounting is not allowed."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    disk = tmp_path / "disk"
    disk.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={DISK_MB}m", "tmpfs", str(disk)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a {DISK_MB} MB tmpfs here: {proc.stderr.strip() or 'mount failed'}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def _fill_leaving(disk: Path, free: int) -> Path:
    """A file that leaves `free` bytes of the disk unused."""
    stat = os.statvfs(disk)
    filler = disk / "filler"
    with open(filler, "wb") as fh:
        fh.write(b"\0" * max(0, stat.f_bavail * stat.f_frsize - free))
    return filler


def _full_disk_trials(template: Path, disk: Path, cli, args: list[str]):
    """(pages left, the store on the disk, result) for 0, 1, … free pages, until the command succeeds."""
    store = disk / "store"
    for pages in range(MAX_TRIALS):
        shutil.rmtree(store, ignore_errors=True)
        shutil.copytree(template, store, symlinks=True)
        filler = _fill_leaving(disk, pages * PAGE)
        res = cli(*args, "--store", str(store))
        filler.unlink()  # room again, for the next command to finish or undo what the journal says
        yield pages, store, res
        if res.code == 0:
            return
    raise AssertionError(f"`dream {' '.join(args)}` still failed with {MAX_TRIALS} pages free")


def test_a_real_full_disk_at_every_page_of_accept_leaves_the_old_or_the_new_version(proposed, cli, small_disk):
    template, pid = proposed
    layout = Layout.open(template)
    proposal = Proposals(layout).get(pid)
    old, new = Versions(layout).tree(proposal.base_version), Proposals(layout).tree(proposal)
    outcomes = _outcomes_until_done(_full_disk_trials(template, small_disk, cli, ["accept", pid]), cli, old, new, "accept")
    print(f"accept on a {DISK_MB} MB tmpfs: {len(outcomes)} fill levels failed, {outcomes.count('old')} left the "
          f"old version, {outcomes.count('new')} the new one")
    assert "old" in outcomes  # the disk was full before the accept could stage its files


def test_a_real_full_disk_at_every_page_of_rollback_leaves_the_old_or_the_target(proposed, cli, small_disk):
    template, pid = proposed
    assert cli("accept", pid, "--store", str(template)).code == 0
    versions = Versions(Layout.open(template))
    before, target = versions.tree(2), versions.tree(1)
    outcomes = _outcomes_until_done(_full_disk_trials(template, small_disk, cli, ["rollback", "1"]), cli, before,
                                    target, "rollback")
    print(f"rollback on a {DISK_MB} MB tmpfs: {len(outcomes)} fill levels failed, {outcomes.count('old')} left "
          f"the old version, {outcomes.count('new')} the target")
    assert "old" in outcomes
