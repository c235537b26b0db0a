"""dream's one OS file lock (`dream.store.flock`): exclusive, waits as long as asked, and costs no asyncio import."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dream.store.flock import Flock, LockTimeout

REPO = Path(__file__).resolve().parents[2]


def test_a_held_lock_refuses_a_second_holder_until_it_is_given_back(tmp_path):
    path = tmp_path / "run.lock"
    first = Flock(path, timeout=0).acquire()
    with pytest.raises(LockTimeout):
        Flock(path, timeout=0).acquire()
    first.release()
    with Flock(path, timeout=0) as second:
        assert second is not first
    with Flock(path, timeout=0):  # the block gave it back
        pass


def test_a_waiting_lock_gets_it_when_the_holder_lets_go(tmp_path):
    """The holder is another process that exits by itself after a short while: the waiter then has it."""
    path = tmp_path / "run.lock"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        with pytest.raises(LockTimeout):
            Flock(path, timeout=0).acquire()
        with Flock(path, timeout=60):  # the holder sleeps 0.3 s, then exits: the kernel drops its lock
            assert holder.wait(timeout=60) == 0
    finally:
        holder.kill()
        holder.wait()


HOLD = """import sys, time
from dream.store.flock import Flock
with Flock(sys.argv[1], timeout=0):
    print("held", flush=True)
    time.sleep(0.3)
"""


def test_a_lock_file_that_cannot_be_opened_is_an_os_error(tmp_path):
    with pytest.raises(OSError):
        Flock(tmp_path / "missing-folder" / "run.lock", timeout=0).acquire()


def test_a_dream_run_takes_its_locks_without_importing_asyncio(tmp_path):
    """filelock imported asyncio (~0.1 s of CPU) on every command that writes: a tenth of a nightly dream."""
    store = tmp_path / "memory"
    store.mkdir()
    (store / "MEMORY.md").write_text("# Memory\n")
    code = ("import sys\nfrom dream.pipeline.run import run\n"
            f"outcome = run({str(store)!r}, engine='offline', force=True)\n"
            "print(outcome.status.value, 'asyncio' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    status, asyncio_loaded = done.stdout.split()
    assert status in {"proposed", "noop"}
    assert asyncio_loaded == "False"
    assert not (store / ".dream" / "run.lock.json").exists()  # the lock was given back
