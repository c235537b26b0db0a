"""Where did it go? For every line a proposal removes or rewrites.

A reviewer's first worry is what a dream would lose. For each memory line
that is in the base version of a file but not in the proposed version of
the same file, we look for its content in the proposed tree:

- ``kept``: still in the same file (moved, reworded, struck through, dated);
- ``merged``: now in another file (a duplicate merged, an index line moved
  to the archive or demoted to a topic file), with a similarity score;
- ``dropped``: nowhere in the proposal.

This works on the two trees only, so it judges any engine the same way.
Blank lines, frontmatter fences and keys other than ``description`` are
layout, not memories, and are not counted. Dropped items come first.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import asdict, dataclass

from rapidfuzz import fuzz, process

from .tree import Tree, changed_paths

MATCH_THRESHOLD = 80.0  # rapidfuzz ratio (whole line against whole line) counting as found
KEPT, MERGED, DROPPED = "kept", "merged", "dropped"
_ORDER = {DROPPED: 0, MERGED: 1, KEPT: 2}

_LINK = re.compile(r"\[([^\]\n]*)\]\([^)\s]*\)")
_FM_KEY = re.compile(r"^\s*([A-Za-z_][\w.-]*)\s*:\s*(.*)$")


@dataclass
class Item:
    path: str  # the file the line was in
    line: int  # its line number in the base version (1-based)
    text: str
    status: str  # kept | merged | dropped
    to: str | None = None  # the file holding it now
    score: float = 0.0  # rapidfuzz similarity of the best match, 0-100


def normalize(text: str) -> str:
    """Compare content, not markup: link targets, punctuation and case go."""
    text = _LINK.sub(r"\1", text)
    text = unicodedata.normalize("NFKC", text).lower()
    text = re.sub(r"[^\w\s]", " ", text)
    return " ".join(text.split())


def _decode(data: bytes | None) -> list[str]:
    if data is None:
        return []
    return data.decode("utf-8", errors="replace").lstrip("\ufeff").splitlines()


def memory_lines(data: bytes | None) -> list[tuple[int, str, str]]:
    """(line number, text, normalized content) of the lines that carry memory."""
    lines = _decode(data)
    fm_end = _frontmatter_end(lines)
    found = []
    for number, text in enumerate(lines, 1):
        content = text
        if number <= fm_end:
            key = _FM_KEY.match(text)
            if not key or key.group(1) != "description":
                continue
            content = key.group(2).strip("'\"")
        norm = normalize(content)
        if norm:
            found.append((number, text, norm))
    return found


def _frontmatter_end(lines: list[str]) -> int:
    if not lines or lines[0].strip() != "---":
        return 0
    for i in range(1, len(lines)):
        if lines[i].strip() in ("---", "..."):
            return i + 1
    return 0


class _Pool:
    """Every memory line of the proposed tree, searchable by content."""

    def __init__(self, tree: Tree):
        self.texts: dict[str, str] = {}
        self.lines: list[str] = []
        self.owners: list[str] = []
        for path, data in tree.items():
            found = memory_lines(data)
            self.texts[path] = " " + " ".join(n for _, _, n in found) + " "
            for _, _, norm in found:
                self.lines.append(norm)
                self.owners.append(path)

    def find(self, norm: str, home: str) -> tuple[str | None, float]:
        """The file holding this content (its own file preferred) and how close the match is."""
        if f" {norm} " in self.texts.get(home, ""):
            return home, 100.0
        holder = next((p for p, t in self.texts.items() if f" {norm} " in t), None)
        if holder:
            return holder, 100.0
        best = process.extractOne(norm, self.lines, scorer=fuzz.ratio, score_cutoff=MATCH_THRESHOLD)
        if best is None:
            return None, 0.0
        _, score, index = best
        home_best = process.extractOne(
            norm, [l for l, o in zip(self.lines, self.owners) if o == home], scorer=fuzz.ratio,
            score_cutoff=MATCH_THRESHOLD)
        if home_best is not None and home_best[1] >= score:
            return home, round(home_best[1], 1)
        return self.owners[index], round(score, 1)


def _rewritten_in_place(old: list[tuple[int, str, str]], new: list[tuple[int, str, str]]) -> dict[int, float]:
    """Old lines replaced, at the same place, by a line saying mostly the same words.

    A short line whose relative date became absolute ("in use today" → "in
    use 2026-07-28") differs too much character by character to be found by
    `_Pool.find`, but the diff pairs it with its rewrite.
    """
    found: dict[int, float] = {}
    matcher = difflib.SequenceMatcher(None, [n for *_, n in old], [n for *_, n in new], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "replace":
            continue
        for number, _, norm in old[i1:i2]:
            best = max((fuzz.token_set_ratio(norm, n) for *_, n in new[j1:j2]), default=0.0)
            if best >= MATCH_THRESHOLD:
                found[number] = round(best, 1)
    return found


def account(base: Tree, proposed: Tree) -> list[Item]:
    """One item per removed or rewritten memory line, dropped ones first."""
    pool = _Pool(proposed)
    items: list[Item] = []
    for path in changed_paths(base, proposed):
        if path not in base:
            continue
        new_lines = memory_lines(proposed.get(path))
        still = {norm for _, _, norm in new_lines}
        old_lines = memory_lines(base[path])
        rewrites = _rewritten_in_place(old_lines, new_lines)
        for number, text, norm in old_lines:
            if norm in still:
                continue  # unchanged line (maybe moved within the file)
            holder, score = pool.find(norm, path)
            if holder is None and number in rewrites:  # found nowhere else: a rewrite in place
                holder, score = path, rewrites[number]
            status = DROPPED if holder is None else KEPT if holder == path else MERGED
            items.append(Item(path, number, text.strip(), status, holder, score))
    items.sort(key=lambda i: (_ORDER[i.status], i.path, i.line))
    return items


def summarize(base: Tree, proposed: Tree) -> dict:
    """The retention section of a proposal's report (stable keys)."""
    items = account(base, proposed)
    counts = {s: sum(1 for i in items if i.status == s) for s in (DROPPED, MERGED, KEPT)}
    return {**counts, "items": [asdict(i) for i in items]}


def render_markdown(retention: dict) -> list[str]:
    """Markdown lines for the report: dropped items first, with a count."""
    lines = [f"## Dropped ({retention['dropped']})", ""]
    dropped = [i for i in retention["items"] if i["status"] == DROPPED]
    lines += [f"- `{i['path']}:{i['line']}` {i['text']}" for i in dropped] or ["(nothing dropped)"]
    lines += ["", f"## Retention: {retention['dropped']} dropped, {retention['merged']} merged into "
                  f"another file, {retention['kept']} kept in place", ""]
    for i in retention["items"]:
        if i["status"] != DROPPED:
            where = f"→ `{i['to']}` ({i['score']:.0f}%)" if i["status"] == MERGED else f"kept ({i['score']:.0f}%)"
            lines.append(f"- {i['status']} `{i['path']}:{i['line']}` {i['text'][:100]} {where}")
    return lines
