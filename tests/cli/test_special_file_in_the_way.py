"""`dream accept`, `rollback` and `restore` whose write would reach a FIFO or socket at a memory path refuse:
one line naming the path and what it is, exit 1, and nothing changed (no file, no version, no event).

A FIFO is left out of the store's tree (reading it would hang), so a plan made without this check took the
path for absent: accept then reported a false merge conflict ("deleted in the store") or, where it removes
the path, wrote everything else and exited 0 with the FIFO still there; rollback did the same."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
from helpers.cli import assert_one_line_error

from dream import history
from dream.store.layout import Layout
from dream.versions.manifests import Versions
from dream.versions.proposals import Proposals


def _fifo(path: Path) -> str:
    path.unlink(missing_ok=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return "a FIFO"


def _socket(path: Path, monkeypatch) -> str:
    path.unlink(missing_ok=True)
    monkeypatch.chdir(path.parent)  # a socket's path is limited to ~100 bytes: bind by its short name
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(path.name)
    sock.close()
    return "a socket"


def _state(store: Path) -> tuple:
    """Everything a refused write must leave as it was: the files (special ones by kind), versions, events."""
    files = {}
    for where, _, names in os.walk(store):
        if ".dream" in Path(where).relative_to(store).parts:
            continue
        for name in names:
            path = Path(where) / name
            files[str(path.relative_to(store))] = path.read_bytes() if path.is_file() else os.lstat(path).st_mode
    layout = Layout.open(store)
    return files, Versions(layout).numbers(), len(history.events(layout, limit=1000)), layout.journal.exists()


def _proposal(store: Path, cli) -> tuple[str, dict[str, list[str]]]:
    """A pending proposal and the paths it rewrites, adds and removes."""
    pid = cli("run", "--store", str(store), "--json").json["proposal_id"]
    layout = Layout.open(store)
    proposal = Proposals(layout).get(pid)
    base, new = Versions(layout).tree(proposal.base_version), Proposals(layout).tree(proposal)
    kinds = {"rewrites": [p for p in proposal.changed if p in base and p in new and p != "MEMORY.md"],
             "adds": [p for p in proposal.changed if p not in base],
             "removes": [p for p in proposal.changed if p not in new]}
    assert all(kinds.values()), kinds
    return pid, kinds


@pytest.mark.parametrize("kind", ["rewrites", "adds", "removes"])
@pytest.mark.parametrize("special", ["fifo", "socket"])
def test_accept_refuses_a_special_file_where_it_writes(demo_store, cli, monkeypatch, kind, special):
    pid, paths = _proposal(demo_store, cli)
    rel = paths[kind][0]
    what = _fifo(demo_store / rel) if special == "fifo" else _socket(demo_store / rel, monkeypatch)
    before = _state(demo_store)
    res = cli("accept", pid, "--store", str(demo_store))
    assert_one_line_error(res, 1, str(demo_store / rel), f"is {what}", "the accept was not applied")
    assert _state(demo_store) == before
    assert Proposals(Layout.open(demo_store)).get(pid).status == "pending"


@pytest.mark.parametrize("kind", ["rewrites", "adds", "removes"])
def test_rollback_refuses_a_fifo_where_it_writes(demo_store, cli, kind):
    pid, paths = _proposal(demo_store, cli)
    assert cli("accept", pid, "--store", str(demo_store)).code == 0
    rel = paths[kind][0]  # the rollback rewrites it back, removes what was added, brings back what was removed
    _fifo(demo_store / rel)
    before = _state(demo_store)
    res = cli("rollback", "1", "--store", str(demo_store))
    assert_one_line_error(res, 1, str(demo_store / rel), "is a FIFO", "the rollback was not applied")
    assert _state(demo_store) == before


def test_restore_refuses_a_fifo_at_the_path_it_restores(demo_store, cli):
    pid, paths = _proposal(demo_store, cli)
    assert cli("accept", pid, "--store", str(demo_store)).code == 0
    rel = paths["removes"][0]
    _fifo(demo_store / rel)
    before = _state(demo_store)
    res = cli("restore", rel, "--store", str(demo_store))
    assert_one_line_error(res, 1, str(demo_store / rel), "is a FIFO", "the restore was not applied")
    assert _state(demo_store) == before
