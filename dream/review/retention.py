"""Where did it go? For every line a proposal removes or rewrites.

A reviewer's first worry is what a dream would lose. For each memory line
that is in the base version of a file but not in the proposed version of
the same file, we look for its content in the proposed tree:

- ``kept``: unchanged, still in the same file (moved, or split over lines);
- ``rewritten``: changed in place, in the same file (a date made absolute,
  "Postgres 15" corrected to "16"); the item holds the exact words the
  file now says (``now``) and the words that changed (``edits``);
- ``merged``: now in another file (a duplicate merged, an index line
  demoted to a topic file), with a similarity score;
- ``archived``: an index line moved out of the index into the archive file:
  nothing is lost, but the agent no longer reads it at every session start,
  so it is counted apart from merged;
- ``dropped``: nowhere in the proposal.

This works on the two trees only, so it judges any engine the same way.
Blank lines, frontmatter fences and keys other than ``description`` are
layout, not memories, and are not counted. Dropped items come first.

`summarize` makes the summary a report stores; `of_proposal` is the one way
to get a proposal's summary (the stored one, or computed again when the
proposal predates this format). The report, `dream diff`, the review page,
`dream review` and the overview all count from it (`dream.review.counts`).
"""

from __future__ import annotations

import difflib
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dream.store.tree import INDEX_NAME, Tree, changed_paths
from dream.versions.manifests import Versions

if TYPE_CHECKING:
    from dream.versions.proposals import Proposal, Proposals

MATCH_THRESHOLD = 80.0  # rapidfuzz ratio (whole line against whole line) counting as found
KEPT, REWRITTEN, MERGED, ARCHIVED, DROPPED = "kept", "rewritten", "merged", "archived", "dropped"
STATUSES = (DROPPED, MERGED, ARCHIVED, REWRITTEN, KEPT)  # the order items and counts are listed in
EDIT_GAP_WORDS = 2  # changed runs this few unchanged words apart are shown as one edit
FORMAT = 2  # summaries of format 1 (no "rewritten": rewrites counted as kept) are computed again
ARCHIVE_FILES = re.compile(r"(?:^|/)(?:dream_)?archive(?:_\w+)?\.md$")  # what the offline engine's archive is called
_ORDER = {DROPPED: 0, ARCHIVED: 1, MERGED: 2, REWRITTEN: 3, KEPT: 4}

_LINK = re.compile(r"\[([^\]\n]*)\]\(([^)\s]*)\)")
_FM_KEY = re.compile(r"^\s*([A-Za-z_][\w.-]*)\s*:\s*(.*)$")


@dataclass
class Item:
    path: str  # the file the line was in
    line: int  # its line number in the base version (1-based)
    text: str
    status: str  # one of STATUSES
    to: str | None = None  # the file holding it now
    score: float = 0.0  # rapidfuzz similarity of the best match, 0-100
    now: str | None = None  # rewritten: the line as the file now holds it, word for word
    edits: list[tuple[str, str]] = field(default_factory=list)  # rewritten: (words before, words now)

    def as_dict(self) -> dict:
        """`dataclasses.asdict`, without its deep copy of every field: a 20,000-topic night has 60,000 items."""
        return {**vars(self), "edits": [tuple(edit) for edit in self.edits]}


def comparable(text: str) -> str:
    """Compare content, not markup: link targets go, then what `normalize` drops (punctuation, case)."""
    from dream.engines.offline.similarity import normalize  # start-up: see `of_proposal`

    return normalize(_LINK.sub(_link_words, text))


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
        norm = comparable(content)
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


