"""Three-way merge of a proposal onto a store that changed after it was made.

The agent keeps writing memories during the day, so by the time someone
accepts a proposal the live store may differ from the proposal's base
version. For every file we look at three sides: the *base* version, the
*live* store (what the agent wrote since) and the *proposal*. A change on
one side only is taken as it is; changes on both sides are combined line by
line with the `merge3` library when they touch different lines. Anything
else is a conflict, and then nothing is written at all: `merge_trees`
raises `MergeConflict` naming every conflicting file and hunk.

A file the proposal renamed (removed at one path, added at another with
mostly the same text) carries the live edits of the old path over to the
new one, the way `git merge` follows renames.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import cast

from dream.errors import MergeConflict
from dream.store.tree import Tree

RENAME_SIMILARITY = 0.6  # share of lines two files must have in common to count as a rename
HUNK_PREVIEW_CHARS = 60


@dataclass
class MergeResult:
    tree: Tree
    combined: list[str] = field(default_factory=list)  # files where both sides' edits were combined
    from_live: list[str] = field(default_factory=list)  # files only the store changed (kept as they are)
    renamed: dict[str, str] = field(default_factory=dict)  # old path -> new path, live edits carried


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def _preview(lines: list[bytes]) -> str:
    if not lines:
        return "(nothing)"
    text = b"".join(lines).decode("utf-8", errors="replace").strip().replace("\n", " ⏎ ")
    return repr(text if len(text) <= HUNK_PREVIEW_CHARS else text[:HUNK_PREVIEW_CHARS] + "…")


def merge_file(base: bytes, live: bytes, proposal: bytes) -> tuple[bytes | None, list[str]]:
    """Line-level three-way merge of one file; (merged bytes, []) or (None, hunks).

    Lines the store only appended (what an agent does all day) go after the
    proposal's text, wherever the proposal changed the file.
    """
    if live.startswith(base) and base.endswith(b"\n") and live != base:
        return (proposal if proposal.endswith(b"\n") or not proposal else proposal + b"\n") + live[len(base):], []
    z, a, b = _lines(base), _lines(live), _lines(proposal)
    merged: list[bytes] = []
    hunks: list[str] = []
    from merge3 import Merge3  # start-up: only accepting onto a changed store merges

    for region in Merge3(z, a, b).merge_regions():
        kind = region[0]
        if kind == "unchanged":
            merged += z[region[1]:region[2]]
        elif kind in ("a", "same"):
            merged += a[region[1]:region[2]]
        elif kind == "b":
            merged += b[region[1]:region[2]]
        else:  # conflict: zstart, zend, astart, aend, bstart, bend
            # merge3 types every region as (kind, start, end); a conflict carries six numbers.
            zs, ze, as_, ae, bs, be = cast(tuple[int, int, int, int, int, int], region[1:])
            where = (f"after base line {zs}" if ze == zs else f"base line {ze}" if ze - zs == 1
                     else f"base lines {zs + 1}-{ze}")
            hunks.append(f"{where}: store has {_preview(a[as_:ae])}, proposal has {_preview(b[bs:be])}")
    return (None, hunks) if hunks else (b"".join(merged), [])


def _similar(a: bytes, b: bytes) -> float:
    return difflib.SequenceMatcher(None, _lines(a), _lines(b), autojunk=False).ratio()


def find_renames(base: Tree, proposal: Tree) -> dict[str, str]:
    """Paths the proposal removed, mapped to the path it added with mostly the same lines."""
    removed = [p for p in base if p not in proposal]
    added = [p for p in proposal if p not in base]
    renames: dict[str, str] = {}
    for old in removed:
        scored = [(_similar(base[old], proposal[new]), new) for new in added if new not in renames.values()]
        if scored:
            score, new = max(scored)
            if score >= RENAME_SIMILARITY:
                renames[old] = new
    return renames


def merge_trees(base: Tree, live: Tree, proposal: Tree) -> MergeResult:
    """The tree to write: the proposal with the store's own later edits kept.

    Raises `MergeConflict` (listing files and hunks) when the two sides
    changed the same lines, or one side deleted a file the other edited.
    """
    result = MergeResult(tree={})
    conflicts: dict[str, list[str]] = {}
    renames = {old: new for old, new in find_renames(base, proposal).items()
               if old in live and live[old] != base[old] and new not in live}
    for path in sorted(base.keys() | live.keys() | proposal.keys()):
        if path in renames:  # handled at its new path
            continue
        old = next((o for o, n in renames.items() if n == path), None)
        b = base.get(old if old else path)
        l = live.get(old if old else path)
        merged, hunks = _merge_path(b, l, proposal.get(path))
        if hunks:
            conflicts[path] = hunks
            continue
        if merged is not None:
            result.tree[path] = merged
        _note(result, path, old, b, l, proposal.get(path))
    if conflicts:
        raise MergeConflict(_conflict_message(conflicts), conflicts)
    return result


def _note(result: MergeResult, path: str, old: str | None, b, l, p) -> None:
    if old:
        result.renamed[old] = path
    elif l != b and p != b and l != p:
        result.combined.append(path)
    elif l != b and p == b:
        result.from_live.append(path)


def _merge_path(b: bytes | None, l: bytes | None, p: bytes | None) -> tuple[bytes | None, list[str]]:
    """One path's result (None = absent) or its conflict hunks."""
    if l == p or p == b:
        return l, []
    if l == b:
        return p, []
    # Both sides changed this path, differently.
    if b is None:
        return None, ["added on both sides with different content"]
    if l is None:
        return None, ["deleted in the store since the base version, edited by the proposal"]
    if p is None:
        return None, ["edited in the store since the base version, deleted by the proposal"]
    return merge_file(b, l, p)


def _conflict_message(conflicts: dict[str, list[str]]) -> str:
    parts = [f"{path} ({len(h)} hunk{'s' if len(h) != 1 else ''}: {'; '.join(h)})" for path, h in conflicts.items()]
    return f"{len(conflicts)} file(s) conflict with edits made to the store since the proposal: " + ", ".join(parts)
