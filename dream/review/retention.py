"""Where did it go? For every line a proposal removes or rewrites.

A reviewer's first worry is what a dream would lose. For each memory line
that is in the base version of a file but not in the proposed version of
the same file, we look for its content in the proposed tree:

- ``kept``: still in the same file (moved, reworded, struck through, dated);
- ``merged``: now in another file (a duplicate merged, an index line
  demoted to a topic file), with a similarity score;
- ``archived``: an index line moved out of the index into the archive file:
  nothing is lost, but the agent no longer reads it at every session start,
  so it is counted apart from merged;
- ``dropped``: nowhere in the proposal.

This works on the two trees only, so it judges any engine the same way.
Blank lines, frontmatter fences and keys other than ``description`` are
layout, not memories, and are not counted. Dropped items come first.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections import defaultdict
from dataclasses import asdict, dataclass

from rapidfuzz import fuzz, process

from dream.engines.offline.similarity import MAX_BLOCK, prefix_length, tokens
from dream.store.tree import INDEX_NAME, Tree, changed_paths

MATCH_THRESHOLD = 80.0  # rapidfuzz ratio (whole line against whole line) counting as found
KEPT, MERGED, ARCHIVED, DROPPED = "kept", "merged", "archived", "dropped"
ARCHIVE_FILES = re.compile(r"(?:^|/)(?:dream_)?archive(?:_\w+)?\.md$")  # what the offline engine's archive is called
_ORDER = {DROPPED: 0, ARCHIVED: 1, MERGED: 2, KEPT: 3}

_LINK = re.compile(r"\[([^\]\n]*)\]\(([^)\s]*)\)")
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
    text = _LINK.sub(_link_words, text)
    text = unicodedata.normalize("NFKC", text).lower()
    text = re.sub(r"[^\w\s]", " ", text)
    return " ".join(text.split())


def _link_words(link: re.Match[str]) -> str:
    """A link's title; none when the title only repeats the file name ("[user_role.md](user_role.md)")."""
    title, target = link.group(1).strip(), link.group(2).rsplit("/", 1)[-1]
    return "" if title in (target, target.rsplit(".", 1)[0]) else link.group(1)


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
    """Every memory line of the proposed tree, searchable by content.

    A removed line is looked for in three steps, each cheaper than the last
    was in a plain scan: its exact word sequence (within one line or across
    consecutive lines of a file), then the closest line by rapidfuzz ratio.
    Neither step scans the whole tree: an inverted index of tokens gives the
    few places worth looking at, so a report stays near-linear in the size
    of the store (a 20k-line index is accounted for in about a second).
    """

    def __init__(self, tree: Tree):
        self.lines: list[str] = []  # normalized memory lines, in tree order
        self.owners: list[str] = []  # the file of each line
        self.words: dict[str, list[str]] = {}  # each file's normalized words, lines joined
        # word -> file -> positions of the word in that file's `words`
        self.places: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
        self.counts: dict[str, int] = defaultdict(int)  # word -> places in the whole tree
        self.holders: dict[str, list[int]] = defaultdict(list)  # blocking token -> lines holding it
        for path, data in tree.items():
            words = self.words.setdefault(path, [])
            for _, _, norm in memory_lines(data):
                for word in norm.split():
                    self.places[word][path].append(len(words))
                    self.counts[word] += 1
                    words.append(word)
                for token in tokens(norm):
                    self.holders[token].append(len(self.lines))
                self.lines.append(norm)
                self.owners.append(path)
        self._found: dict[tuple[str, str], tuple[str | None, float]] = {}

    def find(self, norm: str, home: str) -> tuple[str | None, float]:
        """The file holding this content (its own file preferred) and how close the match is."""
        key = (norm, home)
        if key not in self._found:
            holder = self._holding_words(norm.split(), home)
            self._found[key] = (holder, 100.0) if holder else self._closest(norm, home)
        return self._found[key]

    def _holding_words(self, words: list[str], home: str) -> str | None:
        """The first file (home, then tree order) whose words contain `words` in a row.

        Same answer as a substring search for " norm " in each file's joined
        text, but only the positions of the query's rarest word are tried.
        """
        # Counted once at build: summing over the files a common word is in, for
        # every removed line, was quadratic (100 s for 6,000 lines on 5,000 files).
        counts = [self.counts.get(w, 0) for w in words]
        offset = min(range(len(words)), key=counts.__getitem__)
        if counts[offset] == 0:
            return None
        by_file = self.places[words[offset]]
        for path in ([home] if home in by_file else []) + [p for p in by_file if p != home]:
            text = self.words[path]
            for position in by_file[path]:
                start = position - offset
                if start >= 0 and text[start:start + len(words)] == words:
                    return path
        return None

    def _closest(self, norm: str, home: str) -> tuple[str | None, float]:
        """The best line by rapidfuzz ratio, among the lines sharing a rare token with `norm`.

        Ties go to the earliest line, and a line of the home file as good as
        the best anywhere wins. Lines that share no rare token are not
        compared (as in the offline engine's near-duplicate search): an 80%
        ratio leaves most words intact, so they share one.
        """
        candidates = sorted(self._candidates(norm))
        if not candidates:
            return None, 0.0
        best = process.extractOne(norm, [self.lines[i] for i in candidates], scorer=fuzz.ratio,
                                  score_cutoff=MATCH_THRESHOLD)
        if best is None:
            return None, 0.0
        _, score, index = best
        home_lines = [self.lines[i] for i in candidates if self.owners[i] == home]
        home_best = process.extractOne(norm, home_lines, scorer=fuzz.ratio, score_cutoff=MATCH_THRESHOLD)
        if home_best is not None and home_best[1] >= score:
            return home, round(home_best[1], 1)
        return self.owners[candidates[index]], round(score, 1)

    def _candidates(self, norm: str) -> set[int]:
        """Lines holding one of the rarest tokens of `norm` (the prefix-filtering block)."""
        ordered = sorted(tokens(norm), key=lambda t: (len(self.holders.get(t, ())), t))
        prefix = ordered[: prefix_length(len(ordered), MATCH_THRESHOLD)]
        prefix = [t for t in prefix if len(self.holders.get(t, ())) <= MAX_BLOCK] or prefix[:1]
        return {i for t in prefix for i in self.holders.get(t, ())}


