"""Removing what a killed dream process left behind: temporary files and staging copies.

Every file dream writes goes first to a temporary file beside it
(``.<name>.<random>.tmp``, see `dream.store.tree.temp_prefix`), and every run
works on a copy of the store under ``.dream/staging/<run id>``. A process
killed at the wrong moment leaves either behind. Only a process holding the
store's lock may call `clean`: then no other dream process is writing, so
every such file is litter. What is removed is returned, to be reported.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from dream.store.layout import Layout
from dream.store.tree import is_reserved_dir

# mkstemp's 8 random characters, then nothing or dream's own marks for the compare-and-swap's side files.
_TEMP = re.compile(r"^\..+\.(?:[a-z0-9_]{8}(?:old)?|[a-z0-9_]*\d+removed)\.tmp$")


def is_temp_name(name: str) -> bool:
    return bool(_TEMP.match(name))


def clean(layout: Layout) -> list[str]:
    """Remove stale temporary files (memory folders and ``.dream/``) and staging copies; their store paths."""
    removed = [*_stale_staging(layout), *_temp_files(layout.root, memory=True), *_temp_files(layout.dream)]
    return sorted(removed)


def _stale_staging(layout: Layout) -> list[str]:
    removed = []
    try:
        entries = list(os.scandir(layout.staging))
    except (FileNotFoundError, NotADirectoryError):
        return []
    for entry in entries:
        path, folder = Path(entry.path), entry.is_dir(follow_symlinks=False)
        if folder:
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        removed.append(path.relative_to(layout.root).as_posix() + ("/" if folder else ""))
    return removed


def _walk_into(top: Path, folder: Path, name: str, memory: bool) -> bool:
    if memory:  # the memory folders only: not logs/, sessions/, .dream/ or hidden ones
        return not name.startswith(".") and (folder != top or not is_reserved_dir(name))
    return folder / name != top / "staging"  # whole copies there: `_stale_staging`


def _temp_files(top: Path, memory: bool = False) -> list[str]:
    """Temporary files under `top`; with `memory`, only in the folders that hold memory files."""
    removed = []
    root = top if memory else top.parent
    stack = [top]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if _walk_into(top, folder, entry.name, memory):
                    stack.append(folder / entry.name)
            elif entry.is_file(follow_symlinks=False) and is_temp_name(entry.name):
                os.unlink(entry.path)
                removed.append(Path(entry.path).relative_to(root).as_posix())
    return removed
