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

import shutil
from pathlib import Path

from dream.errors import BadInput
from dream.store.layout import INDEX_NAME
from dream.store.tree import Tree, atomic_write, is_memory_path, materialize, read_tree, text_problem, unsafe_target


class Staging:
    """The staging copy of one run: `tree()` to read it, `write` and `remove` to change it."""

    def __init__(self, root: Path, base: Tree | None = None) -> None:
        """`base`: the version to overlay, the folder then holding only changes; None: `root` holds the whole copy."""
        self.root = root
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
        """Stage `data` at `rel`; never synced (scratch: the proposal made from it is written durably)."""
        self._refuse_unsafe(rel)
        if rel == INDEX_NAME and (problem := text_problem(rel, data)):
            raise BadInput(f"{self.root / rel}: {problem}; dream reads memory files as UTF-8 text")
        atomic_write(self.root / rel, data, sync=False)
        if self._base is not None:
            self._changes[rel] = data

    def remove(self, rel: str) -> None:
        """Stage the removal of `rel` (nothing when it is not staged)."""
        self._refuse_unsafe(rel)
        target = self.root / rel
        if target.is_file():
            target.unlink()
        if self._base is not None:
            self._changes[rel] = None

    def discard(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def _refuse_unsafe(self, rel: str) -> None:
        why = unsafe_target(self.root, rel)
        if why:
            raise BadInput(f"{rel!r}: {why}: not written to the staging copy")