@dataclass(frozen=True)
class Match:
    holder: str | None  # the file holding the content, None when nowhere
    score: float = 0.0
    now: str | None = None  # the line found close to it (not word for word), as its file holds it


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
        from dream.engines.offline.similarity import tokens  # start-up: see `of_proposal`

        self.lines: list[str] = []  # normalized memory lines, in tree order
        self.texts: list[str] = []  # the same lines as the files hold them
        self.owners: list[str] = []  # the file of each line
        self.joined: dict[str, str] = {}  # each file's normalized words, lines joined, " " before and after
        self.files_with: dict[str, list[str]] = defaultdict(list)  # word -> the files holding it, in tree order
        self.counts: Counter[str] = Counter()  # word -> places in the whole tree
        self.holders: dict[str, list[int]] = defaultdict(list)  # blocking token -> lines holding it
        for path, data in tree.items():
            words: list[str] = []
            for _, text, norm in memory_lines(data):
                words += norm.split()
                for token in tokens(norm):
                    self.holders[token].append(len(self.lines))
                self.lines.append(norm)
                self.texts.append(text.strip())
                self.owners.append(path)
            # Built per file, not per word: a Python step for every word of the tree was most of a report's time.
            self.counts.update(words)
            for word in dict.fromkeys(words):
                self.files_with[word].append(path)
            self.joined[path] = f" {' '.join(words)} "
        self._found: dict[tuple[str, str], Match] = {}

    def find(self, norm: str, home: str) -> Match:
        """The file holding this content (its own file preferred), how close, and the close line's text.

        Content found word for word has no `now`: it is unchanged.
        """
        key = (norm, home)
        if key not in self._found:
            holder = self._holding_words(norm.split(), home)
            self._found[key] = Match(holder, 100.0) if holder else self._closest(norm, home)
        return self._found[key]

    def _holding_words(self, words: list[str], home: str) -> str | None:
        """The first file (home, then tree order) whose words contain `words` in a row.

        A substring search for " norm " in each file's joined words, but only in
        the files holding the query's rarest word.
        """
        # Counted once at build: summing over the files a common word is in, for
        # every removed line, was quadratic (100 s for 6,000 lines on 5,000 files).
        rarest = min(words, key=lambda w: self.counts.get(w, 0))
        if rarest not in self.counts:
            return None
        files = self.files_with[rarest]
        run = f" {' '.join(words)} "
        for path in ([home] if home in files else []) + [p for p in files if p != home]:
            if run in self.joined[path]:
                return path
        return None

    def _closest(self, norm: str, home: str) -> Match:
        """The best line by rapidfuzz ratio, among the lines sharing a rare token with `norm`.

        Ties go to the earliest line, and a line of the home file as good as
        the best anywhere wins. Lines that share no rare token are not
        compared (as in the offline engine's near-duplicate search): an 80%
        ratio leaves most words intact, so they share one.
        """
        from rapidfuzz import fuzz, process  # start-up: see `of_proposal`

        candidates = sorted(self._candidates(norm))
        if not candidates:
            return Match(None, 0.0)
        best = process.extractOne(norm, [self.lines[i] for i in candidates], scorer=fuzz.ratio,
                                  score_cutoff=MATCH_THRESHOLD)
        if best is None:
            return Match(None, 0.0)
        _, score, index = best
        at_home = [i for i in candidates if self.owners[i] == home]
        home_best = process.extractOne(norm, [self.lines[i] for i in at_home], scorer=fuzz.ratio,
                                       score_cutoff=MATCH_THRESHOLD)
        if home_best is not None and home_best[1] >= score:
            return Match(home, round(home_best[1], 1), self.texts[at_home[home_best[2]]])
        line = candidates[index]
        return Match(self.owners[line], round(score, 1), self.texts[line])

    def _candidates(self, norm: str) -> set[int]:
        """Lines holding one of the rarest tokens of `norm` (the prefix-filtering block)."""
        from dream.engines.offline.similarity import MAX_BLOCK, prefix_length, tokens  # start-up: see `of_proposal`

        ordered = sorted(tokens(norm), key=lambda t: (len(self.holders.get(t, ())), t))
        prefix = ordered[: prefix_length(len(ordered), MATCH_THRESHOLD)]
        prefix = [t for t in prefix if len(self.holders.get(t, ())) <= MAX_BLOCK] or prefix[:1]
        return {i for t in prefix for i in self.holders.get(t, ())}


