"""Where a new index line goes, and what a memory is called.

The index is the owner's document: its preamble, headings and footer stay
where they are. A new entry goes into the section whose heading fits its
type ("## Feedback", "## Rules" for feedback …), after that section's last
entry; without such a section, after the last entry of the index, so a
footer (a note under ``---``, a closing paragraph) stays last.
"""

from __future__ import annotations

import posixpath
import re

from dream.store.model import TopicFile, parse_index_line

# Heading words that name the section for each memory type.
_SECTION_WORDS = {
    "feedback": r"feedback|rules?|preferences?|guidelines?|conventions?|style|workflow",
    "project": r"projects?|context|architecture|decisions?|status|overview",
    "reference": r"references?|links?|resources?|docs|documentation|tools?",
    "user": r"user|about me|profile|people|who",
}
_SLUG = re.compile(r"[a-z0-9.]+(?:[_-][a-z0-9.]+)+")  # lower case joined by _ or -: a file name
_TYPE_PREFIX = re.compile(r"^(?:feedback|project|reference|user|memory|note|notes)[_-]+", re.I)


def insert_at(lines: list[str], type_: str = "") -> int:
    """The position for a new entry of `type_` in the index `lines`."""
    gap, _ = IndexPlacer(lines).position(type_)  # nothing placed yet: the gap is the line number
    return gap


def add_line(lines: list[str], line: str, type_: str = "") -> None:
    lines.insert(insert_at(lines, type_), line)


def add_lines(lines: list[str], new: list[tuple[str, str]]) -> None:
    """Add each (entry, type) where `add_line` would, one after the other, parsing the index once."""
    placer = IndexPlacer(lines)
    for line, type_ in new:
        placer.add(line, type_)
    lines[:] = placer.lines()


# A place in the index being filled: (gap, index). Gap g is before original line g (gap n is the
# end), and index counts the new lines already placed in that gap. An original line o sorts as
# slot 2o+1, a new line in gap g as slot 2g: `Key` is (slot, index), ordered as the lines will be.
Key = tuple[int, int]


class IndexPlacer:
    """Places many new entries in an index as `insert_at` would place them one after another.

    Placing 10,000 orphans one `insert_at` at a time parsed the whole index 10,000 times. Here the
    original lines are parsed once and never move; new lines collect in the gaps between them, and
    what decides the next place (the last entry of each section, the last entry overall) is kept
    up to date as each one is placed.
    """

    def __init__(self, lines: list[str]):
        self.original = lines
        self.parsed = [parse_index_line(text) for text in lines]
        self.added: dict[int, list[str]] = {}
        self.fence = next((n for n, line in enumerate(self.parsed) if line.text.strip() == "---"), len(lines))
        entries = [n for n, line in enumerate(self.parsed) if line.is_entry and not _is_archive_entry(line)]
        self.last_entry: Key | None = (2 * entries[-1] + 1, 0) if entries else None
        # Each type's section, found before anything is placed: a line placed for one type may
        # land in another's section and count there.
        self.headings = {type_: self._heading(words) for type_, words in _SECTION_WORDS.items()}
        self.sections = {heading: self._scan_section(heading)  # [end of its region, its last entry]
                         for heading in set(self.headings.values()) if heading is not None}

    def position(self, type_: str) -> tuple[int, int]:
        heading = self.headings.get(type_)
        if heading is not None:
            last = self.sections[heading][1]
            return self._after(last) if last else (heading + 1, 0)
        if self.last_entry is None:  # no entries yet: after the headings and preamble, before a footer
            return self.fence, len(self.added.get(self.fence, ()))
        return self._after(self.last_entry)

    def add(self, line: str, type_: str = "") -> None:
        gap, index = self.position(type_)
        self.added.setdefault(gap, []).insert(index, line)
        parsed = parse_index_line(line)
        key = (2 * gap, index)
        tracked = [section for section in self.sections.values() if section[1]]
        for section in tracked:
            section[1] = _shifted(section[1], key)
        if self.last_entry:
            self.last_entry = _shifted(self.last_entry, key)
        if not parsed.is_entry:
            return
        for heading, section in self.sections.items():
            if heading < gap <= section[0]:  # the new line is inside this section
                section[1] = max(section[1] or key, key)
        if not _is_archive_entry(parsed):
            self.last_entry = max(self.last_entry or key, key)

    def lines(self) -> list[str]:
        out: list[str] = []
        for gap, text in enumerate(self.original):
            out += self.added.get(gap, ())
            out.append(text)
        out += self.added.get(len(self.original), ())
        return out

    def _heading(self, words: str) -> int | None:
        """The first heading holding one of `words`."""
        return next((n for n, line in enumerate(self.parsed)
                     if line.kind == "heading" and re.search(rf"\b(?:{words})\b", line.text, re.I)), None)

    def _scan_section(self, heading: int) -> list:
        """[end, last entry]: the heading or `---` that ends the section (its region is the gaps
        after `heading` up to and including `end`), and the section's last entry."""
        parsed, last = self.parsed, None
        for number in range(heading + 1, len(parsed)):
            line = parsed[number]
            if line.kind == "heading" or line.text.strip() == "---":
                return [number, last]
            if line.is_entry:
                last = (2 * number + 1, 0)
        return [len(parsed), last]

    def _after(self, key: Key) -> tuple[int, int]:
        """The place right after the line at `key` and the indented lines that continue it."""
        slot, index = key
        gap, index = (slot // 2 + 1, 0) if slot % 2 else (slot // 2, index + 1)
        while index >= len(self.added.get(gap, ())) and gap < len(self.parsed) \
                and _continues(self.parsed[gap]):
            gap, index = gap + 1, 0
        return gap, index


def _shifted(key: Key, placed: Key) -> Key:
    """`key` after a new line was placed at `placed`: a new line at or after it in its gap moves down."""
    slot, index = key
    return (slot, index + 1) if slot == placed[0] and index >= placed[1] else key


def _is_archive_entry(line) -> bool:
    """The archive's own line stays below the entries, like a footer."""
    return line.kind == "link" and posixpath.basename(line.target).endswith("archive.md")


def _continues(line) -> bool:
    """Indented lines that continue a list item (a wrapped rule) belong to it."""
    return line.kind == "prose" and line.text[:1] in (" ", "\t")


def reads_as_title(name: str) -> bool:
    """A name a person would write as a title, not a file slug ("DevExpress-Konfiguration" is a title)."""
    name = name.strip()
    return bool(name) and not _SLUG.fullmatch(name) and not name.lower().endswith(".md")


def clean_stem(path: str) -> str:
    """`feedback_always-use-lang_keys.md` → "Always use lang keys"."""
    stem = _TYPE_PREFIX.sub("", posixpath.splitext(posixpath.basename(path))[0]) or path
    words = re.sub(r"[_-]+", " ", stem).strip()
    return words[:1].upper() + words[1:]


def title_of(topic: TopicFile) -> str:
    """The frontmatter name if it reads as a title, else the first heading, else a cleaned file name."""
    if reads_as_title(topic.name):
        return topic.name.strip()
    if topic.heading and reads_as_title(topic.heading):
        return topic.heading
    return clean_stem(topic.path)
