"""Pinned memories: files no engine may change or remove.

A memory is pinned by ``pinned: true`` in its frontmatter (flat or under
``metadata:``) or by naming it in the ``pinned`` setting. After any engine
(and after its corrective pass) the pipeline calls `keep_pinned` once, so
the rule holds whatever the engine did: a pinned file gets its base bytes
back, and its index line comes back if the engine dropped it.
"""

from __future__ import annotations

from collections.abc import Iterable

from dream.errors import BadInput
from dream.store.model import TextFile, TopicFile, parse_index_line, resolve_link
from dream.store.staging import Staging
from dream.store.tree import INDEX_NAME, Tree

TRUE_WORDS = frozenset({"true", "yes", "on", "1"})


def is_pinned_text(rel: str, data: bytes) -> bool:
    # The key is spelled out, or escaped inside double quotes ("\x70inned"): a file holding neither
    # cannot be pinned, and it is spared the YAML load (most files of a 20,000-memory store, twice a run).
    if b"pinned" not in data and b"\\" not in data:
        return False
    try:
        value = TopicFile.parse(rel, data).meta("pinned")
    except (BadInput, UnicodeDecodeError):  # text or frontmatter dream refuses to read: validation names it
        return False
    return value is True or (isinstance(value, str) and value.strip().lower() in TRUE_WORDS)


def pinned_paths(tree: Tree, configured: Iterable[str] = ()) -> set[str]:
    """The pinned memory files of `tree`: by frontmatter, or named in the settings."""
    named = {p.strip().lstrip("./") for p in configured}
    return {rel for rel, data in tree.items()
            if rel != INDEX_NAME and (rel in named or is_pinned_text(rel, data))}


def keep_pinned(base: Tree, staging: Staging, configured: Iterable[str] = ()) -> list[tuple[str, str]]:
    """Put back every pinned file of `base` that the engine changed or removed, and its index line.

    Returns (path, what was put back) for the report.
    """
    staged = staging.tree()
    restored: list[tuple[str, str]] = []
    pinned = pinned_paths(base, configured)
    for rel in sorted(pinned):
        if staged.get(rel) != base[rel]:
            staging.write(rel, base[rel])
            restored.append((rel, "removed" if rel not in staged else "changed"))
    return restored + _put_back_index_lines(base, staged, staging, pinned)


def keep_unread(base: Tree, staging: Staging, unread: Iterable[str]) -> list[tuple[str, str]]:
    """Memory paths dream could not read (a FIFO, a socket …) stay out of every engine's reach.

    The engine never saw them, so it may take their index lines for broken
    pointers: whatever it wrote at those paths goes, and the lines come back.
    Returns (path, what was undone) for the report."""
    staged = staging.tree()
    undone = []
    for rel in sorted(unread):
        if rel in staged:
            staging.remove(rel)
            undone.append((rel, "created"))
    return undone + _put_back_index_lines(base, staged, staging, set(unread))


def _put_back_index_lines(base: Tree, staged: Tree, staging: Staging, kept: set[str]) -> list[tuple[str, str]]:
    lines = _missing_index_lines(base, staged, kept)
    if not lines:
        return []
    index = TextFile.decode(staged.get(INDEX_NAME, b""))
    index.lines += lines
    index.final_newline = True
    staging.write(INDEX_NAME, index.encode())
    return [(INDEX_NAME, f"index line {line!r}") for line in lines]


def _missing_index_lines(base: Tree, staged: Tree, pinned: set[str]) -> list[str]:
    """Base index lines pointing at a pinned file that the staged index no longer points at."""
    def targets(tree: Tree) -> dict[str, str]:
        found: dict[str, str] = {}
        for line in TextFile.decode(tree.get(INDEX_NAME, b"")).lines:
            entry = parse_index_line(line)
            target = resolve_link(INDEX_NAME, entry.target) if entry.is_entry else None
            if target:
                found.setdefault(target, line)
        return found

    now = targets(staged)
    return [line for target, line in targets(base).items() if target in pinned and target not in now]
