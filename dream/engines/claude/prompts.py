"""Render the agent's prompts from the Jinja2 templates in `prompts/` (shipped as `dream.prompts`).

`system.md.j2` is the stable part: who the agent is, its tools, the limits,
the four phases, what to save and what not, and the team rules. It depends on
nothing that changes from run to run (only on the store's layout: which file
is the index and its budget, which are memories, which evidence is read only),
so it can sit in the cached prefix.
`dream.md.j2` is tonight's part: the date, the store as it is, what changed
since the last dream, a digest per session and the user's own instructions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import jinja2
import polars as pl

from dream.config import Settings
from dream.engines.instructions import Instruction
from dream.engines.claude import tokens
from dream.engines.claude.budget import Room
from dream.engines.claude.digest import SessionPart, session_digests
from dream.engines.claude.log_tools import session_title
from dream.engines.claude.memory_tool import MAX_FILE_BYTES, ROOT
from dream.engines.claude.secrets import SecretTable
from dream.store.layouts import CLAUDE_CODE, StoreLayout, index_tokens
from dream.store.model import VALID_TYPES
from dream.store.tree import INDEX_NAME, read_tree
from dream.store.validate import MAX_INDEX_BYTES, MAX_INDEX_LINES, MAX_LINE_CHARS

MAX_INDEX_CHARS_SHOWN = 30_000
# Small topic files go into the first message, which every turn reads from the cache, so that the model spends
# its turns on judgement rather than on viewing them one by one (bench/bench_claude_context.py).
MAX_FILE_CHARS_SHOWN = 4_000  # a topic file shown in full is at most this long
MAX_FILES_CHARS_SHOWN = 120_000  # and all of them together (about 30K tokens)
LISTING_LINE_TOKENS = 12  # a listing line's size, line count and punctuation, beside its path

# The same limits the validation applies to the staged tree.
LIMITS = {
    "index_lines": MAX_INDEX_LINES,
    "index_bytes": MAX_INDEX_BYTES,
    "line_chars": MAX_LINE_CHARS,
    "file_kb": MAX_FILE_BYTES // 1024,
    "types": list(VALID_TYPES),
}


@dataclass
class Prompts:
    system: str
    dream: str


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("dream.prompts", "."),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )


def layout_facts(layout: StoreLayout) -> dict[str, Any]:
    """What the prompts say of a layout: its kind, its index and the index's budget, its read-only evidence."""
    return {"kind": layout.kind.value, "index": layout.index, "budget_tokens": layout.index_budget_tokens,
            "evidence": sorted(layout.evidence)}


def render_system(layout: StoreLayout = CLAUDE_CODE) -> str:
    return _environment().get_template("system.md.j2").render(root=ROOT, limits=LIMITS, layout=layout_facts(layout))


def render_dream(staging: Path, catalog: list[Any], today: date, instructions: str | None,
                 sessions: pl.DataFrame | None = None, since: str | None = None,
                 hide: Callable[[str], str] | None = None, room: Room | None = None,
                 part: SessionPart | None = None, layout: StoreLayout = CLAUDE_CODE) -> str:
    """Tonight's first message; `sessions` adds each session (in full or as a digest, within `room`), or `part`
    gives them already chosen; `since` the diff since the last dream. Every part of it stays within `room`.

    `hide` (the run's `SecretTable.hide`; a table of its own when not given)
    takes the secrets out of the memory text shown: names, index, diff.
    """
    hide = SecretTable().hide if hide is None else hide
    room = Room.for_settings(Settings()) if room is None else room
    if part is None:
        part = session_digests(sessions, catalog, room.sessions, room.session_chars) if sessions is not None \
            else SessionPart([], [])
    tree = read_tree(staging)
    files = _listing(tree, hide, room.listing)
    shown = _small_topic_files(tree, hide, MAX_FILES_CHARS_SHOWN, room.files, layout.index)
    index = tree.get(layout.index)
    full_index = None if index is None else hide(index.decode("utf-8", errors="replace"))
    index_chars = 0 if full_index is None else min(MAX_INDEX_CHARS_SHOWN, tokens.chars_within(full_index, room.index))
    index_text = None if full_index is None else full_index[:index_chars]
    in_part = {d.id for d in part.digests}
    listed = [
        {
            "id": getattr(s, "session_id", ""),
            "date": getattr(s, "date", ""),
            "title": session_title(s),
            "size": getattr(s, "size", 0),
        }
        for s in catalog
        if sessions is None or str(getattr(s, "session_id", "")) in in_part
    ]
    return (
        _environment()
        .get_template("dream.md.j2")
        .render(
            root=ROOT,
            today=today.isoformat(),
            files=files,
            files_more=len(tree) - len(files),
            index=index_text,
            shown=shown,
            not_shown=len([r for r in tree if r != layout.index]) - len(shown),
            index_cut=full_index is not None and len(full_index) > index_chars,
            index_size=len(full_index or ""),
            index_shown=index_chars,
            since=None if since is None else hide(since),
            sessions=part.digests,
            deferred=len(part.deferred),
            catalog=listed,
            instructions=instructions,
            layout=layout_facts(layout),
            index_tokens=None if index is None else index_tokens(index),
        )
    )


