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
person's, and stay; the write that finishes or gives up a journal removes
them (`planned_temps`), whichever command that is. In ``logs/`` dream
writes only by an import, which holds its own lock (``.dream/import.lock``),
not the store's: an import removes what a killed one left there (and its
state's temporary file in ``.dream/``), and so does any command that can
take that lock at once (`clean_import`). What is removed is returned, to be
reported.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Iterable
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
    among the memory files. In ``.dream/`` every marked one is, but an
    import's (`clean_import`).
    """
    own = _own_temps(layout)
    removed = [*_stale_staging(layout), *planned_temps(layout, planned), *own, *clean_import(layout, wait=False)]
    return sorted(removed)


def present(layout: Layout) -> bool:
    """Whether `clean` would find something besides a journal's temporary files (nothing is removed)."""
    try:
        staging = any(os.scandir(layout.staging))
    except (FileNotFoundError, NotADirectoryError):
        staging = False
    return staging or bool(_own_temps(layout, remove=False) or _import_temps(layout, remove=False))


def _own_temps(layout: Layout, remove: bool = True) -> list[str]:
    """dream's temporary files in ``.dream/`` (objects, versions, records), but for an import's."""
    state = temp_prefix(layout.import_state)
    return _temp_files(layout, layout.dream, _in_dream(layout), lambda path, name: not name.startswith(state),
                       remove)


def planned_temps(layout: Layout, planned: Iterable[str]) -> list[str]:
    """Remove the temporary files beside the memory paths a journal planned; their store paths."""
    prefixes = tuple({str((layout.root / rel).parent / temp_prefix(layout.root / rel)) for rel in planned})
    if not prefixes:
        return []
    return _temp_files(layout, layout.root, _in_memory(layout), lambda path, name: path.startswith(prefixes))


def clean_import(layout: Layout, wait: bool = True) -> list[str]:
    """Remove what a killed import left: temporary files under ``logs/`` and of its state; their paths.

    Call holding the import lock; with `wait` False the lock is tried once
    here instead, and nothing is removed while an import runs."""
    if wait:
        return _import_temps(layout)
    if not layout.dream.is_dir() or not _import_temps(layout, remove=False):
        return []
    from filelock import FileLock, Timeout  # start-up: filelock imports asyncio (~0.1 s)

    try:
        with FileLock(str(layout.import_lock)).acquire(timeout=0):
            return _import_temps(layout)
    except (Timeout, OSError):
        return []  # an import runs (it removes them itself), or the lock cannot be taken here


def _import_temps(layout: Layout, remove: bool = True) -> list[str]:
    state = temp_prefix(layout.import_state)
    logs = _temp_files(layout, layout.logs, lambda folder, name: True, lambda path, name: True, remove)
    return sorted([*logs, *_temp_files(layout, layout.dream, lambda folder, name: False,
                                       lambda path, name: name.startswith(state), remove)])


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


def _in_memory(layout: Layout) -> Callable[[Path, str], bool]:
    """The memory folders only: not logs/, sessions/, .dream/ or hidden ones."""
    return lambda folder, name: not name.startswith(".") and (folder != layout.root or not is_reserved_dir(name))


def _in_dream(layout: Layout) -> Callable[[Path, str], bool]:
    return lambda folder, name: folder / name != layout.staging  # whole copies there: `_stale_staging`


def _temp_files(layout: Layout, top: Path, walk_into: Callable[[Path, str], bool],
                wanted: Callable[[str, str], bool], remove: bool = True) -> list[str]:
    """The `wanted` (path, name) temporary files under `top`, in the folders `walk_into` (folder, name)
    allows; removed unless `remove` is False. Their paths in the store."""
    found = []
    stack = [top]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if walk_into(folder, entry.name):
                    stack.append(folder / entry.name)
            elif entry.is_file(follow_symlinks=False) and is_temp_name(entry.name) and wanted(entry.path, entry.name):
                if remove:
                    os.unlink(entry.path)
                found.append(Path(entry.path).relative_to(layout.root).as_posix())
    return found
