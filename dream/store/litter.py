"""Removing what a killed dream process left behind: temporary files and staging copies.

Every file dream writes goes first to a temporary file beside it
(``.<name>.~dream-<random>.tmp``, see `dream.store.tree.temp_prefix`: the
``~dream-`` mark is one no editor or person uses), and every run works on a
copy of the store under ``.dream/staging/<run id>``. A process killed at the
wrong moment leaves either behind. Only a process holding the store's lock
may call `clean`: then no other dream process is writing. In ``.dream/``
(dream's own folder) every marked file is litter. Among the memory files
dream writes only through a journal (`dream.versions.journal`), so there a
marked file is litter only beside a path the interrupted write's journal
planned: ``.draft.20261201.tmp`` or ``.notes.md.a1b2c3d4.tmp`` are a
person's, and stay. What is removed is returned, to be reported.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterable
from pathlib import Path

from dream.store.layout import Layout
from dream.store.tree import TEMP_MARK, is_reserved_dir, temp_prefix

# The mark, mkstemp's 8 random characters, then nothing or the compare-and-swap's side-file marks.
_TEMP = re.compile(r"^\..+\." + re.escape(TEMP_MARK) + r"(?:[a-z0-9_]{8}(?:old)?|\d+removed)\.tmp$")


def is_temp_name(name: str) -> bool:
    return bool(_TEMP.match(name))


def clean(layout: Layout, planned: Iterable[str] = ()) -> list[str]:
    """Remove stale temporary files and staging copies; their store paths.

    `planned`: the memory paths of the interrupted write whose journal was
    found (before it was finished); only their temporary files are removed
    among the memory files. In ``.dream/`` every marked one is.
    """
    prefixes = {(layout.root / rel).parent / temp_prefix(layout.root / rel) for rel in planned}
    memory = _temp_files(layout.root, memory=True, prefixes=prefixes)
    removed = [*_stale_staging(layout), *memory, *_temp_files(layout.dream)]
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


def _temp_files(top: Path, memory: bool = False, prefixes: set[Path] | None = None) -> list[str]:
    """Temporary files under `top`; with `memory`, only in the folders that hold memory files, and only
    those whose name starts with one of `prefixes` (folder / temp prefix of a planned path)."""
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
            elif entry.is_file(follow_symlinks=False) and is_temp_name(entry.name) and (
                    prefixes is None or any(entry.path.startswith(str(p)) for p in prefixes)):
                os.unlink(entry.path)
                removed.append(Path(entry.path).relative_to(root).as_posix())
    return removed
