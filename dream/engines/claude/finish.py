"""The deterministic finish: after the model, the offline engine's Prune runs on the staged tree.

The model may stop with one index line too long, a pointer to a file it
merged away, or an index that was over budget before it started and that it
never touched. Validation would then throw the whole paid run away. Instead,
the same Prune the offline engine uses repairs or archives broken pointers,
indexes orphans, shortens long lines and brings the index within budget.

Before that, a file the model created that looks like a note to itself is
dropped, and the report lists it: the API's memory-tool protocol invites
progress and status notes, and a note is not a memory. A created file with a
memory frontmatter is a memory, whether the summary names it or not (a wrong
type is validation's to report); a note is a file with no frontmatter that the
summary does not name, or one whose name or description says progress,
status, to-do or scratch.

The engine calls the two steps around its own account of the model's
changes (`drop_notes`, then the model's changes, then `prune_staged`),
so a dropped note is not reported as the model's, and the finish's changes
are listed apart from the model's in the report.
"""

from __future__ import annotations

import posixpath
import re

from dream.engines.base import Change, EngineInput
from dream.engines.offline import orient, prune
from dream.errors import BadInput
from dream.store.model import TopicFile
from dream.store.tree import INDEX_NAME, Tree

# What a note to self calls itself (in its name or description), after the memory tool's own protocol.
_NOTE_WORDS = re.compile(r"\b(progress|status|to-?do|scratch|work ?log|next steps|notes? to self)\b", re.IGNORECASE)


def prune_staged(inp: EngineInput, base: Tree) -> list[Change]:
    """The offline engine's Prune on the staged tree; its changes and notes.

    `base` is the staged tree before the model's turn: a file the model
    deleted is gone on purpose, so Prune archives a line still pointing to it
    and never makes the file again from that line.
    """
    ws, before = orient.load(inp.staging, inp.settings, inp.today, inp)
    ws.store.removed |= set(base) - set(before)
    prune.prune(ws)
    orient.save(ws, inp.staging, before)
    return ws.changes + [Change("noted", "", note, source="finish") for note in ws.notes]


def drop_notes(inp: EngineInput, base: Tree, summary: str) -> list[Change]:
    """Delete the files created in this run that are notes to self, not memories; each one listed.

    A file without frontmatter that the summary names stays: it was meant as a
    memory, and validation (then the corrective turn) asks for its frontmatter.
    """
    dropped = []
    staged = inp.staging.tree()
    for path in sorted(set(staged) - set(base)):
        named = path in summary or posixpath.basename(path) in summary
        why = _note_reason(path, staged[path], named)
        if why is None:
            continue
        inp.staging.remove(path)
        dropped.append(Change("dropped", path, f"created by the model but {why}: a note to self, not a memory"))
    return dropped


def _note_reason(path: str, data: bytes, named: bool) -> str | None:
    """Why a created file is a note to self, or None when it is a memory (or meant as one)."""
    if path == INDEX_NAME:
        return None
    try:
        topic = TopicFile.parse(path, data)
    except BadInput:
        return "its frontmatter cannot be read"
    if topic.frontmatter is None:
        return None if named else "it has no memory frontmatter and the summary does not name it"
    said = f"{topic.name} {topic.meta('description') or ''}"
    if _NOTE_WORDS.search(said):
        return "its frontmatter says it is a progress, status or to-do note"
    return None
