"""Re-reads are answered with where the text already is, not with its bytes again.

A model often views a topic file or reads a session that tonight's first
message already shows in full, or makes the same read twice. Each such call
sent the bytes again: every later turn then carried them twice, and a model
that re-read the reference store's sessions and files paid 3-5x the
single-prompt bound (bench/bench_claude_context.py). Here:

- a `read_session` of a session shown in full, and a `view` of a topic file
  shown in full that is unchanged since (its full view is the same as when
  the run began), return where it is: "shown in full in your first message,
  lines a-b";
- a read-only call made before in this conversation segment whose result is
  unchanged returns which turn holds it. A new segment (context.py) drops
  the old results, so it forgets these: a read there gets the bytes.

It also keeps which entries of each session the model has seen (in full in
the first message, or through `read_session`), so that a run stopped at its
budget can say which sessions it did not read (`unread`).
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from anthropic.lib.tools import ToolError

from dream.engines.claude.finish_tool import NAME as FINISH

# The headings tonight's first message gives what it shows in full (prompts/dream.md.j2).
_FILE_HEADING = re.compile(r"^#### `(/memories/[^`]+)`$|^## The current index \(`(/memories/MEMORY\.md)`\)$")
_SESSION_HEADING = re.compile(r"^### `([^`]+)` — .* entries, in full$")
# A read_session result's first line (log_tools.py).
_READ_HEADER = re.compile(r"^Session (\S+) of .*?, entries (\d+)-(\d+) of (\d+):")
EVERYTHING_SHOWN = ("Every file and session your first message shows in full is there, unchanged unless you edited "
                    "it tonight: re-reading one returns only a note like this one.")


def spans(first_text: str) -> tuple[dict[str, tuple[int, int]], dict[str, tuple[int, int]]]:
    """Where the first message shows each topic file and each session in full: its first and last line (1-based)."""
    files: dict[str, tuple[int, int]] = {}
    sessions: dict[str, tuple[int, int]] = {}
    lines = first_text.split("\n")
    for i, line in enumerate(lines):
        found = _FILE_HEADING.match(line) or _SESSION_HEADING.match(line)
        opening = next((j for j in range(i + 1, min(i + 3, len(lines))) if lines[j]), None)
        fence = re.match(r"````+", lines[opening]) if found is not None and opening is not None else None
        if found is None or opening is None or fence is None:
            continue
        end = next((j for j in range(opening + 1, len(lines)) if lines[j] == fence.group(0)), len(lines))
        while end > opening + 2 and not lines[end - 1]:  # the last line shown is the text's own
            end -= 1
        name = next(group for group in found.groups() if group)
        (files if found.re is _FILE_HEADING else sessions)[name] = (opening + 2, end)
    return files, sessions


class Rereads:
    """One run's record of what the conversation carries, to answer a re-read with where it is."""

    def __init__(self, first_text: str, entries: dict[str, int]) -> None:
        self.files, self.sessions = spans(first_text)
        self.entries = entries  # session id -> its number of entries
        self.seen: dict[str, set[int]] = {sid: set(range(1, n + 1)) for sid, n in entries.items()
                                           if sid in self.sessions}
        self._views: dict[str, str] = {}  # a shown file's full view as the run began, by its digest
        self._segment: dict[str, tuple[str, int]] = {}  # a read-only call -> its result's digest and turn
        self.turn = 0
        self._explained = -1  # the turn whose re-read notes already say why they carry no bytes

    def remember_views(self, memory: Any) -> None:
        """The full view of every file shown in full, before any edit: what "unchanged" is measured against."""
        for path in self.files:
            view = _quiet_view(memory, path)
            if view is not None:
                self._views[path] = _digest(view)

    def new_segment(self) -> None:
        """A fresh segment carries none of the earlier results: a read there is answered in full."""
        self._segment.clear()

    def after(self, use: Any, result: Any, tool: Any) -> Any:
        """`result`, or where the conversation already has it: in the first message, shown in full and unchanged,
        or in the result of the same read-only call in this segment, unchanged.

        Asked after the call ran, so a malformed or refused call still gets its own error.
        """
        self._note_entries(use, result)
        if not _reads_only(use):
            return result
        shown = self._in_first_message(use, tool)
        if shown is not None:
            return shown
        key = f"{use.name} {json.dumps(use.input, sort_keys=True, default=str)}"
        digest = _digest(result)
        earlier = self._segment.get(key)
        if earlier is not None and earlier[0] == digest:
            return (f"The same as the result of this call in your turn {earlier[1]} above, unchanged since: "
                    "use it from there.")
        self._segment[key] = (digest, self.turn)
        return result

    def _in_first_message(self, use: Any, tool: Any) -> str | None:
        """Where the first message shows what `use` read, when it shows it in full and it is unchanged."""
        args = use.input if isinstance(use.input, dict) else {}
        if use.name == "read_session" and args.get("session_id") in self.sessions:
            first, last = self.sessions[args["session_id"]]
            return self._note(f"Session {args['session_id']} is shown in full in your first message, lines "
                              f"{first}-{last}, every entry.")
        path = args.get("path")
        if use.name == "memory" and path in self._views:
            view = _quiet_view(tool, path)
            if view is not None and _digest(view) == self._views[path]:
                first, last = self.files[path]
                return self._note(f"{path} is shown in full in your first message, lines {first}-{last}, "
                                  "and is unchanged since: edit it from there.")
        return None

    def _note(self, where: str) -> str:
        """`where`, and once a turn why no bytes follow: every later request carries each note, so it is short."""
        if self._explained == self.turn:
            return where
        self._explained = self.turn
        return f"{where} {EVERYTHING_SHOWN}"

    def unread(self, sessions: list[str]) -> list[str]:
        """The sessions of `sessions` some entry of which the model has not seen."""
        return [sid for sid in sessions if len(self.seen.get(sid, ())) < self.entries.get(sid, 0)]

    def _note_entries(self, use: Any, result: Any) -> None:
        if use.name != "read_session" or not isinstance(result, str):
            return
        header = _READ_HEADER.match(result)
        if header is not None:
            sid, first, last = header.group(1), int(header.group(2)), int(header.group(3))
            self.seen.setdefault(sid, set()).update(range(first, last + 1))


def _reads_only(use: Any) -> bool:
    args = use.input if isinstance(use.input, dict) else {}
    if use.name == "memory":
        return args.get("command") == "view"
    return use.name != FINISH


def _quiet_view(memory: Any, path: str) -> str | None:
    """The full view of `path` through the memory tool, or None when it is refused (not counted as a refusal)."""
    refusals = list(memory.refusals)
    try:
        return str(memory.call({"command": "view", "path": path}))
    except ToolError:
        memory.refusals[:] = refusals
        return None


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()