def _rewritten_in_place(old: list[tuple[int, str, str]], new: list[tuple[int, str, str]],
                        wanted: set[int]) -> dict[int, float]:
    """Old lines (of the numbers `wanted`) replaced, at the same place, by a line saying mostly the same words.

    A short line whose relative date became absolute ("in use today" → "in
    use 2026-07-28") differs too much character by character to be found by
    `_Pool.find`, but the diff pairs it with its rewrite. The diff can be
    slow on a large file, so it runs only for lines found nowhere else.
    """
    found: dict[int, float] = {}
    if not wanted:
        return found
    matcher = difflib.SequenceMatcher(None, [n for *_, n in old], [n for *_, n in new], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "replace":
            continue
        for number, _, norm in old[i1:i2]:
            if number not in wanted:
                continue
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
        removed = [(number, text, pool.find(norm, path)) for number, text, norm in old_lines
                   if norm not in still]  # a line still in the file (maybe moved) is unchanged
        unfound = {number for number, _, (holder, _) in removed if holder is None}
        rewrites = _rewritten_in_place(old_lines, new_lines, unfound)
        for number, text, (holder, score) in removed:
            if holder is None and number in rewrites:  # found nowhere else: a rewrite in place
                holder, score = path, rewrites[number]
            status = _status(path, holder)
            items.append(Item(path, number, text.strip(), status, holder, score))
    items.sort(key=lambda i: (_ORDER[i.status], i.path, i.line))
    return items


def _status(path: str, holder: str | None) -> str:
    if holder is None:
        return DROPPED
    if holder == path:
        return KEPT
    return ARCHIVED if path == INDEX_NAME and ARCHIVE_FILES.search(holder) else MERGED


def summarize(base: Tree, proposed: Tree) -> dict:
    """The retention section of a proposal's report (stable keys)."""
    items = account(base, proposed)
    counts = {s: sum(1 for i in items if i.status == s) for s in (DROPPED, MERGED, ARCHIVED, KEPT)}
    return {**counts, "items": [asdict(i) for i in items]}


def headline(retention: dict) -> str:
    """The counts, with lines moved out of the always-loaded index apart from merged ones."""
    return (f"{retention['dropped']} dropped, {retention['merged']} merged into another file, "
            f"{retention.get('archived', 0)} moved out of the index (archived), {retention['kept']} kept in place")


def render_markdown(retention: dict) -> list[str]:
    """Markdown lines for the report: dropped items first, with a count."""
    lines = [f"## Dropped ({retention['dropped']})", ""]
    dropped = [i for i in retention["items"] if i["status"] == DROPPED]
    lines += [f"- `{i['path']}:{i['line']}` {i['text']}" for i in dropped] or ["(nothing dropped)"]
    lines += ["", f"## Retention: {headline(retention)}", ""]
    for i in retention["items"]:
        if i["status"] != DROPPED:
            moved = i["status"] in (MERGED, ARCHIVED)
            where = f"→ `{i['to']}` ({i['score']:.0f}%)" if moved else f"kept ({i['score']:.0f}%)"
            lines.append(f"- {i['status']} `{i['path']}:{i['line']}` {i['text'][:100]} {where}")
    return lines
