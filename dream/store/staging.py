"""The engine's private copy of the base version, which costs what the engine changes.

A run's engine edits a *staging* copy, never the live store. Writing the
whole base version into a folder first, reading it back and deleting it
afterwards was a third of a big dream's CPU (20,000 files created, read and
removed for a night that changes a few). So a `Staging` starts as an overlay:
reads fall through to the base version the snapshot already holds in memory
(taken into the version store before the engine runs, so an agent appending
to a live file mid-dream changes nothing here: no hard links to live files),
and each write or removal lands in the private folder, and only there. The
staged tree is the base with those changes over it.

A tool that works on files (the Claude engine's memory tool lists folders and
opens files by path) asks for `folder()`: the whole copy is written then,
once, and from then on the folder is the staging copy, read and written as
plain files. Path safety is the folder's either way: a write whose path would
leave it (``..``, an absolute path, a symlinked folder) is refused, and the
memory tool keeps its own checks (`dream.store.paths`).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from dream.errors import BadInput
from dream.store.layout import INDEX_NAME
from dream.store.tree import Tree, is_memory_path, materialize, read_tree, text_problem


class Staging:
    """The staging copy of one run: `tree()` to read it, `write` and `remove` to change it."""

    def __init__(self, root: Path, base: Tree | None = None) -> None:
        """`base`: the version to overlay, the folder then holding only changes; None: `root` holds the whole copy."""
        self.root = root
        self._real_root = os.path.realpath(root)
        self._base = base
        self._changes: dict[str, bytes | None] = {}  # path -> its new bytes, None when removed (overlay only)

    @property
    def on_disk(self) -> bool:
        """Whether the folder is the whole copy (after `folder()`, or when made from a folder)."""
        return self._base is None

    def folder(self) -> Path:
        """The staging copy as files (written whole on the first call), for tools that work on files."""
        if self._base is not None:
            staged = self.tree()  # what was written or removed is in the folder already
            materialize({rel: data for rel, data in staged.items() if rel not in self._changes}, self.root)
            self._base, self._changes = None, {}
        self.root.mkdir(parents=True, exist_ok=True)
        return self.root

    def tree(self) -> Tree:
        """The memory files as staged now, sorted by path as `read_tree` lists them."""
        if self._base is None:
            return read_tree(self.root) if self.root.is_dir() else {}
        staged = dict(self._base)
        added = False
        for rel, data in self._changes.items():
            if data is None:
                staged.pop(rel, None)
            elif is_memory_path(rel):  # what read_tree would see in the folder
                added = added or rel not in staged
                staged[rel] = data
        return dict(sorted(staged.items())) if added else staged

    def write(self, rel: str, data: bytes) -> None:
        """Stage `data` at `rel`.

        A plain write, neither synced nor renamed into place: the copy is
        scratch that only this run reads, and the proposal made from it is
        written durably. A symlink at `rel` is replaced, never followed.
        """
        target = self._target(rel)
        if rel == INDEX_NAME and (problem := text_problem(rel, data)):
            raise BadInput(f"{target}: {problem}; dream reads memory files as UTF-8 text")
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_symlink():
            target.unlink()
        with open(target, "wb") as fh:
            fh.write(data)
        if self._base is not None:
            self._changes[rel] = data

    def remove(self, rel: str) -> None:
        """Stage the removal of `rel` (nothing when it is not staged)."""
        target = self._target(rel)
        if target.is_file() or target.is_symlink():
            target.unlink()
        if self._base is not None:
            self._changes[rel] = None

    def discard(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def _target(self, rel: str) -> Path:
        """Where `rel` is in the folder; `BadInput` when it would leave it (``..``, absolute, a symlinked folder)."""
        parts = rel.split("/")
        inside = not rel.startswith("/") and all(p not in ("", ".", "..") for p in parts)
        folder = os.path.realpath(self.root.joinpath(*parts[:-1])) if inside else ""
        if not (folder == self._real_root or folder.startswith(self._real_root + os.sep)):
            raise BadInput(f"{rel!r}: the path leaves the staging folder: not written to the staging copy")
        return self.root / rel
