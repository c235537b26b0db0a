"""The README's quick start, through the installed `dream` command, each step a process of its own.

Everything else drives `dream` in-process; this is the check that the
console script itself starts, finds its package and ends with the right
exit code, the way a person typing the README's commands sees it.
"""

from __future__ import annotations

from helpers.stores import snapshot_bytes


def test_run_diff_accept_history_rollback(demo_store, spawned_cli):
    store = ["--store", str(demo_store)]
    original = snapshot_bytes(demo_store)

    run = spawned_cli("run", *store, "--engine", "offline")
    assert run.code == 0 and "Traceback" not in run.stderr, run.stderr
    diff = spawned_cli("diff", *store)
    assert diff.code == 0 and "# Dream proposal" in diff.stdout and "\n+++ " in diff.stdout, diff.stderr
    assert snapshot_bytes(demo_store) == original, "a run and a diff change nothing"

    accepted = spawned_cli("accept", *store, "--json")
    assert accepted.code == 0 and accepted.json["version"] == 2, accepted.stderr
    assert snapshot_bytes(demo_store) != original
    history = spawned_cli("history", *store)
    assert history.code == 0 and "accept" in history.stdout, history.stderr

    rolled = spawned_cli("rollback", "1", *store, "--json")
    assert rolled.code == 0 and rolled.json["version"] == 3, rolled.stderr
    assert snapshot_bytes(demo_store) == original, "rollback 1 brings back the original bytes"
