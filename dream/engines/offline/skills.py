"""Codex's skills (``skills/<name>/SKILL.md``) beside its handbook (``MEMORY.md``), for the offline engine.

Codex's phase 2 keeps procedures in skills and durable notes in the handbook, and may write the same line in
both. Which of the two should keep it is a judgement about the agent's routing, not text: a handbook bullet
that repeats a skill's line (at the duplicate threshold) is listed for a person with both places, and both
stay as they are.
"""

from __future__ import annotations

import re

from rapidfuzz import fuzz, process

from dream.engines.offline.orient import Workspace, memories
from dream.engines.offline.similarity import normalize, says_something
from dream.engines.offline.text import shorten
from dream.store.layouts import LayoutKind, named

SKILLS = "skills/"
_STEP_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


def note_repeats(ws: Workspace) -> None:
    """List each handbook bullet that repeats a line of a skill, with both places."""
    if named(ws.settings.layout).kind != LayoutKind.CODEX:
        return
    lines = _skill_lines(ws)
    if not lines:
        return
    norms = [norm for _, _, norm in lines]
    for memory in memories(ws.store):
        if memory.kind != "rule" or not says_something(memory.text):
            continue
        found = process.extractOne(normalize(memory.text), norms, scorer=fuzz.ratio,
                                   score_cutoff=ws.settings.similarity_threshold)
        if found is not None:
            path, number, _ = lines[found[2]]
            ws.ask(f"{memory.label} (“{shorten(memory.text, 80)}”) repeats {path} line {number}; both kept: "
                   "a person decides whether the handbook or the skill keeps it, and removes the other")


def _skill_lines(ws: Workspace) -> list[tuple[str, int, str]]:
    """(path, line number, normalized text) of every statement of every skill."""
    found = []
    for path, topic in sorted(ws.store.topics.items()):
        if not path.startswith(SKILLS):
            continue
        for number, line in enumerate(topic.body_lines, topic.body_start + 1):
            bare = _STEP_MARK.sub("", line).strip()
            if bare and not bare.startswith("#") and says_something(bare):
                found.append((path, number, normalize(bare)))
    return found
