"""Shared fixtures: isolation from the developer's settings, copies of the demo store, and the CLI drivers.

Code shared by tests that is not a fixture lives in `tests/helpers/`.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

# Before the first import of a helper, so that its asserts explain themselves as a test's do.
pytest.register_assert_rewrite("helpers")

from helpers.cli import in_process, spawn  # noqa: E402
from helpers.stores import DEMO  # noqa: E402


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path_factory, monkeypatch):
    """Never read the developer's own config or API key."""
    cfg = tmp_path_factory.mktemp("config") / "config.toml"
    monkeypatch.setenv("DREAM_CONFIG", str(cfg))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("DREAM_STORE", raising=False)
    monkeypatch.delenv("DREAM_CRASHPOINT", raising=False)
    # The developer's own ~/.claude/CLAUDE.md and ~/.codex/AGENTS.md are instruction files a dream reads:
    # point both homes at empty folders (the `home` fixture moves HOME itself and takes these away).
    agents_home = tmp_path_factory.mktemp("agent-homes")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(agents_home / ".claude"))
    monkeypatch.setenv("CODEX_HOME", str(agents_home / ".codex"))


@pytest.fixture
def demo_store(tmp_path) -> Path:
    dest = tmp_path / "demo"
    shutil.copytree(DEMO, dest, ignore=shutil.ignore_patterns(".dream"))
    return dest


@pytest.fixture
def cli():
    """`dream` run in this process (fast): `cli(*args, env=None, cwd=None)` -> Result(code, stdout, stderr)."""
    return in_process


@pytest.fixture
def spawned_cli():
    """The installed `dream` console script in a child process, for what only a process shows."""
    return spawn


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A fake home folder, so ~/.claude and ~/.codex point into the test's own folder."""
    fake = tmp_path / "home"
    fake.mkdir()
    monkeypatch.setenv("HOME", str(fake))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    return fake