def _listing(tree: dict[str, bytes], hide: Callable[[str], str], room: int) -> list[dict[str, Any]]:
    """The memory files, in order, while their lines fit in `room` tokens; the rest is one `view` away."""
    files: list[dict[str, Any]] = []
    used = 0
    for rel, data in sorted(tree.items()):
        path = hide(f"{ROOT}/{rel}")
        entry = {"path": path, "size": len(data), "lines": data.count(b"\n") + (0 if data.endswith(b"\n") else 1)}
        used += tokens.estimate(path) + LISTING_LINE_TOKENS
        if used > room and files:
            break
        files.append(entry)
    return files


def _small_topic_files(tree: dict[str, bytes], hide: Callable[[str], str], cap: int,
                       room: int = 1 << 40, index_name: str = INDEX_NAME) -> list[dict[str, str]]:
    """The topic files to show in full: the small ones, smallest first, within `cap` characters and `room`
    tokens together."""
    shown, total, used = [], 0, 0
    for rel, data in sorted(tree.items(), key=lambda item: (len(item[1]), item[0])):
        text = data.decode("utf-8", errors="replace")
        if rel == index_name or len(text) > MAX_FILE_CHARS_SHOWN or total + len(text) > cap:
            continue
        cost = tokens.estimate(text)
        if used + cost > room:
            break
        shown.append({"path": hide(f"{ROOT}/{rel}"), "text": hide(text.rstrip("\n"))})
        total, used = total + len(text), used + cost
    return sorted(shown, key=lambda f: f["path"])


def render(staging: Path, catalog: list[Any], today: date, instructions: str | None,
           sessions: pl.DataFrame | None = None, since: str | None = None,
           layout: StoreLayout = CLAUDE_CODE) -> Prompts:
    return Prompts(system=render_system(layout),
                   dream=render_dream(staging, catalog, today, instructions, sessions, since, layout=layout))


def instruction_section(rules: list[Instruction], room_tokens: int) -> str:
    """The section of the Claude engine's first message (prompts/instruction_files.md.j2); '' with no lines.

    The lines go file by file, numbered as in the file, and stop at `room_tokens` (the estimate the first
    message is budgeted with, dream/engines/claude/budget.py)."""
    if not rules:
        return ""
    lines: list[str] = []
    current = ""
    for rule in rules:
        if rule.file != current:
            lines.append(f"{rule.file}:")
            current = rule.file
        lines.append(f"  {rule.line}: {rule.text}")
    text = "\n".join(lines)
    cut = tokens.chars_within(text, room_tokens)
    if cut < len(text):
        text = text[:cut].rsplit("\n", 1)[0] + "\n  … (more lines, not shown for room)"
    files = list(dict.fromkeys(rule.file for rule in rules))
    return _environment().get_template("instruction_files.md.j2").render(files=files, lines=text)
