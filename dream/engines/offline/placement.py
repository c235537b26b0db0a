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
    parsed = [parse_index_line(text) for text in lines]
    words = _SECTION_WORDS.get(type_)
    if words:
        for number, line in enumerate(parsed):
            if line.kind == "heading" and re.search(rf"\b(?:{words})\b", line.text, re.I):
                return _end_of_section(parsed, number)
    entries = [n for n, line in enumerate(parsed) if line.is_entry and not _is_archive_entry(line)]
    if not entries:
        return _after_preamble(parsed)
    return entries[-1] + 1 + _continuations(parsed, entries[-1] + 1)


def _is_archive_entry(line) -> bool:
    """The archive's own line stays below the entries, like a footer."""
    return line.kind == "link" and posixpath.basename(line.target).endswith("archive.md")


def _end_of_section(parsed: list, heading: int) -> int:
    last = heading
    for number in range(heading + 1, len(parsed)):
        line = parsed[number]
        if line.kind == "heading" or line.text.strip() == "---":
            break
        if line.is_entry:
            last = number + _continuations(parsed, number + 1)
    return last + 1


def _continuations(parsed: list, start: int) -> int:
    """Indented lines that continue a list item (a wrapped rule) belong to it."""
    count = 0
    while start + count < len(parsed) and parsed[start + count].kind == "prose" \
            and parsed[start + count].text[:1] in (" ", "\t"):
        count += 1
    return count


def _after_preamble(parsed: list) -> int:
    """No entries yet: after the headings and preamble at the top, before a footer."""
    for number, line in enumerate(parsed):
        if line.text.strip() == "---":
            return number
    return len(parsed)


def add_line(lines: list[str], line: str, type_: str = "") -> None:
    lines.insert(insert_at(lines, type_), line)


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
