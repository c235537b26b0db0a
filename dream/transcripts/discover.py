"""Find the memory stores on a machine.

A store is a folder with a ``MEMORY.md``, or a Codex memory folder
(`dream.store.layouts.detect`). Claude Code keeps one per project at
``~/.claude/projects/<project>/memory`` and Codex one at
``~/.codex/memories``, which is where `discover_stores` looks when given no
roots. Given roots, it walks each one a few levels deep,
without following symlinks and without entering hidden folders, a store's
own folders or folders of dependencies.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from dream.errors import BadInput
from dream.sources import SourceKind
from dream.store.layouts import LayoutKind, detect

if TYPE_CHECKING:
    from dream.config import Settings

SOURCES: tuple[SourceKind, ...] = tuple(SourceKind)

INDEX_NAME = "MEMORY.md"
SKIP_DIRS = frozenset({"node_modules", "__pycache__", "logs", "sessions", "venv"})
DEFAULT_DEPTH = 4


def claude_home() -> Path:
    """Claude Code's folder: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    explicit = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(explicit).expanduser() if explicit else Path.home() / ".claude"


def codex_home() -> Path:
    """Codex's folder: ``$CODEX_HOME``, else ``~/.codex``."""
    explicit = os.environ.get("CODEX_HOME")
    return Path(explicit).expanduser() if explicit else Path.home() / ".codex"


def default_roots() -> list[Path]:
    """Claude Code's projects, and Codex's one memory folder (a store itself, found when it exists)."""
    return [claude_home() / "projects", codex_home() / "memories"]


def discover_stores(roots: Iterable[Path] | None = None, max_depth: int = DEFAULT_DEPTH) -> list[Path]:
    """Every store under `roots` (default: Claude Code's projects), sorted, resolved."""
    found: set[Path] = set()
    for root in list(roots) if roots is not None else default_roots():
        root = Path(root).expanduser()
        if root.is_dir():
            found.update(_walk(root, max_depth))
    return sorted(found)


def _walk(root: Path, max_depth: int) -> list[Path]:
    stores: list[Path] = []
    pending = [(root, 0)]
    while pending:
        folder, depth = pending.pop()
        if (folder / INDEX_NAME).is_file() or detect(folder).kind == LayoutKind.CODEX:
            stores.append(folder.resolve())
            continue  # a store's sub-folders (team/, …) belong to it
        if depth >= max_depth:
            continue
        try:
            with os.scandir(folder) as entries:
                subdirs = [
                    Path(e.path) for e in entries
                    if e.is_dir(follow_symlinks=False)
                    and not e.name.startswith(".") and e.name not in SKIP_DIRS
                ]
        except OSError:
            continue  # unreadable folders are not stores we can use
        pending.extend((d, depth + 1) for d in subdirs)
    return stores


# --- where transcripts are ------------------------------------------------------


def default_source_path(store_root: Path, source: SourceKind) -> Path:
    """Where `source` keeps transcripts when the user names no path.

    Claude Code keeps a project's memory at ``~/.claude/projects/<p>/memory``
    and its sessions beside it, so a store laid out that way finds them
    itself; any other store must be told where they are.
    """
    if source == SourceKind.CODEX:
        return codex_home() / "sessions"
    if source == SourceKind.CLAUDE_MEM:
        return Path.home() / ".claude-mem" / "claude-mem.db"
    store = store_root.expanduser().resolve()
    if store.name == "memory" and store.parent.parent.name == "projects":
        return store.parent
    raise BadInput(
        f"{store_root}: not a Claude Code memory folder (~/.claude/projects/<project>/memory); "
        "name the folder of its session transcripts"
    )


def resolve_source_path(store_root: Path, source: SourceKind, path: Path | None, settings: Settings) -> Path:
    """The explicit path, else the store's configured one, else the default."""
    if path is None and settings.transcripts_path:
        path = Path(settings.transcripts_path).expanduser()
        if not path.is_absolute():
            path = store_root / path
    found = path.expanduser() if path is not None else default_source_path(store_root, source)
    if not found.exists():
        raise BadInput(f"{found}: no {source} transcripts there (path does not exist)")
    return found


def list_transcripts(source: SourceKind, path: Path) -> list[Path]:
    """The transcript files at `path` (a file, or a folder of them), sorted.

    Claude Code: the ``*.jsonl`` files directly in a project folder. Codex:
    ``rollout-*.jsonl`` anywhere below the sessions folder. claude-mem keeps
    a database, not transcript files (`claude_mem` reads it): none.
    """
    if source == SourceKind.CLAUDE_MEM:
        return []
    if path.is_file():
        return [path]
    if source == SourceKind.CLAUDE_CODE:
        with os.scandir(path) as found:
            files = [Path(e.path) for e in found if e.name.endswith(".jsonl") and e.is_file()]
    else:
        files = [p for p in path.rglob("rollout-*.jsonl") if p.is_file()]
    return sorted(files)
