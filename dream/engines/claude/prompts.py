"""Render the agent's prompts from the Jinja2 templates in `prompts/` (shipped as `dream.prompts`).

`system.md.j2` is the stable part: who the agent is, its tools, the limits,
the four phases, what to save and what not, and the team rules. It depends on
nothing that changes from run to run, so it can sit in the cached prefix.
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
from dream.engines.claude.digest import session_digests
from dream.engines.claude.log_tools import session_title
from dream.engines.claude.memory_tool import MAX_FILE_BYTES, ROOT
from dream.engines.claude.secrets import SecretTable
from dream.store.model import VALID_TYPES
from dream.store.tree import INDEX_NAME, read_tree
from dream.store.validate import MAX_INDEX_BYTES, MAX_INDEX_LINES, MAX_LINE_CHARS

MAX_INDEX_CHARS_SHOWN = 30_000
# Small topic files go into the first message, which every turn reads from the cache, so that the model spends
# its turns on judgement rather than on viewing them one by one (bench/bench_claude_context.py).
MAX_FILE_CHARS_SHOWN = 4_000  # a topic file shown in full is at most this long
MAX_FILES_CHARS_SHOWN = 120_000  # and all of them together (about 30K tokens)

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


def render_system() -> str:
    return _environment().get_template("system.md.j2").render(root=ROOT, limits=LIMITS)


def render_dream(staging: Path, catalog: list[Any], today: date, instructions: str | None,
                 sessions: pl.DataFrame | None = None, since: str | None = None,
                 hide: Callable[[str], str] | None = None,
                 session_chars: int = Settings().first_message_session_chars,
                 files_chars: int = MAX_FILES_CHARS_SHOWN) -> str:
    """Tonight's first message; `sessions` adds each session (in full within `session_chars`, else a digest),
    `since` the diff since the last dream; the small topic files take at most `files_chars` together.

    `hide` (the run's `SecretTable.hide`; a table of its own when not given)
    takes the secrets out of the memory text shown: names, index, diff.
    """
    hide = SecretTable().hide if hide is None else hide
    tree = read_tree(staging)
    files = [
        {"path": hide(f"{ROOT}/{rel}"), "size": len(data),
         "lines": data.count(b"\n") + (0 if data.endswith(b"\n") else 1)}
        for rel, data in sorted(tree.items())
    ]
    shown = _small_topic_files(tree, hide, min(files_chars, MAX_FILES_CHARS_SHOWN))
    index = tree.get(INDEX_NAME)
    full_index = None if index is None else hide(index.decode("utf-8", errors="replace"))
    index_text = None if full_index is None else full_index[:MAX_INDEX_CHARS_SHOWN]
    listed = [
        {
            "id": getattr(s, "session_id", ""),
            "date": getattr(s, "date", ""),
            "title": session_title(s),
            "size": getattr(s, "size", 0),
        }
        for s in catalog
    ]
    return (
        _environment()
        .get_template("dream.md.j2")
        .render(
            root=ROOT,
            today=today.isoformat(),
            files=files,
            index=index_text,
            shown=shown,
            not_shown=len([r for r in tree if r != INDEX_NAME]) - len(shown),
            index_cut=full_index is not None and len(full_index) > MAX_INDEX_CHARS_SHOWN,
            index_size=len(full_index or ""),
            index_shown=MAX_INDEX_CHARS_SHOWN,
            since=None if since is None else hide(since),
            sessions=[] if sessions is None else session_digests(sessions, catalog, session_chars),
            catalog=listed,
            instructions=instructions,
        )
    )


def _small_topic_files(tree: dict[str, bytes], hide: Callable[[str], str], cap: int) -> list[dict[str, str]]:
    """The topic files to show in full: the small ones, smallest first, within `cap` characters together."""
    shown, total = [], 0
    for rel, data in sorted(tree.items(), key=lambda item: (len(item[1]), item[0])):
        text = data.decode("utf-8", errors="replace")
        if rel == INDEX_NAME or len(text) > MAX_FILE_CHARS_SHOWN or total + len(text) > cap:
            continue
        shown.append({"path": hide(f"{ROOT}/{rel}"), "text": hide(text.rstrip("\n"))})
        total += len(text)
    return sorted(shown, key=lambda f: f["path"])


def render(staging: Path, catalog: list[Any], today: date, instructions: str | None,
           sessions: pl.DataFrame | None = None, since: str | None = None) -> Prompts:
    return Prompts(system=render_system(), dream=render_dream(staging, catalog, today, instructions, sessions, since))
