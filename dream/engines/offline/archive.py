"""The archive: index lines moved out of MEMORY.md, kept word for word.

Both Consolidate (near-duplicate rules) and Prune (broken pointers, over
budget, shortened lines) move lines here; nothing is ever deleted. An
archive only grows: past `ROLL_BYTES` it rolls over into dated files
beside it (`archive-2026-12-01.md` …), each linked from it.
"""

from __future__ import annotations

import posixpath

from dream.engines.offline.kinds import ChangeAction
from dream.engines.offline.orient import (
    ARCHIVE_NAME,
    Workspace,
    editable,
    ensure_frontmatter,
)
from dream.engines.offline.placement import add_line
from dream.engines.offline.text import fit_line
from dream.store.model import new_topic_text, resolve_link
from dream.store.tree import INDEX_NAME, ROLLED_ARCHIVE_PREFIX

ARCHIVE_DESCRIPTION = "Index entries dream moved out of MEMORY.md (broken pointers, over budget); nothing deleted"
ARCHIVE_HOOK = "entries moved out of this index; look here when a pointer seems missing"


def archive_path(ws: Workspace) -> str:
    """`archive.md`, or another free name if an unusable archive.md exists or a file reads as it (`Archive.md`)."""
    for candidate in (ARCHIVE_NAME, "dream_archive.md"):
        topic = ws.store.topics.get(candidate)
        if editable(topic) if topic is not None else not ws.store.clashes(candidate):
            return candidate
    return ws.store.free_path("dream_archive")


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
        ws.change(ChangeAction.CREATED, path, "archive for index entries that cannot stay in the index")
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
    ws.change(ChangeAction.INDEXED, INDEX_NAME, f"index line for the archive file {path}")

# ---------------------------------------------------------------- rolling over

# An archive only grows. Past this size its dated sections move to dated files, each under it, well before
# dream's limit for one memory file (MAX_MEMORY_FILE_BYTES): no store is ever refused for its archive.
ROLL_BYTES = 250_000
ROLLED_DESCRIPTION = "Older index entries dream moved out of MEMORY.md, word for word (rolled over from the archive)"


def roll_over(ws: Workspace) -> None:
    """An archive over `ROLL_BYTES` keeps its header; its sections go to dated files, each linked from it.

    The dated files sit beside the archive (links in the moved index lines
    stay true) and are archives too: their links count as pointers, so what
    they hold stays reachable. A section too big for one file is split,
    its heading repeated.
    """
    path = archive_path(ws)
    topic = ws.store.topics.get(path)
    if topic is None or not editable(topic) or _size(topic.text.lines) <= ROLL_BYTES:
        return
    lines = topic.text.lines
    first = next((n for n in range(topic.body_start, len(lines)) if lines[n].startswith("## ")), len(lines))
    head, sections = lines[:first], lines[first:]
    if not sections:
        return  # nothing dream wrote under a dated heading: a person's file, left as it is
    links = []
    for part in _parts(sections, ROLL_BYTES - 1_000):  # room for the dated file's own header
        rolled = ws.store.free_path(f"{ROLLED_ARCHIVE_PREFIX}{ws.today.isoformat()}")
        ws.store.add_topic(rolled, new_topic_text(
            posixpath.splitext(rolled)[0], ROLLED_DESCRIPTION, "reference",
            ["# Archived index entries", "", f"Moved out of [{path}]({path}) on {ws.today.isoformat()}, "
             "word for word: it had outgrown its size.", "", *part], newline=ws.store.newline))
        links.append(f"- [Older entries, rolled over on {ws.today.isoformat()}]({rolled})")
        ws.change(ChangeAction.ARCHIVED, rolled, f"{path} was over {ROLL_BYTES:,} bytes: its older entries rolled over",
                  f"{sum(1 for line in part if line.strip() and not line.startswith('## '))} line(s) moved "
                  f"from {path}, word for word", path)
    while head and not head[-1].strip():
        head.pop()
    lines[:] = [*head, "", *links]
    topic.text.final_newline = True


def _size(lines: list[str]) -> int:
    return sum(len(line.encode("utf-8")) + 1 for line in lines)


def _sections(lines: list[str]) -> list[list[str]]:
    """The lines cut before each `## ` heading."""
    found: list[list[str]] = []
    for line in lines:
        if line.startswith("## ") or not found:
            found.append([])
        found[-1].append(line)
    return found


def _parts(lines: list[str], limit: int) -> list[list[str]]:
    """Whole sections packed in order into parts of at most `limit` bytes; a bigger section split by lines."""
    parts: list[list[str]] = [[]]
    size = 0
    for section in _sections(lines):
        pieces = [section] if _size(section) <= limit else _split(section, limit)
        for piece in pieces:
            piece_size = _size(piece)
            if parts[-1] and size + piece_size > limit:
                parts.append([])
                size = 0
            parts[-1].extend(piece)
            size += piece_size
    return [part for part in parts if part]


def _split(section: list[str], limit: int) -> list[list[str]]:
    heading, rest = section[0], section[1:]
    pieces: list[list[str]] = [[heading]]
    size = _size(pieces[0])
    for line in rest:
        if size + len(line.encode("utf-8")) + 1 > limit and len(pieces[-1]) > 1:
            pieces.append([f"{heading} (continued)", ""])
            size = _size(pieces[-1])
        pieces[-1].append(line)
        size += len(line.encode("utf-8")) + 1
    return pieces
