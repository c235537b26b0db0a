"""Under an address-space cap (`ulimit -v`), dream runs, or refuses a log by name: never a Rust backtrace.

Observed on main (issue 22): a 155 MB (3 M-line) session log under a 1-2 GB
cap aborted with a polars backtrace. Measured then, even the demo store
aborted under 1 GB: each thread's 64 MB malloc arena took the room. Each test
runs the installed command in a child process whose RLIMIT_AS is the cap.
"""

from __future__ import annotations

import os
import resource
import subprocess
from pathlib import Path

import pytest
from helpers.cli import Result, assert_one_line_error, console_script, in_process

GB = 1 << 30
REQUEST = "> remember that the deploy key lives in the vault, not in the repo\n"
# Three entries a block, ~150 bytes: filler as a long agent session writes it.
FILLER = ("> check the build for the config error and fix the test run\n"
          "< the run fails in the parser because the index file is stale\n"
          ". Read dream/store/index.py\n")


def dream_under_cap(cap: int, *args: str) -> Result:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    proc = subprocess.run([*console_script(), *args], capture_output=True, text=True, timeout=600,
                          preexec_fn=limit, env={**os.environ, "RUST_BACKTRACE": "0"})
    return Result(proc.returncode, proc.stdout, proc.stderr)


def write_big_log(store: Path, entries: int) -> Path:
    """A log of `entries` entries with one remember request in it, written a block at a time."""
    log = store / "logs" / "2026" / "12" / "01" / "0b1c2d3e-0000-4000-8000-0000000000ff-long-session.md"
    log.parent.mkdir(parents=True, exist_ok=True)
    blocks = entries // 3
    with log.open("w") as out:
        out.write(FILLER * (blocks // 2))
        out.write(REQUEST)
        for _ in range(blocks - blocks // 2):
            out.write(FILLER)
    return log


def test_the_demo_store_runs_under_a_1_gb_cap(demo_store):
    """Before, three runs of three aborted ("memory allocation of 524288 bytes failed")."""
    res = dream_under_cap(1 * GB, "run", "--store", str(demo_store), "--json")
    assert res.code == 0, res.stderr[-2000:]
    assert res.json["status"] == "proposed", res.json


@pytest.mark.slow
def test_a_log_too_large_for_the_cap_is_refused_by_name_and_read_when_there_is_room(demo_store):
    """A log of 3 M entries (150 MB), the size the torture run used: refused under 1 GB, read under 2 GB."""
    log = write_big_log(demo_store, 3_000_000)
    rel = log.relative_to(demo_store).as_posix()
    refused = dream_under_cap(1 * GB, "run", "--store", str(demo_store), "--json")
    assert_one_line_error(refused, 2, rel, "ulimit -v", "nothing was read")
    assert "panicked" not in refused.stderr and "backtrace" not in refused.stderr

    # The log waits, unread: with room (a 2 GB cap, where it aborted before), it is read in bounded batches.
    read = dream_under_cap(2 * GB, "run", "--store", str(demo_store), "--json")
    assert read.code == 0, read.stderr[-2000:]
    assert read.json["status"] == "proposed", read.json
    diff = in_process("diff", "--store", str(demo_store))
    assert "The deploy key lives in the vault" in diff.stdout, diff.stdout[-3000:]


def test_python_running_out_of_memory_is_one_line_and_exit_2(demo_store, cli, monkeypatch):
    """Python's own MemoryError (a read that the cap refuses) names the cap instead of an internal error."""
    from dream.pipeline import run

    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(run, "gather", no_memory)
    assert_one_line_error(cli("run", "--store", str(demo_store), "--force"), 2, "out of memory")
