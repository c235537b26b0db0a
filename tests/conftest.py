"""Shared fixtures: copies of the demo store and the corpus, and a CLI driver."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "data" / "demo"


def corpus_dir() -> Path:
    return Path(os.environ.get("DREAM_CORPUS", REPO.parent / "shared" / "corpus"))


def corpus_stores() -> list[Path]:
    root = corpus_dir()
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if (p / "MEMORY.md").is_file())


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path_factory, monkeypatch):
    """Never read the developer's own config or API key."""
    cfg = tmp_path_factory.mktemp("config") / "config.toml"
    monkeypatch.setenv("DREAM_CONFIG", str(cfg))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("DREAM_STORE", raising=False)
    monkeypatch.delenv("DREAM_CRASHPOINT", raising=False)


@pytest.fixture
def demo_store(tmp_path) -> Path:
    dest = tmp_path / "demo"
    shutil.copytree(DEMO, dest, ignore=shutil.ignore_patterns(".dream"))
    return dest


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    @property
    def json(self):
        return json.loads(self.stdout)


def dream_cli(*args: str, env: dict | None = None, cwd: Path | None = None, timeout: float = 120) -> Result:
    """Run the real `dream` command in a child process, the way a user does."""
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.run(
        [sys.executable, "-m", "dream", *args], capture_output=True, text=True,
        env=full_env, cwd=cwd, timeout=timeout,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def cli():
    return dream_cli


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A fake home folder, so ~/.claude and ~/.codex point into the test's own folder."""
    fake = tmp_path / "home"
    fake.mkdir()
    monkeypatch.setenv("HOME", str(fake))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    return fake


def everything_in(store: Path, skip: frozenset = frozenset(), names: bool = False) -> list[tuple[str, bytes]]:
    """Every file's bytes under `store` (and its path, with `names`), plus every DuckDB table as text.

    The history is JSON lines, searched as bytes like any file. DuckDB
    compresses strings, so a secret could hide from a byte search in a
    database (an old ``history.duckdb``, kept as ``.migrated``); its rows are
    read back as text as well. `skip` holds paths
    relative to the store that are left out (a log the test itself planted).
    """
    import duckdb

    found = []
    for path in sorted(store.rglob("*")):
        relative = path.relative_to(store)
        if names:
            found.append((f"name of {relative}", str(relative).encode()))
        if path.is_file() and relative not in skip:
            found.append((str(relative), path.read_bytes()))
    for db in [*store.rglob("*.duckdb"), *store.rglob("*.duckdb.migrated")]:
        with duckdb.connect(str(db), read_only=True) as con:
            for (table,) in con.execute("select table_name from information_schema.tables").fetchall():
                rows = con.execute(f'select * from "{table}"').fetchall()
                found.append((f"{db.name}:{table}", repr(rows).encode()))
    return found
