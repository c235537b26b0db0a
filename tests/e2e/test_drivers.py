"""The in-process `cli` fixture stands in for the real command: same results, nothing left behind.

Most tests trust `cli` to behave like `dream` in a process of its own; these
check that trust on the outputs that tests compare most (JSON, a Rich table
at a given width, a one-line usage error).
"""

from __future__ import annotations

import os
import sys

import pytest


@pytest.mark.parametrize("args", [
    ["status", "--json"],
    ["history"],
    ["run", "--no-such-flag"],
], ids=["json", "table", "usage-error"])
def test_in_process_gives_what_the_console_script_gives(demo_store, cli, spawned_cli, args):
    env = {"COLUMNS": "120"}
    if args[0] == "history":
        assert cli("run", "--store", str(demo_store), "--engine", "offline").code == 0
    inside = cli(*args, "--store", str(demo_store), env=env)
    spawned = spawned_cli(*args, "--store", str(demo_store), env=env)
    assert (inside.code, inside.stdout, inside.stderr) == (spawned.code, spawned.stdout, spawned.stderr)


def test_in_process_leaves_environment_folder_and_streams_as_they_were(demo_store, cli, tmp_path):
    before = (dict(os.environ), os.getcwd(), sys.stdout, sys.stderr, sys.stdin)
    result = cli("status", "--store", str(demo_store), env={"DREAM_DEBUG": "1", "COLUMNS": "300"}, cwd=tmp_path)
    assert result.code == 0, result.stderr
    assert (dict(os.environ), os.getcwd(), sys.stdout, sys.stderr, sys.stdin) == before


def test_in_process_refuses_a_crash_point(demo_store, cli):
    # A crash point SIGKILLs the process that reaches it: in-process, the test run itself.
    with pytest.raises(RuntimeError, match="spawned_cli"):
        cli("accept", "--store", str(demo_store), env={"DREAM_CRASHPOINT": "accept-after-journal"})
