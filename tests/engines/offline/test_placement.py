"""Placing many new index entries at once lands each where one `insert_at` after another would."""

from __future__ import annotations

import posixpath
import random
import re

import pytest

from dream.engines.offline.placement import _SECTION_WORDS, add_line, add_lines
from dream.store.model import parse_index_line


def one_at_a_time(lines: list[str], type_: str) -> int:
    """The oracle: the whole index re-parsed for each new entry (how it was placed before batching)."""
    parsed = [parse_index_line(text) for text in lines]
    words = _SECTION_WORDS.get(type_)
    if words:
        for number, line in enumerate(parsed):
            if line.kind == "heading" and re.search(rf"\b(?:{words})\b", line.text, re.I):
                last = number
                for after in range(number + 1, len(parsed)):
                    if parsed[after].kind == "heading" or parsed[after].text.strip() == "---":
                        break
                    if parsed[after].is_entry:
                        last = after + continuations(parsed, after + 1)
                return last + 1
    entries = [n for n, line in enumerate(parsed) if line.is_entry and not (
        line.kind == "link" and posixpath.basename(line.target).endswith("archive.md"))]
    if not entries:
        return next((n for n, line in enumerate(parsed) if line.text.strip() == "---"), len(parsed))
    return entries[-1] + 1 + continuations(parsed, entries[-1] + 1)


def continuations(parsed: list, start: int) -> int:
    count = 0
    while start + count < len(parsed) and parsed[start + count].kind == "prose" \
            and parsed[start + count].text[:1] in (" ", "\t"):
        count += 1
    return count


# Every kind of line an index holds, and the odd ones that decide where a section ends.
LINES = ["# Memory index", "## Feedback", "## Rules and tools", "## Project context", "## References",
         "## About me", "## Misc", "", "---", "  ---", "Some prose.", "  an indented note",
         "\ta tabbed note", "- [Old](old.md) — a hook", "- [Archive](archive.md) — moved lines",
         "- Always pin versions", "  - [Nested](nested.md)", "- [[wiki-page]] — a wikilink",
         "1. [Numbered](numbered.md)", "* [Star](star.md)"]
TYPES = ["feedback", "project", "reference", "user", "", "unknown"]


def random_case(rng: random.Random) -> tuple[list[str], list[tuple[str, str]]]:
    lines = [rng.choice(LINES) for _ in range(rng.randint(0, 14))]
    new = []
    for n in range(rng.randint(1, 12)):
        target = "sub/archive.md" if rng.random() < 0.1 else f"new_{n}.md"
        new.append((f"- [New {n}]({target}) — added", rng.choice(TYPES)))
    return lines, new


@pytest.mark.parametrize("seed", range(8))
def test_many_entries_at_once_land_where_one_at_a_time_puts_them(seed):
    rng = random.Random(seed)
    for _ in range(500):
        lines, new = random_case(rng)
        expected = list(lines)
        for line, type_ in new:
            expected.insert(one_at_a_time(expected, type_), line)
        batched = list(lines)
        add_lines(batched, new)
        assert batched == expected, (lines, new)


def test_one_entry_goes_after_its_sections_last_entry_before_the_footer():
    lines = ["# Memory", "## Feedback", "- [A](a.md)", "  wrapped", "", "## Projects", "- [P](p.md)",
             "", "---", "Footer"]
    add_line(lines, "- [B](b.md)", "feedback")
    add_line(lines, "- [C](c.md)", "user")
    assert lines == ["# Memory", "## Feedback", "- [A](a.md)", "  wrapped", "- [B](b.md)", "", "## Projects",
                     "- [P](p.md)", "- [C](c.md)", "", "---", "Footer"]
