"""Unified diffs between two trees, for people to review."""

from __future__ import annotations

import difflib

from dream.store.tree import Tree, changed_paths


def _lines(data: bytes | None) -> list[str]:
    if data is None:
        return []
    return data.decode("utf-8", errors="replace").splitlines(keepends=True)


def file_diff(path: str, old: bytes | None, new: bytes | None) -> str:
    old_name = f"a/{path}" if old is not None else "/dev/null"
    new_name = f"b/{path}" if new is not None else "/dev/null"
    out = []
    for line in difflib.unified_diff(_lines(old), _lines(new), old_name, new_name):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def tree_diff(old: Tree, new: Tree) -> str:
    """One unified diff for every file that differs, in path order."""
    return "".join(file_diff(p, old.get(p), new.get(p)) for p in changed_paths(old, new))
