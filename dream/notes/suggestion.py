"""The change a note suggests, read from its text, and that change made on a tree of memory files.

An engine writes its best reading of what the user asked at the end of the
note: ``forget `reference_x.md`?``, ``in `project_y.md`, 8080 → 8081?``, or
a candidate memory (``Candidate memory: “…”``). A note without one (two
memories disagree, a date names no one day) has nothing to take: a person
edits the memory, then dismisses the note.

The change is made only when it is still exact on the tree it goes into:
the file exists, the old value is in it as a whole token. Otherwise nothing
is changed and the person is told why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from enum import StrEnum

from dream.errors import Refused
from dream.store.model import Store, format_index_line, new_topic_text, parse_index_line, resolve_link
from dream.store.paths import PathRefused, check_new_in_tree
from dream.store.tree import INDEX_NAME, Tree
from dream.store.validate import MAX_LINE_CHARS


class Action(StrEnum):
    FORGET = "forget"  # remove a memory file and its index lines
    REPLACE = "replace"  # one value for another, whole tokens, in one memory file and its index lines
    REMEMBER = "remember"  # a new memory file holding the text


@dataclass(frozen=True)
class Suggestion:
    action: Action
    path: str = ""  # forget, replace: the memory file
    old: str = ""  # replace
    new: str = ""  # replace
    text: str = ""  # remember

    def __str__(self) -> str:
        if self.action == Action.FORGET:
            return f"forget `{self.path}`"
        if self.action == Action.REPLACE:
            return f"in `{self.path}`, {self.old} → {self.new}"
        return f"remember “{self.text}”"


_QUOTED = r"[`“\"']?(?P<{0}>[^`”\"'?]+?)[`”\"']?"
_FORGET = re.compile(r"\bforget `(?P<path>[^`]+\.md)`\s*\?")
_REPLACE = re.compile(r"\bin `(?P<path>[^`]+\.md)`, " + _QUOTED.format("old") + r"\s*(?:→|->)\s*"
                      + _QUOTED.format("new") + r"\s*\?")
_REMEMBER = re.compile(r"\bCandidate memory: “(?P<text>[^”]+)”")
_SENTENCE = re.compile(r"“(?P<sentence>[^”]+)”")


def suggestion_of(text: str) -> Suggestion | None:
    """The change the note suggests, None when it suggests none dream can make."""
    if found := _FORGET.search(text):
        return Suggestion(Action.FORGET, path=found["path"])
    if found := _REPLACE.search(text):
        return Suggestion(Action.REPLACE, path=found["path"], old=found["old"].strip(), new=found["new"].strip())
    if found := _REMEMBER.search(text):
        return Suggestion(Action.REMEMBER, text=found["text"].strip())
    return None


def sentence_of(text: str) -> str:
    """What the user said, as the note quotes it first; the whole note when it quotes nothing."""
    found = _SENTENCE.search(text)
    return found["sentence"] if found else text


def apply(suggestion: Suggestion, tree: Tree, today: date) -> tuple[Tree, str, str]:
    """`tree` with the change made; the path changed and what was done. `Refused` when it no longer fits."""
    store = Store.from_tree(tree)
    if suggestion.action == Action.REMEMBER:
        path = _remember(store, suggestion.text, today)
        try:
            check_new_in_tree(path, tree)  # the rules every new file of a dream obeys: no look-alike name
        except PathRefused as why:
            raise Refused(f"{path}: {why}; nothing changed") from None
        return store.to_tree(), path, f"new memory: {suggestion.text}"
    if suggestion.path not in store.topics:
        raise Refused(f"{suggestion.path}: no such memory file now; nothing changed (edit by hand, then dismiss "
                      f"the note)")
    if suggestion.action == Action.FORGET:
        store.remove(suggestion.path)
        _drop_index_lines(store, suggestion.path)
        return store.to_tree(), suggestion.path, f"removed {suggestion.path} and its index line(s)"
    changed = _replace(store, suggestion)
    return store.to_tree(), suggestion.path, f"{changed} place(s) said “{suggestion.old}”, now “{suggestion.new}”"


def _token(value: str) -> re.Pattern[str]:
    """`value` as a whole token: never inside a host name, path, URL or identifier."""
    return re.compile(r"(?<![\w.:/-])" + re.escape(value) + r"(?![\w/-]|\.\w|:\w)")


def _replace(store: Store, suggestion: Suggestion) -> int:
    topic = store.topics[suggestion.path]
    old = _token(suggestion.old)
    lines = topic.text.lines
    start = topic.frontmatter.start + 1 if topic.frontmatter else 0
    changed = 0
    for number in range(start, len(lines)):
        new_line, n = old.subn(suggestion.new, lines[number])
        lines[number], changed = new_line, changed + n
    if not changed:
        raise Refused(f"{suggestion.path} does not say “{suggestion.old}” as a whole word now; nothing changed")
    topic.reparse()
    index = store.index_lines
    for number, line in enumerate(index):
        if suggestion.path in _targets(line):
            index[number] = old.sub(suggestion.new, line)
    return changed


def _targets(line: str) -> set[str | None]:
    return {resolve_link(INDEX_NAME, target) for target in parse_index_line(line).links}


def _drop_index_lines(store: Store, path: str) -> None:
    store.index_lines[:] = [line for line in store.index_lines if path not in _targets(line)]


def _remember(store: Store, text: str, today: date) -> str:
    body = text[:1].upper() + text[1:]
    body = body if body.endswith((".", "!", "。")) else body + "."
    title = " ".join(body.split()[:6]).rstrip(".,;:") or "Note"
    stem = re.sub(r"[^a-z0-9]+", "_", title.lower()).strip("_")[:40] or "note"
    path = store.free_path(f"project_{stem}")
    store.add_topic(path, new_topic_text(title, body[:150], "project", [body], {"created": today.isoformat()},
                                         store.newline))
    room = MAX_LINE_CHARS - len(format_index_line(title, path, "x")) + 1
    store.index_lines.append(format_index_line(title, path, body if len(body) <= room else body[:room - 1] + "…"))
    return path
