"""A demo store that has had one offline run, for the tests that damage what a run leaves in `.dream/`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers.cli import in_process
from helpers.stores import DEMO


@pytest.fixture(scope="session")
def dreamed_once(tmp_path_factory) -> Path:
    """Made once per session: a run costs far more than copying its result."""
    store = tmp_path_factory.mktemp("dreamed") / "demo"
    shutil.copytree(DEMO, store, ignore=shutil.ignore_patterns(".dream"))
    # Session-scoped, so the autouse config isolation is not in force yet: the same, by hand.
    isolated = {"DREAM_CONFIG": str(store.parent / "config.toml"), "ANTHROPIC_API_KEY": None}
    result = in_process("run", "--store", str(store), "--engine", "offline", "--json", env=isolated)
    assert result.code == 0 and result.json["status"] == "proposed", result.stderr
    return store


@pytest.fixture
def dreamed(dreamed_once, tmp_path) -> Path:
    """A copy of the demo store after one offline run: a version, a pending proposal, a state file, a history."""
    store = tmp_path / "demo"
    shutil.copytree(dreamed_once, store, symlinks=True)
    return store
