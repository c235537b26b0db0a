"""`verified_at: <commit>` in a memory's frontmatter: every claim in it held at that commit.

Housekeeping a run proposes when `lint_verified_at = true` (default off);
like every change it goes through the proposal, never into the store
directly. It is written only when it says something new, so a nightly run
does not rewrite it because HEAD moved on:

- the memory has claims lint can check, and every one held at HEAD;
- the project's tracked files are as HEAD has them (lint read the work
  tree; with uncommitted edits what held is not what HEAD holds);
- the memory records no commit yet, or one git does not know, or one at
  which its claims did not all hold (they changed since: the memory now
  cites something that came later). A recorded commit at which they all
  held stays, however old: it is still true.

It is informational. Lint checks every memory at HEAD whatever it records:
a file deleted after the recorded commit is still found.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import yaml

from dream.config import Settings
from dream.lint.checks import Checker
from dream.lint.claims import Claim, memory_claims
from dream.lint.project import git, open_at, resolve_commit
from dream.store.model import FrontmatterRefused, TextFile, parse_frontmatter
from dream.store.tree import INDEX_NAME, Tree

KEY = "verified_at"


def stamps(project: Path, head: str, verified: list[str], base: Tree, staged: Tree, settings: Settings,
           pinned: set[str]) -> dict[str, tuple[bytes, str]]:
    """memory -> (its staged bytes with `verified_at: head`, why), for each memory that should record it.

    `verified` are the memories of `base` whose claims all held at `head` (lint_store's answer).
    """
    if not settings.lint_verified_at or not head or not _clean(project, settings.lint_seconds):
        return {}
    deadline = time.monotonic() + settings.lint_seconds
    head_full = resolve_commit(project, head, settings.lint_seconds)
    candidates = {rel: claims for rel in verified if (claims := _same_claims(rel, base, staged, pinned))}
    recorded = {rel: _recorded(staged[rel]) for rel in candidates}
    why: dict[str, str] = {}
    past: dict[str, dict[str, list[Claim]]] = {}  # recorded commit -> memories to check there
    for rel, commit in recorded.items():
        if commit is None:
            continue  # frontmatter dream will not edit
        full = resolve_commit(project, commit, settings.lint_seconds) if commit else ""
        if not commit:
            why[rel] = f"every claim in it held at {head}"
        elif not full:
            why[rel] = f"every claim in it held at {head}; the recorded {commit} is not a commit of the project"
        elif full != head_full:
            past.setdefault(commit, {})[rel] = candidates[rel]
    for commit, memories in past.items():
        for rel, held in _held_at(project, commit, memories, deadline).items():
            if held is False:
                why[rel] = f"every claim in it held at {head}; not all did at the recorded {commit}"
    return {rel: (_with_key(staged[rel], head), reason) for rel, reason in sorted(why.items())}


def _clean(project: Path, timeout: float) -> bool:
    status = git(project, ["status", "--porcelain=v1", "--untracked-files=no"], timeout)
    return status is not None and not status.strip()


def _same_claims(rel: str, base: Tree, staged: Tree, pinned: set[str]) -> list[Claim]:
    """The memory's claims, when the engine left them as lint checked them (and the memory is not pinned)."""
    if rel == INDEX_NAME or rel in pinned or rel not in staged or rel not in base:
        return []
    checked = memory_claims(rel, base[rel])
    now = memory_claims(rel, staged[rel])
    return now if _unplaced(now) == _unplaced(checked) else []


def _unplaced(claims: list[Claim]) -> set[tuple]:
    return {(cl.kind, cl.name, cl.major, cl.tool) for cl in claims}


def _recorded(data: bytes) -> str | None:
    """The commit the memory records ('' for none), or None when its frontmatter is not one dream edits."""
    try:
        fm = parse_frontmatter(TextFile.decode(data).lines)
    except (FrontmatterRefused, UnicodeDecodeError):
        return None
    if fm is None or fm.error:
        return None
    value = fm.data.get(KEY)
    return "" if value is None else str(value).strip()


def _held_at(project: Path, commit: str, memories: dict[str, list[Claim]], deadline: float) -> dict[str, bool | None]:
    at = open_at(project, commit, max(deadline - time.monotonic(), 0.1))
    if at is None:
        return {rel: False for rel in memories}
    return Checker(at, deadline).holds(memories)


def _with_key(data: bytes, commit: str) -> bytes:
    """The file with `verified_at: commit` in its frontmatter: the line replaced where it has one, else added last."""
    text = TextFile.decode(data)
    fm = parse_frontmatter(text.lines)
    assert fm is not None  # _recorded said so
    line = f"{KEY}: {_scalar(commit)}"
    for number in range(fm.start + 1, fm.end):
        if text.lines[number].split(":", 1)[0] == KEY:  # a top-level key, not one nested under another
            text.lines[number] = line
            return text.encode()
    text.lines.insert(fm.end, line)
    return text.encode()


NUMBER_LIKE = re.compile(r"\d+(?:e\d+)?")  # `1234567`; `12e4567` is a number to YAML 1.2 readers (not to PyYAML)


def _scalar(commit: str) -> str:
    """A short commit every YAML reader reads back as text: one that looks like a number is quoted."""
    plain = isinstance(yaml.safe_load(commit), str) and not NUMBER_LIKE.fullmatch(commit)
    return commit if plain else f'"{commit}"'
