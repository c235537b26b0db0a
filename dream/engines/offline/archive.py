"""The archive: index lines moved out of MEMORY.md, kept word for word.

Both Consolidate (near-duplicate rules) and Prune (broken pointers, over
budget, shortened lines) move lines here; nothing is ever deleted.
"""

from __future__ import annotations

from dream.engines.offline.orient import (
    ARCHIVE_NAME,
    Workspace,
    editable,
    ensure_frontmatter,
)
from dream.engines.offline.placement import add_line
from dream.engines.offline.text import fit_line
from dream.store.model import new_topic_text, resolve_link
from dream.store.tree import INDEX_NAME

ARCHIVE_DESCRIPTION = "Index entries dream moved out of MEMORY.md (broken pointers, over budget); nothing deleted"
ARCHIVE_HOOK = "entries moved out of this index; look here when a pointer seems missing"


def archive_path(ws: Workspace) -> str:
    """`archive.md`, or another free name if an unusable archive.md exists."""
    topic = ws.store.topics.get(ARCHIVE_NAME)
    if topic is None or editable(topic):
        return ARCHIVE_NAME
    candidate = "dream_archive.md"
    existing = ws.store.topics.get(candidate)
    return candidate if existing is None or editable(existing) else ws.store.free_path("dream_archive")


def archive_lines(ws: Workspace, lines: list[str], reason: str) -> str:
    """Append index lines, verbatim, under a dated heading of the archive file."""
    store = ws.store
    path = archive_path(ws)
    topic = store.topics.get(path)
    if topic is None:
        body = ["# Archived index entries", "",
                "Lines dream moved out of MEMORY.md, word for word, with the reason."]
        topic = store.add_topic(path, new_topic_text("archive", ARCHIVE_DESCRIPTION, "reference", body,
                                                     newline=store.newline))
        ws.change("created", path, "archive for index entries that cannot stay in the index")
    else:
        ensure_frontmatter(ws, topic, "index entries were archived into it")
    topic.append_body([f"## {ws.today.isoformat()} — {reason}", ""] + lines)
    _ensure_archive_indexed(ws, path)
    return path


def _ensure_archive_indexed(ws: Workspace, path: str) -> None:
    for line in ws.store.parsed_index():
        if any(resolve_link(INDEX_NAME, t) == path for t in line.links):
            return
    add_line(ws.store.index_lines, fit_line("Archive", path, ARCHIVE_HOOK), "reference")
    ws.change("indexed", INDEX_NAME, f"index line for the archive file {path}")
