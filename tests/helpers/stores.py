"""Where the test inputs are (the demo store, the shared corpus and transcripts), and reading a store back."""

from __future__ import annotations

import os
import stat
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "data" / "demo"


def _shared() -> Path:
    # The real stores and transcripts (`shared/`) sit beside the checkout; a git worktree kept one
    # folder deeper (worktrees/<branch>) finds it one level further up.
    for parent in (REPO.parent, REPO.parent.parent):
        if (parent / "shared").is_dir():
            return parent / "shared"
    return REPO.parent / "shared"


SHARED = _shared()
TRANSCRIPTS = SHARED / "transcripts"


def corpus_dir() -> Path:
    return Path(os.environ.get("DREAM_CORPUS", SHARED / "corpus"))


def corpus_stores() -> list[Path]:
    root = corpus_dir()
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if (p / "MEMORY.md").is_file())


def snapshot_bytes(root: Path) -> dict[str, bytes]:
    """Every file under the store except dream's own folder, as bytes."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".dream" not in p.relative_to(root).parts
    }


def file_modes(root: Path) -> dict[str, int]:
    """Permission bits of every file under the store except dream's own folder."""
    return {
        p.relative_to(root).as_posix(): stat.S_IMODE(p.stat().st_mode)
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".dream" not in p.relative_to(root).parts
    }


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
