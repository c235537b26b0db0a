"""Check a tree of memory files against the store's limits and formats (docs/how-it-works.md).

Index limits (lines, bytes, characters per line) are always errors: the
agent reads the index at every session start, so an over-budget index hurts
whoever uses the store next. Format problems of a topic file are errors only
for files the run created or modified (`changed`); in untouched files they
are warnings, because a proposal must not be blocked by what was already
there. A broken pointer is an error only on an index line the run changed.
A Codex memory folder (`dream.store.layouts`) has neither: its ``MEMORY.md``
is a handbook of any length and its files carry no frontmatter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from dream.store.layouts import of_tree
from dream.store.model import Store, TextFile, parse_index_line, resolve_link
from dream.store.tree import INDEX_NAME, Tree

MAX_INDEX_LINES = 200
MAX_INDEX_BYTES = 25_000
MAX_LINE_CHARS = 150

Severity = Literal["error", "warning"]


@dataclass
class Finding:
    severity: Severity
    path: str
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.severity}: {self.path}: {self.message} [{self.rule}]"


def validate_tree(tree: Tree, changed: set[str] | None = None,
                  base: Tree | None = None) -> list[Finding]:
    """Every finding for `tree`; `changed` names the files the run wrote.

    `base` (optional) is the tree before the run: with it, a broken pointer
    counts as an error when its index line is new or edited; without it,
    broken pointers are warnings.
    """
    changed = set(changed or ())
    store = Store.from_tree(tree)
    findings: list[Finding] = []
    severity: Severity
    for path, why in sorted(store.unparseable.items()):
        severity = "error" if path in changed else "warning"
        findings.append(Finding(severity, path, "encoding", why))
    layout = of_tree(tree)
    if INDEX_NAME in tree and INDEX_NAME not in store.unparseable and layout.index_links_memories:
        findings += _check_index(store, tree, changed, base)
    for path, topic in sorted(store.topics.items() if layout.frontmatter else ()):
        severity = "error" if path in changed else "warning"
        for problem in topic.format_problems:
            findings.append(Finding(severity, path, "frontmatter", problem))
    return findings


def errors(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity == "error"]


def _check_index(store: Store, tree: Tree, changed: set[str], base: Tree | None) -> list[Finding]:
    findings = []
    data = tree[INDEX_NAME]
    lines = store.index_lines
    if len(lines) > MAX_INDEX_LINES:
        findings.append(Finding("error", INDEX_NAME, "index-lines",
                                f"has {len(lines)} lines, the limit is {MAX_INDEX_LINES}"))
    if len(data) > MAX_INDEX_BYTES:
        findings.append(Finding("error", INDEX_NAME, "index-bytes",
                                f"is {len(data)} bytes, the limit is {MAX_INDEX_BYTES}"))
    for number, line in enumerate(lines, 1):
        if len(line) > MAX_LINE_CHARS:
            findings.append(_long_line(number, line))
    findings += _check_pointers(store, changed, base)
    return findings


def _long_line(number: int, line: str) -> Finding:
    """An error, unless only a file name too long to point at fits nowhere (a 255-byte name): then a
    warning, or every run on that store would fail until the file is renamed."""
    message = f"line {number} has {len(line)} characters, the limit is {MAX_LINE_CHARS}"
    targets = sum(len(t) for t in parse_index_line(line).links)
    if targets and len(line) - targets <= MAX_LINE_CHARS // 2:
        return Finding("warning", INDEX_NAME, "line-length", f"{message}, because the file name it points to is "
                                                             f"that long; rename the file to shorten it")
    return Finding("error", INDEX_NAME, "line-length", message)


def _base_index_lines(base: Tree | None) -> set[str] | None:
    if base is None or INDEX_NAME not in base:
        return None if base is None else set()
    try:
        return set(TextFile.decode(base[INDEX_NAME]).lines)
    except UnicodeDecodeError:
        return set()


def _check_pointers(store: Store, changed: set[str], base: Tree | None) -> list[Finding]:
    old_lines = _base_index_lines(base)
    findings = []
    present = store.paths()
    for number, line in enumerate(store.index_lines, 1):
        for target in parse_index_line(line).links:
            resolved = resolve_link(INDEX_NAME, target)
            if resolved is None or not resolved.endswith(".md") or resolved in present:
                continue
            # Without the base tree we cannot tell new lines from old ones:
            # report, but do not block the proposal.
            line_changed = old_lines is not None and line not in old_lines
            severity: Severity = "error" if line_changed else "warning"
            findings.append(Finding(severity, INDEX_NAME, "broken-pointer",
                                    f"line {number} points to missing file {resolved}"))
    return findings