def _rewritten_in_place(old: list[tuple[int, str, str]], new: list[tuple[int, str, str]],
                        wanted: set[int], home: str) -> dict[int, Match]:
    """Old lines (of the numbers `wanted`) replaced, at the same place, by a line saying mostly the same words.

    A short line whose relative date became absolute ("in use today" → "in
    use 2026-07-28") differs too much character by character to be found by
    `_Pool.find`, but the diff pairs it with its rewrite. The diff can be
    slow on a large file, so it runs only for lines found nowhere else.
    """
    from rapidfuzz import fuzz  # start-up: see `of_proposal`

    found: dict[int, Match] = {}
    if not wanted:
        return found
    matcher = difflib.SequenceMatcher(None, [n for *_, n in old], [n for *_, n in new], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "replace":
            continue
        for number, _, norm in old[i1:i2]:
            if number not in wanted:
                continue
            scored = [(fuzz.token_set_ratio(norm, n), text) for _, text, n in new[j1:j2]]
            best, text = max(scored, key=lambda s: s[0], default=(0.0, ""))
            if best >= MATCH_THRESHOLD:
                found[number] = Match(home, round(best, 1), text.strip())
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
        removed = [(number, text, _find(pool, text, norm, path)) for number, text, norm in old_lines
                   if norm not in still]  # a line still in the file (maybe moved) is unchanged
        unfound = {number for number, _, match in removed if match.holder is None}
        rewrites = _rewritten_in_place(old_lines, new_lines, unfound, path)
        for number, text, match in removed:
            match = rewrites.get(number, match)  # found nowhere else: a rewrite in place
            items.append(_item(path, number, text.strip(), match))
    items.sort(key=lambda i: (_ORDER[i.status], i.path, i.line))
    return items


def _find(pool: _Pool, text: str, norm: str, path: str) -> Match:
    """Where a removed line's content is now. An index line's title is a label for its hook: when a
    duplicate's line goes and its hook is carried into the file kept, the hook alone is what to find."""
    match = pool.find(norm, path)
    if match.holder is not None or path != INDEX_NAME:
        return match
    link = _LINK.search(text)
    hook = comparable(text[link.end():]) if link else ""
    return pool.find(hook, path) if len(hook.split()) >= 3 else match


def _item(path: str, number: int, text: str, match: Match) -> Item:
    if match.holder is None:
        return Item(path, number, text, DROPPED)
    if match.holder != path:
        moved = ARCHIVED if path == INDEX_NAME and ARCHIVE_FILES.search(match.holder) else MERGED
        return Item(path, number, text, moved, match.holder, match.score)
    if match.now is None:  # its words are still in the file, only placed differently
        return Item(path, number, text, KEPT, path, match.score)
    return Item(path, number, text, REWRITTEN, path, match.score, match.now, word_edits(text, match.now))


def word_edits(old: str, new: str) -> list[tuple[str, str]]:
    """The runs of words that differ between two versions of a line: ("last week", "in the week of 2026-10-12")."""
    a, b = old.split(), new.split()
    spans: list[list[int]] = []  # [i1, i2, j1, j2] of each changed run
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        if spans and i1 - spans[-1][1] <= EDIT_GAP_WORDS:  # "last week" → "in the week of …" is one edit, not two
            spans[-1][1], spans[-1][3] = i2, j2
        else:
            spans.append([i1, i2, j1, j2])
    return [(" ".join(a[i1:i2]), " ".join(b[j1:j2])) for i1, i2, j1, j2 in spans]


def summarize(base: Tree, proposed: Tree) -> dict:
    """The retention section of a proposal's report (stable keys)."""
    items = account(base, proposed)
    counts = {s: sum(1 for i in items if i.status == s) for s in STATUSES}
    return {"format": FORMAT, **counts, "items": [i.as_dict() for i in items]}


def of_proposal(proposals: Proposals, proposal: Proposal, report: dict | None = None) -> dict:
    """A proposal's retention summary: the one its report stored, or worked out again from its trees.

    Reports of older dreams carry none, or one that counted rewrites as kept.
    """
    # `dream diff` and `dream review` read the stored one, and start without rapidfuzz and the
    # offline engine's text tools: the functions that work a summary out import them.
    stored = (report if report is not None else proposals.report(proposal)).get("retention")
    if stored and stored.get("format") == FORMAT:
        return stored
    return summarize(Versions(proposals.layout, proposals.blobs).tree(proposal.base_version), proposals.tree(proposal))


def headline(retention: dict) -> str:
    """The line counts, with lines moved out of the always-loaded index apart from merged ones."""
    return (f"{retention['dropped']} dropped, {retention['merged']} merged into another file, "
            f"{retention['archived']} moved out of the index (archived), "
            f"{retention['rewritten']} rewritten in place, {retention['kept']} kept unchanged")


def now_reads(item: dict) -> str:
    """A rewritten line's changed words, as the file now holds them: “last week” → “in the week of 2026-10-12”."""
    return "; ".join(f"“{old}” → “{new}”" if old else f"added “{new}”" if new else f"removed “{old}”"
                     for old, new in item["edits"]) or "reworded"


def render_markdown(retention: dict) -> list[str]:
    """Markdown lines for the report: dropped items first, with a count."""
    lines = [f"## Dropped ({retention['dropped']})", ""]
    dropped = [i for i in retention["items"] if i["status"] == DROPPED]
    lines += [f"- `{i['path']}:{i['line']}` {i['text']}" for i in dropped] or ["(nothing dropped)"]
    lines += ["", f"## Retention: {headline(retention)}", ""]
    for i in retention["items"]:
        where = f"`{i['path']}:{i['line']}`"
        if i["status"] in (MERGED, ARCHIVED):
            lines.append(f"- {i['status']} {where} {i['text']} → `{i['to']}` ({i['score']:.0f}%)")
        elif i["status"] == REWRITTEN:
            lines.append(f"- rewritten {where}: {now_reads(i)}; the line now reads: {i['now']}")
        elif i["status"] == KEPT:
            lines.append(f"- kept {where} {i['text']} (unchanged, moved within the file)")
    return lines
