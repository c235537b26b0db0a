"""kill -9 at every write of accept, rollback, review and import: one later command leaves no `~dream-` file
anywhere in the store, and the store is at the old or the new state.

`DREAM_CRASH_AT_WRITE=N` kills the command at its Nth write (the temporary file made, nothing in it yet);
each command is killed at write 1, 2, … until it runs through. Then `dream status` (which takes no part in
the write) is the one later command.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pytest
from helpers.cli import console_script
from helpers.stores import DEMO

from dream.store.litter import is_temp_name
from dream.store.tree import TEMP_MARK, read_tree
from dream.transcripts.synthetic import ClaudeSession, write_jsonl

pytestmark = pytest.mark.slow

MAX_WRITES = 200  # a command that writes more than this is a finding of its own


def dream(store: Path, *args: str, crash_at: int | None = None, input: str | None = None):
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    env.pop("DREAM_CRASH_AT_WRITE", None)
    if crash_at is not None:
        env["DREAM_CRASH_AT_WRITE"] = str(crash_at)
    return subprocess.run([*console_script(), *args, "--store", str(store)], capture_output=True, text=True,
                          env=env, timeout=120, input=input)


def marked(store: Path) -> list[str]:
    """Every file under the store whose name carries dream's temporary mark, wherever it is."""
    return sorted(p.relative_to(store).as_posix() for p in store.rglob(f"*{TEMP_MARK}*"))


@pytest.fixture(scope="module")
def origin(tmp_path_factory) -> tuple[Path, str, Path]:
    """The demo store with a pending proposal, and a folder with one Claude Code transcript."""
    root = tmp_path_factory.mktemp("origin")
    store = root / "demo"
    shutil.copytree(DEMO, store, ignore=shutil.ignore_patterns(".dream"))
    run = dream(store, "run", "--json")
    assert run.returncode == 0, run.stderr
    transcripts = root / "transcripts"
    for n, said in enumerate(["remember that deploys need the VPN", "the pager rota moved to the ops wiki"]):
        session = ClaudeSession(f"9f0e0000-0000-4000-8000-00000000000{n}", datetime(2026, 5, 4, 10 + n,
                                                                                   tzinfo=timezone.utc))
        session.user(said)
        session.assistant("Noted.")
        write_jsonl(transcripts / f"{session.session_id}.jsonl", session.records)
    return store, json.loads(run.stdout)["proposal_id"], transcripts


def _commands(pid: str, transcripts: Path) -> dict[str, tuple[list[str], str | None]]:
    return {
        "accept": (["accept", pid], None),
        "rollback": (["rollback", "1"], None),  # after the accept: back to the store as first found
        "review": (["review", pid], "y\n" * 50),  # take every file, then write
        "import": (["import", "--from", "claude-code", str(transcripts)], None),
    }


def _prepare(store: Path, command: str, pid: str) -> None:
    if command == "rollback":
        assert dream(store, "accept", pid).returncode == 0
    if command == "review":  # its answers are for the files; a note's suggestion would be asked first
        for note in json.loads(dream(store, "notes", "--json").stdout)["shown"]:
            assert dream(store, "notes", "dismiss", str(note["id"])).returncode == 0


@pytest.mark.parametrize("command", ["accept", "rollback", "review", "import"])
def test_a_kill_at_any_write_leaves_no_temporary_file_after_one_later_command(origin, tmp_path, command):
    store0, pid, transcripts = origin
    args, answers = _commands(pid, transcripts)[command]
    reference = tmp_path / "reference"
    shutil.copytree(store0, reference)
    _prepare(reference, command, pid)
    old = read_tree(reference)
    done = dream(reference, *args, input=answers)
    assert done.returncode == 0, done.stderr
    new = read_tree(reference)

    kills, left_by_kills = 0, 0
    for n in range(1, MAX_WRITES):
        store = tmp_path / f"{command}-{n}"
        shutil.copytree(store0, store)
        _prepare(store, command, pid)
        killed = dream(store, *args, crash_at=n, input=answers)
        if killed.returncode != -signal.SIGKILL:
            assert killed.returncode == 0, killed.stderr  # ran through: every write point was visited
            break
        kills += 1
        left_by_kills += bool(marked(store))
        later = dream(store, "status", "--json")
        assert later.returncode == 0, later.stderr
        assert marked(store) == [], f"killed at write {n}: left {marked(store)}"
        assert not any(is_temp_name(p.name) for p in store.rglob("*"))
        assert read_tree(store) in (old, new), f"killed at write {n}: the store is neither old nor new"
        shutil.rmtree(store)
    else:
        pytest.fail(f"{command} wrote more than {MAX_WRITES} times")
    print(f"\n{command}: killed at each of {kills} writes; {left_by_kills} kills left temporary files; "
          f"none after one `dream status`")
    assert kills > 0 and left_by_kills > 0
